// src/github/context.ts by event: which commit a check run goes to and which pull request a comment
// goes to, for pull_request, pull_request_target and workflow_run (the fork route: GitHub leaves
// workflow_run.pull_requests empty for a fork's pull request), and choosePull's rule over the API's list.
import { describe, expect, it } from 'vitest';
import { choosePull, githubContext, type GitHubContext, type PullCandidate } from '../../src/github/context.js';
import { workflowRunEvent } from '../helpers/github-server.js';

const ENV = {
  GITHUB_REPOSITORY: 'org/repo',
  GITHUB_SHA: 'merge123',
  GITHUB_RUN_ID: '77',
  GITHUB_API_URL: 'https://api.github.com',
  GITHUB_SERVER_URL: 'https://github.com',
};
const HEAD = 'a'.repeat(40);
const pr = (headRepo: string) => ({
  pull_request: { number: 12, head: { sha: 'head456', repo: { full_name: headRepo } } },
  repository: { full_name: 'org/repo' },
});
const run = (t: Parameters<typeof workflowRunEvent>[0]) => workflowRunEvent(t).payload;
const same = { headSha: HEAD, headBranch: 'feature', headRepo: 'org/repo' };
const fork = { headSha: HEAD, headBranch: 'feature', headRepo: 'someone/repo' };
const pullOf = (number: number, headSha = HEAD, baseRepo?: string) => ({
  number,
  headSha,
  headRef: 'feature',
  ...(baseRepo ? { baseRepo } : {}),
});

/** Deletes a path (a.b.c) from a payload. */
function without(payload: Record<string, unknown>, path: string): Record<string, unknown> {
  const copy = structuredClone(payload);
  const keys = path.split('.');
  let at = copy;
  for (const k of keys.slice(0, -1)) at = at[k] as Record<string, unknown>;
  Reflect.deleteProperty(at, keys.at(-1)!);
  return copy;
}

type Want = Partial<Omit<GitHubContext, 'workflowRun'>> & { workflowRun?: Record<string, unknown> | undefined };

describe('githubContext by event', () => {
  it.each<[string, string, unknown, Want]>([
    [
      'pull_request, same repository',
      'pull_request',
      pr('org/repo'),
      { headSha: 'head456', pullNumber: 12, fork: false },
    ],
    [
      'pull_request from a fork: read-only token',
      'pull_request',
      pr('someone/repo'),
      { headSha: 'head456', pullNumber: 12, fork: true },
    ],
    [
      'pull_request_target from a fork: the PR, its head commit, a writable token',
      'pull_request_target',
      pr('someone/repo'),
      { headSha: 'head456', pullNumber: 12, fork: false, workflowRun: undefined },
    ],
    [
      'workflow_run of a same-repository PR: pull_requests names it',
      'workflow_run',
      run({ ...same, pullRequests: [pullOf(40)] }),
      {
        headSha: HEAD,
        pullNumber: 40,
        fork: false,
        workflowRun: {
          event: 'pull_request',
          headSha: HEAD,
          headBranch: 'feature',
          headRepository: 'org/repo',
          id: 8801,
          conclusion: 'success',
        },
      },
    ],
    [
      "workflow_run of a fork's PR: pull_requests empty, the head commit not GITHUB_SHA, looked up later",
      'workflow_run',
      run(fork),
      {
        headSha: HEAD,
        pullNumber: undefined,
        fork: false,
        workflowRun: {
          event: 'pull_request',
          headRepository: 'someone/repo',
          headBranch: 'feature',
          unresolved: undefined,
        },
      },
    ],
    [
      'workflow_run of a push: no pull request, even one the payload lists; the check on its commit',
      'workflow_run',
      run({ ...same, event: 'push', pullRequests: [pullOf(40)] }),
      { headSha: HEAD, pullNumber: undefined, workflowRun: { event: 'push' } },
    ],
    [
      'workflow_run: a listed PR of another repository is not ours',
      'workflow_run',
      run({ ...same, pullRequests: [pullOf(40, HEAD, 'upstream/repo')] }),
      { headSha: HEAD, pullNumber: undefined },
    ],
    [
      'workflow_run: a listed PR whose head is another commit is not this run',
      'workflow_run',
      run({ ...same, pullRequests: [pullOf(40, 'b'.repeat(40))] }),
      { headSha: HEAD, pullNumber: undefined },
    ],
    [
      'workflow_run: two listed PRs with the run commit: neither',
      'workflow_run',
      run({ ...same, pullRequests: [pullOf(40), pullOf(41)] }),
      {
        pullNumber: undefined,
        workflowRun: { unresolved: expect.stringMatching(/names 2 pull requests .* \(#40, #41\)/) },
      },
    ],
    [
      'workflow_run without head_sha: no commit at all (not GITHUB_SHA)',
      'workflow_run',
      without(run({ ...same, pullRequests: [pullOf(40)] }), 'workflow_run.head_sha'),
      { headSha: undefined, pullNumber: undefined },
    ],
    [
      'workflow_run without head_repository.full_name: owner.login and name',
      'workflow_run',
      without(run(fork), 'workflow_run.head_repository.full_name'),
      { workflowRun: { headRepository: 'someone/repo' } },
    ],
    [
      'workflow_run without its workflow_run object',
      'workflow_run',
      { repository: { full_name: 'org/repo' } },
      { headSha: undefined, pullNumber: undefined, fork: false, workflowRun: { event: '' } },
    ],
    [
      'workflow_run with no payload at all',
      'workflow_run',
      undefined,
      { headSha: undefined, workflowRun: { event: '' } },
    ],
  ])('%s', (_, eventName, payload, want) => {
    const ctx = githubContext({ ...ENV, GITHUB_EVENT_NAME: eventName }, payload)!;
    expect(ctx).toMatchObject({
      owner: 'org',
      repo: 'repo',
      eventName,
      runUrl: 'https://github.com/org/repo/actions/runs/77',
    });
    for (const [k, value] of Object.entries(want)) {
      const v: unknown = value;
      const got = ctx[k as keyof GitHubContext];
      if (v === undefined) expect(got, k).toBeUndefined();
      else if (typeof v === 'object')
        expect(got, k).toMatchObject(Object.fromEntries(Object.entries(v ?? {}).filter(([, x]) => x !== undefined)));
      else expect(got, k).toBe(v);
    }
    if (want.workflowRun && 'unresolved' in want.workflowRun && want.workflowRun['unresolved'] === undefined) {
      expect(ctx.workflowRun?.unresolved).toBeUndefined();
    }
  });
});

describe('choosePull', () => {
  const origin = { event: 'pull_request', headSha: HEAD, headBranch: 'feature', headRepository: 'someone/repo' };
  const cand = (
    number: number,
    over: { sha?: string; head?: string | null; base?: string; state?: string } = {},
  ): PullCandidate => ({
    number,
    state: over.state ?? 'open',
    head: { sha: over.sha ?? HEAD, repo: over.head === null ? null : { full_name: over.head ?? 'someone/repo' } },
    base: { repo: { full_name: over.base ?? 'org/repo' } },
  });
  it.each<[string, PullCandidate[], { number: number } | RegExp]>([
    ['the one with the run head commit', [cand(3, { sha: 'b'.repeat(40) }), cand(4)], { number: 4 }],
    ['head commits compared without case', [cand(5, { sha: HEAD.toUpperCase() })], { number: 5 }],
    [
      'the same commit from another head repository is not it',
      [cand(6, { head: 'mallory/repo' }), cand(7)],
      { number: 7 },
    ],
    [
      'a pull request of another base repository is not it',
      [cand(8, { base: 'other/repo' })],
      /^No open pull request of org\/repo has the head commit a{40} from someone\/repo \(branch feature\)/,
    ],
    ['a closed one is not it', [cand(9, { state: 'closed' })], /^No open pull request/],
    ['a deleted head repository is not it', [cand(10, { head: null })], /^No open pull request/],
    ['nothing listed', [], /it was closed, or has a newer commit since/],
    [
      'two: refused, both named',
      [cand(12), cand(11)],
      /^2 open pull requests of org\/repo have the head commit a{40} \(#11, #12\): not choosing one$/,
    ],
    ['the same one twice (pages overlapping) is one', [cand(13), cand(13)], { number: 13 }],
  ])('%s', (_, listed, want) => {
    const got = choosePull(origin, 'org/repo', listed);
    if (want instanceof RegExp) expect((got as { refused: string }).refused).toMatch(want);
    else expect(got).toEqual(want);
  });
  it.each([
    ['head_sha', { ...origin, headSha: undefined }],
    ['head_repository', { ...origin, headRepository: undefined }],
  ])('refuses without %s', (what, o) => {
    const { headSha, headRepository, ...rest } = o;
    const got = choosePull(
      { ...rest, ...(headSha ? { headSha } : {}), ...(headRepository ? { headRepository } : {}) },
      'org/repo',
      [cand(1)],
    );
    expect(got).toEqual({ refused: `The workflow_run payload names no ${what}` });
  });
});
