// The two workflows of docs/reference/fork-pull-requests.md, which the README sends a fork's pull
// request to: `preview` on the fork's pull_request (read-only token, no secrets: the runner has its
// own cluster credentials, as the page says it must) uploads its report, and `preview-report`, on
// workflow_run of that run, downloads it and posts the sticky comment and the check run.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { workflowBlocks } from '../../scripts/workflows.mjs';
import { Origin, REPO, type ActRun } from './act.ts';
import { check, jobsAre, pullRequest, repoOf, type Checked, type Env } from './readme-runs.ts';
import { fleet, trees } from './trees.ts';

/**
 * `workflow` on a fork's pull request `pr`: a read-only token whatever the workflow asks, no secrets,
 * and the runner's own cluster credentials (KUBECONFIG), as fork-pull-requests.md says it needs.
 */
export function forkRun(
  env: Env,
  workflow: string,
  repo: Origin,
  pr: { merge: string; payload: Record<string, unknown> },
  kubeconfig: string,
  runId = env.nextRunId(),
): Promise<ActRun> {
  return env.act({
    workflow,
    event: 'pull_request',
    payload: pr.payload,
    origin: repo,
    sha: pr.merge,
    runId,
    secrets: { GITHUB_TOKEN: env.tokenFor('permissions:\n  contents: read\njobs: {}\n') },
    env: { KUBECONFIG: kubeconfig },
  });
}

export async function forkRuns(env: Env, done: (c: Checked) => void): Promise<void> {
  const page = 'docs/reference/fork-pull-requests.md';
  const blocks = workflowBlocks(readFileSync(join(REPO, page), 'utf8'));
  const preview = blocks.find((b) => b.name === 'preview');
  const report = blocks.find((b) => b.name === 'preview-report');
  if (!preview || !report) throw new Error(`${page} prints no preview or preview-report workflow any more`);
  const cluster = env.clusters[1];
  if (!cluster) throw new Error('two clusters are needed');

  const repo = new Origin(env.root, 'kr-test/shop');
  const b1 = repo.commit(fleet('kr-test/shop'), 'platform and web');
  // The fork's commit: GitHub keeps it in the base repository under refs/pull/9/*.
  const head = repo.commit(
    { 'platform/settings.yaml': trees.configMap('platform-settings', 'web', { tier: 'production', owner: 'forker' }) },
    'from a fork',
    'feature-9',
    b1,
  );
  const pr = pullRequest(env, repo, 9, head, b1, 'forker/shop');
  const runId = env.nextRunId();
  {
    const run = await forkRun(env, preview.yaml, repo, pr, cluster.kubeconfig, runId);
    const problems = jobsAre(run, { preview: 1 });
    const comments = env.fake.comments.filter((c) => c.repo === 'shop');
    check(
      problems,
      comments.length === 0,
      `${comments.length} comments from the fork's own run, which has a read-only token`,
    );
    done({ what: `${page}:${preview.line} (preview) on a fork's pull_request`, run, problems });
  }
  {
    const payload = {
      action: 'completed',
      workflow_run: {
        id: runId,
        name: 'preview',
        event: 'pull_request',
        status: 'completed',
        conclusion: 'success',
        head_sha: head,
        head_branch: 'feature-9',
        head_repository: repoOf('forker/shop'),
        repository: repoOf('kr-test/shop'),
        pull_requests: [],
      },
      repository: repoOf('kr-test/shop'),
    };
    const run = await env.act({
      workflow: report.yaml,
      event: 'workflow_run',
      payload,
      origin: repo,
      sha: b1,
      branch: 'main',
      runId: env.nextRunId(),
      secrets: { GITHUB_TOKEN: env.tokenFor(report.yaml) },
    });
    const problems = jobsAre(run, { report: 1 });
    const comments = env.fake.comments.filter((c) => c.repo === 'shop' && c.issue_number === 9);
    check(problems, comments.length === 1, `${comments.length} comments on the fork's pull request 9, expected one`);
    check(
      problems,
      comments[0]?.body.includes('platform-settings') === true,
      'the comment does not name platform-settings',
    );
    const checks = env.fake.checkRuns.filter((c) => c.head_sha === head);
    check(problems, checks.length === 1, `${checks.length} check runs on the fork's head commit, expected one`);
    done({ what: `${page}:${report.line} (preview-report) on workflow_run of that run`, run, problems });
  }
}
