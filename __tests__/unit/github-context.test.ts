import { describe, expect, it } from 'vitest';
import { githubContext, missingPermission } from '../../src/github/context.js';
import { locateObject } from '../../src/report/problems.js';
import { countReport, driftFound, type PrunedObject } from '../../src/report/model.js';
import { exitStatus } from '../../src/report/exit.js';

const ENV = {
  GITHUB_REPOSITORY: 'org/repo',
  GITHUB_SHA: 'merge123',
  GITHUB_RUN_ID: '77',
  GITHUB_API_URL: 'https://ghe.example/api/v3/',
  GITHUB_SERVER_URL: 'https://ghe.example',
};
const pr = (headRepo: string | null) => ({
  pull_request: { number: 12, head: { sha: 'head456', repo: headRepo === null ? null : { full_name: headRepo } } },
  repository: { full_name: 'org/repo' },
});

describe('githubContext', () => {
  it.each([
    ['push', { ...ENV, GITHUB_EVENT_NAME: 'push' }, {}, { headSha: 'merge123', fork: false, pullNumber: undefined }],
    [
      'pull_request from the same repository: the head commit, not the merge commit',
      { ...ENV, GITHUB_EVENT_NAME: 'pull_request' },
      pr('org/repo'),
      { headSha: 'head456', fork: false, pullNumber: 12 },
    ],
    [
      'pull_request from a fork',
      { ...ENV, GITHUB_EVENT_NAME: 'pull_request' },
      pr('someone/repo'),
      { headSha: 'head456', fork: true, pullNumber: 12 },
    ],
    [
      'pull_request_target from a fork has a writable token',
      { ...ENV, GITHUB_EVENT_NAME: 'pull_request_target' },
      pr('someone/repo'),
      { fork: false, pullNumber: 12 },
    ],
    [
      'a deleted fork (head.repo null) is not taken for a fork',
      { ...ENV, GITHUB_EVENT_NAME: 'pull_request' },
      pr(null),
      { fork: false },
    ],
    ['schedule', { ...ENV, GITHUB_EVENT_NAME: 'schedule' }, undefined, { eventName: 'schedule', fork: false }],
  ])('%s', (_, env, payload, want) => {
    const ctx = githubContext(env, payload);
    expect(ctx).toMatchObject({
      apiUrl: 'https://ghe.example/api/v3',
      owner: 'org',
      repo: 'repo',
      runUrl: 'https://ghe.example/org/repo/actions/runs/77',
      ...Object.fromEntries(Object.entries(want).filter(([, v]) => v !== undefined)),
    });
    if ('pullNumber' in want && want.pullNumber === undefined) expect(ctx?.pullNumber).toBeUndefined();
  });
  it.each([[{}], [{ GITHUB_REPOSITORY: 'noslash' }], [{ GITHUB_REPOSITORY: '/repo' }]])(
    'is undefined outside Actions: %j',
    (env) => {
      expect(githubContext(env, {})).toBeUndefined();
    },
  );
  it('defaults to github.com', () => {
    expect(githubContext({ GITHUB_REPOSITORY: 'o/r' }, null)).toMatchObject({ apiUrl: 'https://api.github.com' });
  });
});

describe('missingPermission', () => {
  it.each([
    ['pull_requests=write; issues=write', 'x', 'pull-requests: write'],
    ['checks=write', 'x', 'checks: write'],
    ['pull_requests=read', 'pull-requests: write', 'pull-requests: write'],
    ['issues=read', 'pull-requests: write', 'issues: read'],
    [' contents=read ', 'x', 'contents: read'],
    [undefined, 'checks: write', 'checks: write'],
    ['', 'pull-requests: write', 'pull-requests: write'],
    ['garbage', 'checks: write', 'checks: write'],
  ])('%j → %s', (header, fallback, want) => {
    expect(missingPermission(header, fallback)).toBe(want);
  });
});

describe('locateObject', () => {
  const text = `# a comment
apiVersion: v1
kind: ConfigMap
metadata:
  name: first
---
apiVersion: apps/v1
kind: Deployment
metadata:
  namespace: web
  name: first
---
apiVersion: v1
kind: ConfigMap
metadata: {name: second}
`;
  it.each([
    ['ConfigMap', 'first', 5],
    ['Deployment', 'first', 11],
    ['ConfigMap', 'second', 15],
    ['ConfigMap', 'third', undefined],
    ['Secret', 'first', undefined],
  ])('%s %s → line %s', (kind, name, line) => {
    expect(locateObject(text, kind, name)).toBe(line);
  });
  it('is undefined for text that is not YAML', () => {
    expect(locateObject('{{{ not: [yaml', 'ConfigMap', 'x')).toBeUndefined();
  });
});

describe('drift findings and exit codes', () => {
  const counts = (created: number, configured: number, pruned: PrunedObject[] = []) => ({
    ...countReport([], pruned),
    created,
    configured,
    unchanged: 3,
  });
  it.each([
    ['nothing', counts(0, 0), false],
    ['a configured object', counts(0, 1), true],
    ['a created object', counts(1, 0), true],
    ['an object prune would delete', counts(0, 0, [{ subject: 'ConfigMap/a/b', action: 'deleted' }]), true],
    ['a skipped prune is no drift', counts(0, 0, [{ subject: 'ConfigMap/a/b', action: 'skipped' }]), false],
  ])('%s → %s', (_, c, want) => {
    expect(driftFound({ counts: c })).toBe(want);
  });
  it.each([
    ['drift found, not corrected', { detected: true, corrected: false }, true, 1],
    ['drift found and corrected', { detected: true, corrected: true }, true, 0],
    ['no drift', { detected: false, corrected: false }, true, 0],
    ['failed', { detected: true, corrected: false }, false, 2],
  ])('%s → %i', (_, drift, ok, code) => {
    expect(exitStatus({ ok, counts: counts(1, 0), drift }, 'drift')).toBe(code);
  });
});
