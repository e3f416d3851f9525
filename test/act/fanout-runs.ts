// The README's fan-out workflow (plan → a matrix of jobs → report) over two clusters, on the layout
// of fluxcd/flux2-kustomize-helm-example (trees.ts fanout()): every Kustomization, then only what a
// push touched with a Kustomization file deleted, a pull request's preview, a push no build reads,
// and a push that breaks the first Kustomization of the dependsOn chain.
import { readFileSync } from 'node:fs';
import { Origin } from './act.ts';
import { kubeFrom, type Kube } from './kube.ts';
import { check, jobsAre, pullRequest, pushEvent, ZERO, type Checked, type Env } from './readme-runs.ts';
import { fanout } from './trees.ts';

type Data = Record<string, string> | undefined;
const ISSUER = '/apis/kh-example.parity.example.com/v1/clusterissuers/kh-example-letsencrypt';
const ACME: Record<string, string> = {
  staging: 'https://acme-staging-v02.api.letsencrypt.org/directory',
  production: 'https://acme-v02.api.letsencrypt.org/directory',
};

/** What push `image` of podinfo left in a cluster `c`: one problem per difference. */
async function applied(k: Kube, c: string, image: string): Promise<string[]> {
  const problems: string[] = [];
  const cm = await k.get('/api/v1/namespaces/kh-example/configmaps/podinfo-settings');
  const data = cm?.['data'] as Data;
  check(
    problems,
    data?.['cluster'] === c && data['team'] === 'podinfo',
    `${c}: podinfo-settings says ${JSON.stringify(data)} (vars, postBuild)`,
  );
  const spec = JSON.stringify((await k.get('/apis/apps/v1/namespaces/kh-example/deployments/podinfo'))?.['spec']);
  check(
    problems,
    spec.includes(`podinfo:${image}`) && spec.includes(`"value":"${c}"`),
    `${c}: deployment kh-example/podinfo does not run ${image} with its overlay's message`,
  );
  const issuer = JSON.stringify((await k.get(ISSUER))?.['spec']);
  check(
    problems,
    issuer.includes(`"server":"${ACME[c]}"`),
    `${c}: the ClusterIssuer (a CRD applied by another job) is not patched to ${ACME[c]}`,
  );
  return problems;
}

export async function fanoutRuns(
  env: Env,
  wf: { yaml: string; at: string },
  done: (c: Checked) => void,
): Promise<void> {
  const [one, two] = env.clusters;
  if (!one || !two) throw new Error('two clusters are needed');
  const kubes: [Kube, string][] = [
    [kubeFrom(one.kubeconfig), 'staging'],
    [kubeFrom(two.kubeconfig), 'production'],
  ];
  const fan = new Origin(env.root, 'kr-test/fanout');
  // Named as GitHub stores them (upper case); the workflow's secrets[format('KUBECONFIG_{0}', 'staging')]
  // finds them because an expression's property names are not case-sensitive.
  const secrets = (w: string) => ({
    GITHUB_TOKEN: env.tokenFor(w),
    KUBECONFIG_STAGING: readFileSync(one.kubeconfig, 'utf8'),
    KUBECONFIG_PRODUCTION: readFileSync(two.kubeconfig, 'utf8'),
  });
  const vars = { VARS_STAGING: 'cluster_name: staging', VARS_PRODUCTION: 'cluster_name: production' };
  const tree = fanout();
  const release = tree['apps/base/podinfo/release.yaml']!;
  const push = (before: string, after: string) =>
    env.act({
      workflow: wf.yaml,
      event: 'push',
      payload: pushEvent('kr-test/fanout', before, after),
      origin: fan,
      sha: after,
      branch: 'main',
      runId: env.nextRunId(),
      secrets: secrets(wf.yaml),
      vars,
    });

  const f1 = fan.commit(tree, 'staging and production');
  const f2 = fan.commit(
    { 'apps/base/podinfo/release.yaml': release.replace('6.9.2', '6.9.3'), 'clusters/staging/monitoring.yaml': null },
    'podinfo 6.9.3; monitoring leaves staging',
  );
  for (const p of [
    { before: ZERO, after: f1, what: 'push 1 (all)', jobs: 8, image: '6.9.2' },
    { before: f1, after: f2, what: 'push 2 (affected only, a Kustomization file deleted)', jobs: 3, image: '6.9.3' },
  ]) {
    const run = await push(p.before, p.after);
    const problems = jobsAre(run, { plan: 1, reconcile: p.jobs, report: 1 });
    for (const [k, c] of kubes) problems.push(...(await applied(k, c, p.image)));
    const checks = env.fake.checkRuns.filter((c) => c.head_sha === p.after);
    check(
      problems,
      checks.length === 1 && checks[0]?.conclusion === 'success',
      `check runs on the pushed commit: ${checks.map((c) => c.conclusion).join(', ') || 'none'}, expected the report job's one, success`,
    );
    if (p.after === f2) {
      const report = run.jobs.find((j) => j.id === 'report')?.output.join('\n') ?? '';
      check(
        problems,
        /flux-system\/monitoring \(removed from the repository\)/.test(report),
        "the report job's output does not mention the removed Kustomization monitoring",
      );
    }
    done({ what: `${wf.at} (fan-out) ${p.what}`, run, problems });
  }
  {
    const issuers = fanout()['infrastructure/configs/cluster-issuers.yaml']!;
    const head = fan.commit(
      {
        'infrastructure/configs/cluster-issuers.yaml': issuers.replace(
          'fluxcdbot@users.noreply.github.com',
          'platform@example.com',
        ),
      },
      'issuer email',
      'feature-8',
      f2,
    );
    const pr = pullRequest(env, fan, 8, head, f2);
    const run = await env.act({
      workflow: wf.yaml,
      event: 'pull_request',
      payload: pr.payload,
      origin: fan,
      sha: pr.merge,
      runId: env.nextRunId(),
      secrets: secrets(wf.yaml),
      vars,
    });
    // infra-configs and its dependent apps, in both clusters.
    const problems = jobsAre(run, { plan: 1, reconcile: 4, report: 1 });
    const comments = env.fake.comments.filter((c) => c.repo === 'fanout' && c.issue_number === 8);
    check(
      problems,
      comments.length === 1,
      `${comments.length} comments on pull request 8, expected the report job's one`,
    );
    for (const [, c] of kubes)
      check(problems, comments[0]?.body.includes(c) === true, `the merged comment does not name cluster ${c}`);
    const issuer = JSON.stringify(await kubes[1]?.[0].get(ISSUER));
    check(problems, !issuer.includes('platform@example.com'), 'the preview changed the cluster');
    done({ what: `${wf.at} (fan-out) pull request preview (affected only)`, run, problems });
  }
  // A push that no build reads: the plan's count is 0, so reconcile and report are skipped.
  const f3 = fan.commit({ 'README.md': '# fleet\n' }, 'readme');
  {
    const run = await push(f2, f3);
    const problems: string[] = [];
    const outcomes = (id: string) =>
      run.jobs
        .filter((j) => j.id === id)
        .map((j) => j.outcome)
        .join();
    check(problems, outcomes('plan') === 'success', `plan: ${outcomes('plan')}`);
    for (const id of ['reconcile', 'report'])
      check(problems, outcomes(id) === 'skipped', `${id}: ${outcomes(id)}, expected skipped`);
    const checks = env.fake.checkRuns.filter((c) => c.head_sha === f3);
    check(problems, checks.length === 0, `${checks.length} check runs on a commit no Kustomization reads`);
    done({ what: `${wf.at} (fan-out) push 3 (nothing affected)`, run, problems });
  }
  // A push that breaks infra-controllers' build: its two jobs fail, the four of its dependents
  // (infra-configs, apps) skip and fail, and the report's check run fails.
  const f4 = fan.commit(
    { 'infrastructure/controllers/ingress-nginx.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata: {name: [x\n' },
    'broken controllers',
  );
  {
    const run = await push(f3, f4);
    const problems = jobsAre(run, { plan: 1 });
    const jobs = (name: string) =>
      run.jobs.filter((j) => j.id === 'reconcile' && j.matrix['kustomization'] === `flux-system/${name}`);
    const controllers = jobs('infra-controllers');
    check(
      problems,
      controllers.length === 2 && controllers.every((j) => j.outcome === 'failure'),
      `infra-controllers jobs: ${controllers.map((j) => j.outcome).join(', ')}, expected two failures`,
    );
    for (const name of ['infra-configs', 'apps']) {
      const of = jobs(name);
      const skipped = of.filter(
        (j) => j.outcome === 'failure' && j.output.some((l) => l.startsWith('Skipped Kustomization')),
      );
      check(
        problems,
        of.length === 2 && skipped.length === 2,
        `${name} jobs: ${of.length}, ${skipped.length} saying they skip`,
      );
    }
    const report = run.jobs
      .filter((j) => j.id === 'report')
      .map((j) => j.outcome)
      .join();
    check(problems, report === 'failure', `report: ${report}, expected failure`);
    const checks = env.fake.checkRuns.filter((c) => c.head_sha === f4);
    check(
      problems,
      checks.length === 1 && checks[0]?.conclusion === 'failure',
      `check runs: ${checks.map((c) => c.conclusion).join(', ') || 'none'}, expected one failure`,
    );
    done({ what: `${wf.at} (fan-out) push 4 (the first of the dependsOn chain broken)`, run, problems });
  }
}
