// The README's four workflows, each run under act exactly as the README prints it (only the action
// reference and the third-party actions are mapped to local copies), against test clusters and the
// GitHub emulator: apply on push, preview on a pull request (twice: the comment is sticky), drift on a
// schedule without and with drift-correction, and the fan-out over two clusters (all, then only what a
// push touched with a Kustomization file deleted, then a pull request's preview).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FakeGitHub } from '../../__tests__/helpers/github-server.ts';
import { workflowBlocks } from '../../scripts/workflows.mjs';
import { olderNode, Origin, REPO, type ActRun, type RunOptions } from './act.ts';
import { kubeFrom, type Kube } from './kube.ts';
import { fanoutRuns } from './fanout-runs.ts';
import { clusterVars, fleet, trees } from './trees.ts';

export interface Checked {
  /** What ran: the workflow (where it is printed) and the event. */
  what: string;
  run: ActRun;
  problems: string[];
}

export interface Env {
  root: string;
  fake: FakeGitHub;
  /** A value no run may print (a secret the runs put in a cluster). */
  neverLogged(value: string): void;
  /** Registers a token with the workflow's permissions, as GitHub makes GITHUB_TOKEN. */
  tokenFor(workflow: string): string;
  /** The two test clusters, by their kubeconfig files. */
  clusters: { kubeconfig: string }[];
  /** Runs a workflow under act against this run's GitHub emulator, artifact store and action copy. */
  act(o: RunOptions): Promise<ActRun>;
  nextRunId(): number;
}

export const ZERO = '0000000000000000000000000000000000000000';
/** A Secret value a pull request adds: shown as changed, never as itself. */
const PR_SECRET = 'pr-4b1d7c0e-literal';

/** The README's workflow blocks, by what they do. */
export function readmeWorkflows(): Record<'deploy' | 'preview' | 'drift' | 'fanout', { yaml: string; at: string }> {
  const blocks = workflowBlocks(readFileSync(join(REPO, 'README.md'), 'utf8'));
  const find = (what: string, test: (y: string) => boolean) => {
    const b = blocks.find((x) => test(x.yaml));
    if (!b) throw new Error(`README.md prints no ${what} workflow any more: update test/act/readme-runs.ts`);
    return { yaml: b.yaml, at: `README.md:${b.line}` };
  };
  return {
    deploy: find('deploy', (y) => /mode: apply/.test(y) && !/mode: plan/.test(y)),
    preview: find('preview', (y) => /mode: preview/.test(y)),
    drift: find('drift', (y) => /mode: drift/.test(y)),
    fanout: find('fan-out', (y) => /mode: plan/.test(y)),
  };
}

export const repoOf = (full: string) => {
  const [owner = '', name = ''] = full.split('/');
  return { full_name: full, name, owner: { login: owner }, default_branch: 'main' };
};

export const pushEvent = (full: string, before: string, after: string) => ({
  ref: 'refs/heads/main',
  before,
  after,
  repository: repoOf(full),
  head_commit: { id: after },
  pusher: { name: 'dev' },
});

export const prEvent = (full: string, n: number, head: string, base: string, headRepo = full) => ({
  action: 'synchronize',
  number: n,
  pull_request: {
    number: n,
    head: { sha: head, ref: `feature-${n}`, repo: { full_name: headRepo } },
    base: { sha: base, ref: 'main', repo: { full_name: full } },
    labels: [],
  },
  repository: repoOf(full),
});

/**
 * A pull request as GitHub keeps it: its refs in the origin (refs/pull/N/head and the test merge),
 * the pull in the emulator (its head moved on by a later push), and the event a run of it gets.
 */
export function pullRequest(
  env: Env,
  origin: Origin,
  n: number,
  head: string,
  base: string,
  headRepo = origin.fullName,
) {
  const merge = origin.pullRefs(n, head, base);
  const [owner = '', repo = ''] = origin.fullName.split('/');
  const pull = env.fake.pulls.find((p) => p.owner === owner && p.repo === repo && p.number === n);
  if (pull) pull.head.sha = head;
  else
    env.fake.addPull({
      owner,
      repo,
      number: n,
      head: { repo: headRepo, ref: `feature-${n}`, sha: head, user: headRepo.split('/')[0] ?? '' },
      base: { ref: 'main', sha: base },
    });
  return { merge, payload: prEvent(origin.fullName, n, head, base, headRepo) };
}

/** Problems of a run whose jobs should all have ended in `outcome` (`expect` job id → runs, undefined: any number). */
export function jobsAre(run: ActRun, expect: Record<string, number | undefined>, outcome = 'success'): string[] {
  const problems: string[] = [];
  for (const [id, n] of Object.entries(expect)) {
    const of = run.jobs.filter((j) => j.id === id);
    if (n !== undefined && of.length !== n) problems.push(`job ${id}: ${of.length} runs, expected ${n}`);
    for (const j of of.filter((x) => x.outcome !== outcome)) {
      const failed = j.steps.filter((s) => s.result === 'failure').map((s) => s.step);
      problems.push(
        `job ${id} ${JSON.stringify(j.matrix)}: ${j.outcome}${failed.length ? ` at ${failed.join(', ')}` : ''}`,
      );
    }
  }
  return problems;
}

export const check = (problems: string[], ok: boolean, what: string) => {
  if (!ok) problems.push(what);
};

/** The cluster variables in flux-system, as a platform team keeps them beside Flux. */
export async function clusterVarsIn(k: Kube): Promise<void> {
  await k.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'flux-system' } });
  await k.create('/api/v1/namespaces/flux-system/configmaps', clusterVars.configMap);
  await k.create('/api/v1/namespaces/flux-system/secrets', clusterVars.secret);
}

export async function readmeRuns(env: Env, done: (c: Checked) => void): Promise<void> {
  const wf = readmeWorkflows();
  const [one, two] = env.clusters;
  if (!one || !two) throw new Error('two clusters are needed');
  const kube1 = kubeFrom(one.kubeconfig);
  const kube2 = kubeFrom(two.kubeconfig);
  const kc1 = readFileSync(one.kubeconfig, 'utf8');

  // --- deploy, preview, drift: kr-test/fleet on the first cluster.
  for (const k of [kube1, kube2]) await clusterVarsIn(k);
  env.neverLogged(clusterVars.secret.stringData.api_token);
  env.neverLogged(PR_SECRET);
  const fleetRepo = new Origin(env.root, 'kr-test/fleet');
  const c1 = fleetRepo.commit(fleet(), 'platform and web');
  /** The README's deploy workflow on a push from `before` to `after`, with `node` first on PATH. */
  const deploy = (before: string, after: string, node?: string) =>
    env.act({
      workflow: wf.deploy.yaml,
      event: 'push',
      payload: pushEvent('kr-test/fleet', before, after),
      origin: fleetRepo,
      sha: after,
      branch: 'main',
      runId: env.nextRunId(),
      secrets: { GITHUB_TOKEN: env.tokenFor(wf.deploy.yaml), KUBECONFIG: kc1 },
      ...(node ? { node } : {}),
    });
  {
    const run = await deploy(ZERO, c1);
    const problems = jobsAre(run, { apply: 1 });
    const web = await kube1.get('/apis/apps/v1/namespaces/web/deployments/web');
    check(
      problems,
      (web?.['spec'] as { replicas?: number } | undefined)?.replicas === 2,
      'deployment web/web: not applied with 2 replicas',
    );
    const secret = await kube1.get('/api/v1/namespaces/web/secrets');
    const token = JSON.stringify(secret).includes(
      Buffer.from(clusterVars.secret.stringData.api_token).toString('base64'),
    );
    check(problems, token, 'no Secret in web has the substituted API_TOKEN (postBuild.substituteFrom)');
    const checks = env.fake.checkRuns.filter((c) => c.head_sha === c1);
    check(
      problems,
      checks.length === 1 && checks[0]?.conclusion === 'success',
      `check runs on the pushed commit: ${checks.map((c) => c.conclusion).join(', ') || 'none'}, expected one success`,
    );
    check(
      problems,
      run.jobs.some((j) => j.output.some((l) => l.includes('saved to the Actions cache'))),
      'the build-cache was not saved to the Actions cache',
    );
    done({ what: `${wf.deploy.at} (deploy) on push`, run, problems });
  }
  // The same commit again (a re-run): the build cache comes back from the Actions cache (act's own
  // cache server) and kustomize runs for nothing; nothing new is kept, so nothing is saved.
  {
    const run = await deploy(ZERO, c1);
    const problems = jobsAre(run, { apply: 1 });
    const out = run.jobs.flatMap((j) => j.output).join('\n');
    check(
      problems,
      /kept build\(s\) restored from the Actions cache/.test(out),
      'no build-cache restored from the Actions cache',
    );
    check(
      problems,
      out.includes("kustomize's output kept in build-cache for exactly this input was used: kustomize did not run"),
      'web ran kustomize again: its kept build was not used',
    );
    check(problems, !/saved to the Actions cache/.test(out), 'a run that kept nothing new saved the build-cache');
    check(problems, !/::warning|Warning:/.test(out), 'a warning (the Actions cache failed)');
    done({ what: `${wf.deploy.at} (deploy) on push, run again at the same commit (build cache)`, run, problems });
  }
  // A runner whose Node is older than the action's node24 (a self-hosted one, say): one line says so.
  const old = olderNode();
  if (old) {
    const run = await deploy(ZERO, c1, old);
    const problems = jobsAre(run, { apply: 1 }, 'failure');
    const said = run.log.includes('needs Node.js 24 or newer; this is Node.js');
    check(problems, said, 'no line saying which Node the action needs and which it found');
    check(problems, !run.log.includes('SyntaxError'), 'the action died on a SyntaxError');
    done({ what: `${wf.deploy.at} (deploy) on push, on a runner whose node is ${old}`, run, problems });
  }

  for (const [round, change] of [
    [
      1,
      { 'platform/settings.yaml': trees.configMap('platform-settings', 'web', { tier: 'production', owner: 'sre' }) },
    ],
    [
      2,
      {
        'apps/web/production/kustomization.yaml': fleet()['apps/web/production/kustomization.yaml']!.replace(
          'GREETING=hello',
          'GREETING=bonjour',
        ),
        // A Secret the preview shows changed: its data (the cluster's substituted token beside it
        // too) never as values.
        'apps/web/production/secret.yaml': `${fleet()['apps/web/production/secret.yaml']!}  EXTRA: "${PR_SECRET}"\n`,
      },
    ],
  ] as const) {
    const head = fleetRepo.commit(change, `pull request 7, push ${round}`, 'feature-7', round === 1 ? c1 : undefined);
    const pr = pullRequest(env, fleetRepo, 7, head, c1);
    const run = await env.act({
      workflow: wf.preview.yaml,
      event: 'pull_request',
      payload: pr.payload,
      origin: fleetRepo,
      sha: pr.merge,
      runId: env.nextRunId(),
      secrets: { GITHUB_TOKEN: env.tokenFor(wf.preview.yaml), KUBECONFIG: kc1 },
    });
    const problems = jobsAre(run, { preview: 1 });
    const comments = env.fake.comments.filter((c) => c.repo === 'fleet' && c.issue_number === 7);
    check(
      problems,
      comments.length === 1,
      `${comments.length} comments on pull request 7, expected one sticky comment`,
    );
    const names = round === 1 ? 'platform-settings' : 'web-api';
    check(problems, comments[0]?.body.includes(names) === true, `the comment does not name ${names}`);
    const checks = env.fake.checkRuns.filter((c) => c.head_sha === head);
    check(
      problems,
      checks.length === 1 && checks[0]?.status === 'completed',
      `check runs on the pull request's head: ${checks.length}, expected one, completed`,
    );
    const live = await kube1.get('/api/v1/namespaces/web/configmaps/platform-settings');
    check(
      problems,
      (live?.['data'] as Record<string, string> | undefined)?.['owner'] === 'platform',
      'the preview changed the cluster',
    );
    done({ what: `${wf.preview.at} (preview) on pull_request, push ${round}`, run, problems });
  }

  // Drift: someone edits a live object; the README's drift workflow without, then with, correction.
  await kube1.patch('/api/v1/namespaces/web/configmaps/platform-settings', { data: { owner: 'someone' } });
  for (const correct of [false, true]) {
    const workflow = correct ? wf.drift.yaml : wf.drift.yaml.replace(/^ *drift-correction: true.*\n/m, '');
    const run = await env.act({
      workflow,
      event: 'schedule',
      payload: { schedule: '17 * * * *', repository: repoOf('kr-test/fleet') },
      origin: fleetRepo,
      sha: c1,
      branch: 'main',
      runId: env.nextRunId(),
      secrets: { GITHUB_TOKEN: env.tokenFor(workflow), KUBECONFIG: kc1 },
    });
    const problems = jobsAre(run, { drift: 1 }, correct ? 'success' : 'failure');
    const job = run.jobs.find((j) => j.id === 'drift');
    const follow = job?.steps.find((s) => s.stage === 'Main' && s.step.includes('::warning::drift'));
    check(problems, follow?.result === 'success', `the follow-up step ${follow ? follow.result : 'did not run'}`);
    const live = await kube1.get('/api/v1/namespaces/web/configmaps/platform-settings');
    const owner = (live?.['data'] as Record<string, string> | undefined)?.['owner'];
    check(problems, owner === (correct ? 'platform' : 'someone'), `the drifted ConfigMap's owner is ${owner}`);
    done({
      what: `${wf.drift.at} (drift) on schedule, ${correct ? 'as printed (drift-correction)' : 'without drift-correction'}`,
      run,
      problems,
    });
  }

  // A merged pull request deletes the Service: the README's deploy refuses it until the pull
  // request carries the label its destructive-approval-label names (read with its token).
  {
    fleetRepo.commit(
      {
        'apps/web/base/service.yaml': null,
        'apps/web/base/kustomization.yaml': 'resources:\n  - deployment.yaml\n',
      },
      'web: no Service',
      'feature-5',
      c1,
    );
    const c2 = fleetRepo.merge('feature-5', 'Merge pull request #5 from kr-test/feature-5');
    const pull = env.fake.addPull({
      owner: 'kr-test',
      repo: 'fleet',
      number: 5,
      head: { repo: 'kr-test/fleet', ref: 'feature-5', sha: c2 },
      base: { ref: 'main', sha: c1 },
      merged: { commitSha: c2 },
    });
    for (const labelled of [false, true]) {
      if (labelled) pull.labels.push('destructive-ok');
      const run = await deploy(c1, c2);
      const problems = jobsAre(run, { apply: 1 }, labelled ? 'success' : 'failure');
      const svc = await kube1.get('/api/v1/namespaces/web/services/web');
      check(problems, (svc === undefined) === labelled, `Service web/web ${svc ? 'is still there' : 'was deleted'}`);
      const said = run.jobs[0]?.output.some((l) => l.includes('destructive-ok')) === true;
      check(problems, labelled || said, 'the refusal does not name the label destructive-ok');
      const what = labelled ? 'with the label: deleted' : 'without the label: refused';
      done({
        what: `${wf.deploy.at} (deploy) on push of a merged pull request deleting a Service, ${what}`,
        run,
        problems,
      });
    }
  }

  await fanoutRuns(env, wf.fanout, done);
}
