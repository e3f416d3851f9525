// A hostile pull request through the README's preview workflow under act, whose runner (like
// GitHub's) runs a line of a step's output as a command when it starts with `::`: the tree's text
// (a resource path, an object's name, a Kustomization's name, a file name) carries newlines followed
// by commands that would add to PATH, set the environment, stop command processing or annotate. The
// runner must run none of them (results.ts injectedCommands), and nothing of the tree may stop the
// preview's own report.
import { Origin } from './act.ts';
import { forkRun } from './fork-runs.ts';
import { check, pullRequest, type Checked, type Env } from './readme-runs.ts';
import { injectedCommands } from './results.ts';
import { fleet, trees, type Tree } from './trees.ts';

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
