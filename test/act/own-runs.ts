// This repository's own .github/workflows/, each run under act on a push to main of the commit under
// test (HEAD), with stand-ins for the actions they use that check their inputs.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Origin, REPO, runAct } from './act.ts';
import type { Checked, Env } from './readme-runs.ts';
import { jobIdsOf } from './results.ts';

export async function ownRuns(env: Env, done: (c: Checked) => void): Promise<void> {
  const self = new Origin(env.root, 'kr-test/kustomize-reconcile');
  const sha = self.pushFrom(REPO);
  const dir = join(REPO, '.github/workflows');
  for (const f of readdirSync(dir)
    .filter((x) => /\.ya?ml$/.test(x))
    .sort()) {
    const workflow = readFileSync(join(dir, f), 'utf8');
    const run = await runAct({
      workflow,
      event: 'push',
      payload: {
        ref: 'refs/heads/main',
        before: '0000000000000000000000000000000000000000',
        after: sha,
        repository: {
          full_name: self.fullName,
          name: 'kustomize-reconcile',
          owner: { login: 'kr-test' },
          default_branch: 'main',
        },
        head_commit: { id: sha },
      },
      origin: self,
      sha,
      branch: 'main',
      runId: env.nextRunId(),
      secrets: { GITHUB_TOKEN: env.tokenFor(workflow) },
      // ci.yml runs the README's test command, which runs these workflows: inside it, they are not run again.
      env: { KR_WORKFLOWS_NESTED: '1' },
      githubApi: env.fake.url,
      artifacts: env.artifacts,
      actionDir: env.actionDir,
      timeoutMs: 30 * 60_000,
    });
    // self-test.yml starts a cluster in the background, as a job on a GitHub runner may (the VM goes).
    spawnSync('pkill', ['-f', 'testcluster up --tier b --dir /tmp/kr-act-run-']);
    const problems: string[] = [];
    for (const id of jobIdsOf(workflow)) {
      for (const j of run.jobs.filter((x) => x.id === id && x.outcome !== 'success')) {
        const failed = j.steps.filter((s) => s.result === 'failure').map((s) => s.step);
        problems.push(`job ${id}: ${j.outcome}${failed.length ? ` at ${failed.join(', ')}` : ''}`);
      }
    }
    done({ what: `.github/workflows/${f} on push`, run, problems });
  }
}
