// A hostile pull request through the README's preview workflow under act, whose runner (like
// GitHub's) runs a line of a step's output as a command when it starts with `::`: the tree's text
// (a resource path, an object's name, a Kustomization's name, a file name) carries newlines followed
// by commands that would add to PATH, set the environment, stop command processing or annotate. The
// runner must run none of them (results.ts injectedCommands), and nothing of the tree may stop the
// preview's own report.
import { readFileSync } from 'node:fs';
import { Origin, SYMLINK } from './act.ts';
import { kubeFrom } from './kube.ts';
import { forkRun } from './fork-runs.ts';
import { check, jobsAre, pullRequest, type Checked, type Env } from './readme-runs.ts';
import { injectedCommands } from './results.ts';
import { clusterVars, fleet, trees, type Tree } from './trees.ts';

const MARK = 'kr-pwned';

export async function hostileRuns(
  env: Env,
  preview: { yaml: string; at: string },
  done: (c: Checked) => void,
): Promise<void> {
  const cluster = env.clusters[1];
  if (!cluster) throw new Error('two clusters are needed');
  const repo = new Origin(env.root, 'kr-test/hostile');
  const tree = fleet('kr-test/hostile');
  const b1 = repo.commit(tree, 'platform and web');
  const nl = (cmd: string) => `x\\n::${cmd}\\n`;
  // One vector per push to the pull request: the first refusal ends a preview's run.
  const rounds: [string, Tree][] = [
    [
      "a Kustomization's name",
      {
        'clusters/production/hostile.yaml': `apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: "${nl(`stop-commands::${MARK}-token`)}"\n  namespace: flux-system\nspec:\n  interval: 10m\n  path: ./platform\n  prune: true\n  sourceRef: {kind: GitRepository, name: flux-system}\n`,
      },
    ],
    [
      'a resource path',
      {
        'clusters/production/hostile.yaml': null,
        'apps/web/production/kustomization.yaml': tree['apps/web/production/kustomization.yaml']!.replace(
          '  - ../base',
          `  - ../base\n  - "${nl(`add-path::/tmp/${MARK}-path`)}::set-env name=KR_PWNED::${MARK}"`,
        ),
      },
    ],
    [
      "an object's name and a file name",
      {
        'apps/web/production/kustomization.yaml': tree['apps/web/production/kustomization.yaml']!,
        'platform/settings.yaml': trees
          .configMap('platform-settings', 'web', { tier: 'production' })
          .replace('name: platform-settings', `name: "${MARK}\\n::warning::${MARK}-name"`),
        [`platform/x\n::add-mask::${MARK}-file.yaml`]: 'a: [\n',
      },
    ],
  ];
  let from = b1;
  for (const [what, change] of rounds) {
    const head = repo.commit(change, `hostile: ${what}`, 'feature-11', from === b1 ? b1 : undefined);
    from = head;
    const pr = pullRequest(env, repo, 11, head, b1, 'attacker/hostile');
    const run = await forkRun(env, preview.yaml, repo, pr, cluster.kubeconfig);
    const problems: string[] = [];
    for (const c of injectedCommands(run.log, MARK)) problems.push(`the runner ran a command from the tree: ${c}`);
    const job = run.jobs.find((j) => j.id === 'preview');
    // The preview fails (the tree is broken) and says so: its closing line got out.
    check(
      problems,
      job?.outcome === 'failure',
      `the preview job: ${job?.outcome ?? 'did not run'}, expected a failure`,
    );
    check(
      problems,
      job?.output.some((l) => /^(Failed|Preview)/.test(l)) === true,
      'the preview printed no closing line',
    );
    const reached = job?.output.some((l) => l.includes(MARK)) === true;
    check(
      problems,
      reached,
      `the tree's text (${MARK}) is not in the job's output: the attack did not reach the runner`,
    );
    done({ what: `${preview.at} (preview) on a hostile pull request: commands in ${what}`, run, problems });
  }
}

/**
 * Two routes by which a pull request took secrets out (issue 47), through the README's preview as a
 * pull request of the same repository runs it (its token may comment, the cluster's kubeconfig is a
 * secret): a symlink committed to read a file of the runner (the workspace's `.git/config`, where
 * actions/checkout keeps the job's token) through a generator, and the cluster Secret `web`
 * substitutes from, sliced three characters at a time into fields the API server refuses and
 * quotes. The first must be refused naming the link; the second must fail naming the fields, with
 * no slice quoted anywhere the run publishes.
 */
export async function hostileSecretRuns(
  env: Env,
  preview: { yaml: string; at: string },
  done: (c: Checked) => void,
): Promise<void> {
  const cluster = env.clusters[1];
  if (!cluster) throw new Error('two clusters are needed');
  const kubeconfig = readFileSync(cluster.kubeconfig, 'utf8');
  // The namespace as the platform's earlier deploys left it, so that the server judges each object
  // in it (a dry-run into a namespace not there yet only says "would create").
  await kubeFrom(cluster.kubeconfig).create('/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'web' },
  });
  const repo = new Origin(env.root, 'kr-test/exfil');
  const tree = fleet('kr-test/exfil');
  const b1 = repo.commit(tree, 'platform and web');
  const token = clusterVars.secret.stringData.api_token;
  // The token's slices past its `tok-` prefix, each in a field the server refuses and quotes.
  const offsets = [4, 7, 10, 13, 16];
  const slices = offsets.map((o) => token.slice(o, o + 3));
  // A Service whose sessionAffinity (None or ClientIP) is a slice of the token: refused, quoted.
  const service = (i: number, offset: number) =>
    `${trees.service(`exfil-${i}`)}  sessionAffinity: "\${api_token:${offset}:3}"\n`;
  const rounds: [string, number, Tree, (published: string) => string[]][] = [
    [
      "a symlink to the runner's .git/config read by a configMapGenerator",
      21,
      {
        'apps/web/production/checkout-config': `${SYMLINK}../../../.git/config`,
        'apps/web/production/kustomization.yaml': tree['apps/web/production/kustomization.yaml']!.replace(
          '      - REGION=${region}',
          '      - REGION=${region}\n    files:\n      - checkout-config',
        ),
      },
      (published) => {
        const out: string[] = [];
        if (!/symlink|symbolic link/i.test(published)) out.push('the refusal does not name the symlink');
        for (const leak of ['repositoryformatversion', '[remote "origin"]', 'extraheader'])
          if (published.includes(leak)) out.push(`the runner's .git/config (${leak}) was published`);
        return out;
      },
    ],
    [
      'the substituted cluster Secret sliced into fields the server refuses',
      22,
      {
        'apps/web/production/exfil.yaml': offsets.map((o, i) => service(i, o)).join('---\n'),
        'apps/web/production/kustomization.yaml': tree['apps/web/production/kustomization.yaml']!.replace(
          '  - secret.yaml',
          '  - secret.yaml\n  - exfil.yaml',
        ),
      },
      (published) => {
        const out: string[] = [];
        if (!published.includes('sessionAffinity')) out.push('no error names the refused field sessionAffinity');
        for (const s of slices)
          for (const quoted of [`"${s}"`, `'${s}'`, `\\"${s}\\"`, `value: ${s}`])
            if (published.includes(quoted)) out.push(`a slice of the Secret was published: ${quoted}`);
        return out;
      },
    ],
  ];
  for (const [what, n, change, judge] of rounds) {
    const head = repo.commit(change, `hostile: ${what}`, `feature-${n}`, b1);
    const pr = pullRequest(env, repo, n, head, b1);
    const run = await env.act({
      workflow: preview.yaml,
      event: 'pull_request',
      payload: pr.payload,
      origin: repo,
      sha: pr.merge,
      runId: env.nextRunId(),
      secrets: { GITHUB_TOKEN: env.tokenFor(preview.yaml), KUBECONFIG: kubeconfig },
    });
    const problems = jobsAre(run, { preview: 1 }, 'failure');
    const posted = [
      ...env.fake.comments.filter((c) => c.repo === 'exfil' && c.issue_number === n).map((c) => c.body),
      ...env.fake.checkRuns.filter((c) => c.head_sha === head).map((c) => JSON.stringify(c)),
    ];
    check(problems, posted.length > 0, 'the preview posted no comment or check run: the attack was not reported');
    problems.push(...judge([run.log, ...posted].join('\n')));
    done({ what: `${preview.at} (preview) on a hostile pull request: ${what}`, run, problems });
  }
}
