// This repository's own .github/workflows/, each run under act on a push to main of the commit under
// test (HEAD), with stand-ins for the actions they use that check their inputs; and self-test.yml,
// whose preview posts a comment on a pull request, on a pull request too.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Origin, REPO, type ActRun } from './act.ts';
import { check, jobsAre, pullRequest, pushEvent, ZERO, type Checked, type Env } from './readme-runs.ts';
import { jobIdsOf } from './results.ts';

export async function ownRuns(env: Env, done: (c: Checked) => void): Promise<void> {
  const self = new Origin(env.root, 'kr-test/kustomize-reconcile');
  const sha = self.pushFrom(REPO);
  const dir = join(REPO, '.github/workflows');
  const files = readdirSync(dir)
    .filter((x) => /\.ya?ml$/.test(x))
    .sort();
  const run = (workflow: string, event: 'push' | 'pull_request', payload: Record<string, unknown>, at: string) =>
    env.act({
      workflow,
      event,
      payload,
      origin: self,
      sha: at,
      ...(event === 'push' ? { branch: 'main' } : {}),
      runId: env.nextRunId(),
      secrets: { GITHUB_TOKEN: env.tokenFor(workflow) },
      // ci.yml runs the README's test command, which runs these workflows: inside it, they are not run again.
      env: { KR_WORKFLOWS_NESTED: '1' },
      timeoutMs: 30 * 60_000,
    });
  const failedJobs = (workflow: string, r: ActRun) => {
    // self-test.yml starts a cluster in the background, as a job on a GitHub runner may (the VM goes).
    spawnSync('pkill', ['-f', 'testcluster up --tier b --dir /tmp/kr-act-run-']);
    return jobsAre(r, Object.fromEntries(jobIdsOf(workflow).map((id) => [id, undefined])));
  };
  for (const f of files) {
    const workflow = readFileSync(join(dir, f), 'utf8');
    const r = await run(workflow, 'push', pushEvent(self.fullName, ZERO, sha), sha);
    done({ what: `.github/workflows/${f} on push`, run: r, problems: failedJobs(workflow, r) });
  }
  // The commit under test as a pull request's head, against its parent.
  const workflow = readFileSync(join(dir, 'self-test.yml'), 'utf8');
  const parent = spawnSync('git', ['rev-parse', 'HEAD~1'], { cwd: REPO, encoding: 'utf8' }).stdout.trim();
  const pr = pullRequest(env, self, 3, sha, parent);
  const r = await run(workflow, 'pull_request', pr.payload, pr.merge);
  const problems = failedJobs(workflow, r);
  const comments = env.fake.comments.filter((c) => c.repo === 'kustomize-reconcile' && c.issue_number === 3);
  check(problems, comments.length === 1, `${comments.length} preview comments on the pull request, expected one`);
  done({ what: '.github/workflows/self-test.yml on pull_request', run: r, problems });
}
