// Issue 47, class 9: every GitHub event has a row (trusted tree or not, and where its base comes
// from); unknown events are untrusted; and the destructive gate's label is that of the pull request
// merged as this very commit, asked of the fake GitHub.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { githubContext } from '../../src/github/context.js';
import { approvalFrom, lookUpApproval } from '../../src/github/approval.js';
import { EVENT_TRUST, eventTrust } from '../../src/source/event-trust.js';
import { untrustedTreeOf } from '../../src/source/trust.js';
import { startFakeGitHub, type FakeGitHub } from '../helpers/github-server.js';

const repository = { default_branch: 'main', full_name: 'org/repo' };
const PR_BASE = 'a'.repeat(40);

/** [event, payload, trusted, base] — one row per event of the table, and more for the unknown. */
const ROWS: [string, Record<string, unknown>, boolean, ReturnType<typeof eventTrust>['base']][] = [
  ['push', { ref: 'refs/heads/feature', before: 'b'.repeat(40), repository }, true, { onBranch: 'main' }],
  ['schedule', { repository }, true, { onBranch: 'main' }],
  ['repository_dispatch', { repository, action: 'deploy' }, true, { onBranch: 'main' }],
  ['workflow_dispatch', { ref: 'refs/heads/main', repository }, true, { onBranch: 'main' }],
  ['pull_request', { pull_request: { base: { sha: PR_BASE, ref: 'main' } }, repository }, false, { commit: PR_BASE }],
  [
    'pull_request_target',
    { pull_request: { base: { sha: PR_BASE, ref: 'main' } }, repository },
    false,
    { commit: PR_BASE },
  ],
  [
    'pull_request_review',
    { pull_request: { base: { sha: PR_BASE, ref: 'main' } }, repository },
    false,
    { commit: PR_BASE },
  ],
  [
    'pull_request_review_comment',
    { pull_request: { base: { sha: PR_BASE, ref: 'main' } }, repository },
    false,
    { commit: PR_BASE },
  ],
  [
    'merge_group',
    { merge_group: { base_sha: PR_BASE, base_ref: 'refs/heads/main' }, repository },
    false,
    { commit: PR_BASE },
  ],
  ['issue_comment', { issue: { pull_request: {} }, repository }, false, { onBranch: 'main' }],
  [
    'workflow_run',
    { workflow_run: { head_sha: 'c'.repeat(40), event: 'pull_request' }, repository },
    false,
    { onBranch: 'main' },
  ],
];

describe('the table of events', () => {
  it.each(ROWS)('%s', (name, payload, trusted, base) => {
    expect(eventTrust(name, payload)).toEqual({ trusted, base });
  });

  it('has a row tested above for every event it lists', () => {
    expect(Object.keys(EVENT_TRUST).sort()).toEqual(ROWS.map((r) => r[0]).sort());
  });

  it.each([
    // A dispatch has no branch filter: any writer's branch, so not trusted.
    ['workflow_dispatch of another branch', 'workflow_dispatch', { ref: 'refs/heads/evil', repository }],
    ['workflow_dispatch, no default branch named', 'workflow_dispatch', { ref: 'refs/heads/main' }],
    ['an unknown event', 'deployment', { repository }],
    ['release', 'release', { repository }],
    ['a prototype key', '__proto__', { repository }],
    ['constructor', 'constructor', { repository }],
    ['toString', 'toString', { repository }],
    // A fork's branch may be called main: the workflow_run is trusted only after this repository's push.
    [
      'workflow_run after a fork’s push to its main',
      'workflow_run',
      {
        workflow_run: { event: 'push', head_branch: 'main', head_repository: { full_name: 'mallory/repo' } },
        repository,
      },
    ],
    [
      'workflow_run after a pull request',
      'workflow_run',
      {
        workflow_run: { event: 'pull_request', head_branch: 'main', head_repository: { full_name: 'org/repo' } },
        repository,
      },
    ],
    [
      'workflow_run after a push to another branch',
      'workflow_run',
      { workflow_run: { event: 'push', head_branch: 'dev', head_repository: { full_name: 'org/repo' } }, repository },
    ],
    ['an empty name', '', { repository }],
  ])('%s is untrusted, its base on the default branch', (_, name, payload) => {
    const row = eventTrust(name, payload);
    expect(row.trusted).toBe(false);
    expect(row.base).toEqual('repository' in payload ? { onBranch: 'main' } : {});
  });

  it.each([
    // A pull request into another branch: that branch is the author's to push, its tip no base.
    [
      'a pull request into a release branch',
      'pull_request',
      { pull_request: { base: { sha: PR_BASE, ref: 'release' } }, repository },
      { commit: PR_BASE, onBranch: 'main' },
    ],
    [
      'a merge queue of another branch',
      'merge_group',
      { merge_group: { base_sha: PR_BASE, base_ref: 'refs/heads/next' }, repository },
      { commit: PR_BASE, onBranch: 'main' },
    ],
    ['a pull request payload without a base', 'pull_request', { pull_request: {}, repository }, { onBranch: 'main' }],
    // No default branch named (not a payload GitHub writes): the pull request's base as before.
    ['no default branch', 'pull_request', { pull_request: { base: { sha: PR_BASE, ref: 'x' } } }, { commit: PR_BASE }],
    ['a push without the repository', 'push', { before: 'b'.repeat(40) }, {}],
  ])('%s', (_, name, payload, base) => {
    expect(eventTrust(name, payload).base).toEqual(base);
  });
});

it('a workflow_run after this repository’s push to the default branch is trusted (deploy after CI)', () => {
  const payload = {
    workflow_run: { event: 'push', head_branch: 'main', head_repository: { full_name: 'org/repo' } },
    repository: { ...repository, full_name: 'org/repo' },
  };
  expect(eventTrust('workflow_run', payload)).toEqual({ trusted: true, base: { onBranch: 'main' } });
});

describe('untrustedTreeOf over the table', () => {
  it.each([
    // mode, event, payload → untrusted (with which base) or trusted (undefined)
    ['apply', 'push', { before: 'b'.repeat(40), repository }, undefined],
    ['apply', 'schedule', { repository }, undefined],
    ['apply', 'workflow_dispatch', { ref: 'refs/heads/main', repository }, undefined],
    [
      'apply',
      'workflow_dispatch',
      { ref: 'refs/heads/evil', repository },
      { reason: 'this run is for a workflow_dispatch event, whose tree is not trusted', onBranch: 'main' },
    ],
    [
      'apply',
      'issue_comment',
      { repository },
      { reason: 'this run is for a issue_comment event, whose tree is not trusted', onBranch: 'main' },
    ],
    [
      'drift',
      'workflow_run',
      { repository },
      { reason: 'this run is for a workflow_run event, whose tree is not trusted', onBranch: 'main' },
    ],
    [
      'apply',
      'deployment',
      { repository },
      { reason: 'this run is for a deployment event, whose tree is not trusted', onBranch: 'main' },
    ],
    [
      'preview',
      'push',
      { before: 'b'.repeat(40), repository },
      { reason: 'this run is a preview, whose tree is not trusted', onBranch: 'main' },
    ],
    [
      'apply',
      'pull_request_review_comment',
      { pull_request: { base: { sha: PR_BASE, ref: 'main' } }, repository },
      { reason: 'this run is for a pull_request_review_comment event, whose tree is not trusted', base: PR_BASE },
    ],
  ])('%s on %s', (mode, eventName, event, want) => {
    const got = untrustedTreeOf({ mode, eventName, event, root: '/ws' });
    expect(got).toEqual(want && { ...want, root: '/ws' });
    if (got !== undefined) expect(got.base).not.toBe('b'.repeat(40));
  });

  it('keeps a base given by input as it is', () => {
    expect(
      untrustedTreeOf({ mode: 'preview', eventName: 'push', event: { repository }, base: 'given', root: '/ws' }),
    ).toEqual({ reason: 'this run is a preview, whose tree is not trusted', base: 'given', root: '/ws' });
  });
});

describe('the destructive gate: the pull request merged as this commit', () => {
  const SHA = 'd'.repeat(40);
  it.each([
    ['merged as this commit, labelled', [{ number: 1, merged_at: 't', merge_commit_sha: SHA, labels: ['ok'] }], true],
    // The API lists pull requests that merely contain the commit: not this commit's review.
    [
      'only containing it, labelled',
      [{ number: 2, merged_at: 't', merge_commit_sha: 'e'.repeat(40), labels: ['ok'] }],
      false,
    ],
    [
      'merged as this commit without the label, another containing it with it',
      [
        { number: 3, merged_at: 't', merge_commit_sha: 'e'.repeat(40), labels: ['ok'] },
        { number: 4, merged_at: 't', merge_commit_sha: SHA, labels: [] },
      ],
      false,
    ],
    [
      'open, labelled, merge commit this one',
      [{ number: 5, merged_at: null, merge_commit_sha: SHA, labels: ['ok'] }],
      false,
    ],
    ['upper-case sha', [{ number: 6, merged_at: 't', merge_commit_sha: SHA.toUpperCase(), labels: ['OK'] }], true],
  ])('%s', (_, pulls, approved) => {
    expect(approvalFrom(pulls, SHA, 'ok').approved).toBe(approved);
  });

  let fake: FakeGitHub;
  beforeAll(async () => {
    fake = await startFakeGitHub({ tokens: { 'tok-rw': { pull_requests: 'read' } } });
  });
  afterAll(async () => {
    await fake.close();
  });

  it('a direct push of a labelled pull request’s head commit has no yes', async () => {
    // The labelled pull request was merged with a merge commit; its head commit then pushed alone.
    const head = 'f'.repeat(32) + '0badc0de';
    const pull = fake.addPull({
      owner: 'org',
      repo: 'repo',
      head: { repo: 'org/repo', ref: 'feature', sha: head },
      merged: { commitSha: '1'.repeat(40) },
      labels: ['destructive-ok'],
    });
    const ctx = githubContext({ GITHUB_REPOSITORY: 'org/repo', GITHUB_API_URL: fake.url }, {})!;
    const direct = await lookUpApproval(ctx, 'tok-rw', head, 'destructive-ok');
    expect(direct).toEqual({
      approved: false,
      why: `no merged pull request has commit ${head.slice(0, 12)} as its merge commit (#${pull.number} only contains it)`,
    });
    const merged = await lookUpApproval(ctx, 'tok-rw', '1'.repeat(40), 'destructive-ok');
    expect(merged).toEqual({ approved: true, why: `pull request #${pull.number} carries the label "destructive-ok"` });
  });
});
