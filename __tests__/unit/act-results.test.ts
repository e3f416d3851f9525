// The pure parts of npm run workflows' runs under act: which actions map to what, how act's JSON
// log becomes jobs and outcomes, and the token a workflow's permissions give.
import { describe, expect, it } from 'vitest';
import {
  grantsIdToken,
  injectedCommands,
  jobSummary,
  mapWorkflow,
  permissionsOf,
  readActLog,
  type JobRun,
} from '../../test/act/results.ts';

const wf = (steps: string, extra = '') =>
  `name: w\non: push\n${extra}jobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n${steps}`;

describe('mapWorkflow', () => {
  it.each<[string, string, string[]]>([
    [
      'the README action and checkout',
      '      - uses: actions/checkout@v5\n      - uses: <owner>/kustomize-reconcile@v1\n',
      ['actions/checkout@v5=/s/checkout', 'kr-test/kustomize-reconcile@v1=/a'],
    ],
    ['a local action is left as it is', '      - uses: ./\n', []],
    [
      'two versions of one action',
      '      - uses: actions/cache@v4\n      - uses: actions/cache@v3\n',
      ['actions/cache@v3=/s/cache', 'actions/cache@v4=/s/cache'],
    ],
    ['a run step', '      - run: echo hi\n', []],
    [
      'the cloud logins of the README recipes, under their owner',
      '      - uses: aws-actions/configure-aws-credentials@v6\n      - uses: google-github-actions/auth@v3\n',
      [
        'aws-actions/configure-aws-credentials@v6=/s/aws-actions/configure-aws-credentials',
        'google-github-actions/auth@v3=/s/google-github-actions/auth',
      ],
    ],
    [
      'an owner spelt in capitals, as GitHub takes it',
      '      - uses: Azure/aks-set-context@v5\n',
      ['Azure/aks-set-context@v5=/s/azure/aks-set-context'],
    ],
  ])('%s', (_, steps, local) => {
    const m = mapWorkflow(wf(steps), '/a', '/s');
    expect(m.localRepositories).toEqual(local);
    expect(m.yaml).not.toContain('<owner>');
  });

  it.each([
    [
      'a third-party action without a stand-in',
      '      - uses: docker/login-action@v3\n',
      /docker\/login-action@v3: no stand-in/,
    ],
    ['no ref', '      - uses: actions/checkout\n', /not an owner\/name@ref/],
  ])('refuses %s, naming it', (_, steps, error) => {
    expect(() => mapWorkflow(wf(steps), '/a', '/s')).toThrow(error);
  });

  it('changes nothing but the action reference', () => {
    const text = wf('      - uses: <owner>/kustomize-reconcile@v1\n        with: {mode: apply}\n');
    expect(mapWorkflow(text, '/a', '/s').yaml).toBe(text.replace('<owner>', 'kr-test'));
  });
});

const line = (o: Record<string, unknown>) => JSON.stringify({ level: 'info', dryrun: false, ...o });

describe('readActLog', () => {
  const log = [
    'time=x level=warning msg="Couldn\'t get a valid docker connection"',
    line({ jobID: 'plan', matrix: {}, msg: '  ✅  Success - Set up job', step: 'Set up job', stepResult: 'success' }),
    line({ jobID: 'plan', matrix: {}, msg: 'hello\n', raw_output: true }),
    line({ jobID: 'plan', matrix: {}, msg: '🏁  Job succeeded', jobResult: 'success' }),
    line({ jobID: 'reconcile', matrix: { id: 'a' }, step: 'x@v1', stage: 'Main', stepResult: 'failure', msg: '' }),
    line({ jobID: 'reconcile', matrix: { id: 'a' }, msg: '🏁  Job failed', jobResult: 'failure' }),
    line({ jobID: 'reconcile', matrix: { id: 'b' }, step: 'x@v1', stage: 'Main', stepResult: 'success', msg: '' }),
    // act logs the matrix's result so far: b's own steps succeeded.
    line({ jobID: 'reconcile', matrix: { id: 'b' }, msg: '🏁  Job failed', jobResult: 'failure' }),
    line({ jobID: 'reconcile', matrix: { id: 'c' }, msg: 'started, never finished', raw_output: true }),
    '{"not json',
  ].join('\n');
  const runs = readActLog(log, ['plan', 'reconcile', 'report']);

  it.each<[string, (r: JobRun[]) => unknown, unknown]>([
    [
      'one entry per job and matrix, in the workflow’s order',
      (r) => r.map((j) => j.id),
      ['plan', 'reconcile', 'reconcile', 'reconcile', 'report'],
    ],
    ['outcomes', (r) => r.map((j) => j.outcome), ['success', 'failure', 'success', 'cancelled', 'skipped']],
    ['a job’s output lines', (r) => r[0]?.output, ['hello']],
    ['a failed step', (r) => r[1]?.steps, [{ step: 'x@v1', stage: 'Main', result: 'failure' }]],
    ['one job of a matrix: its steps’ outcome, not the matrix’s', (r) => r[2]?.outcome, 'success'],
    ['the matrix of a run', (r) => r[2]?.matrix, { id: 'b' }],
  ])('%s', (_, pick, want) => {
    expect(pick(runs)).toEqual(want);
  });

  it.each<[string, JobRun[], string]>([
    ['one job each', readActLog(line({ jobID: 'apply', jobResult: 'success' }), ['apply']), 'apply ✓'],
    ['a matrix, mixed', runs, 'plan ✓, reconcile ×3 (1 ✗, 1 ✓, 1 cancelled), report skipped'],
    [
      'a matrix, all alike',
      readActLog([1, 2].map((n) => line({ jobID: 'reconcile', matrix: { n }, jobResult: 'success' })).join('\n'), [
        'reconcile',
      ]),
      'reconcile ×2 ✓',
    ],
  ])('jobSummary: %s', (_, r, text) => {
    expect(jobSummary(r)).toBe(text);
  });
});

describe('permissionsOf', () => {
  it.each<[string, string, ReturnType<typeof permissionsOf>]>([
    ['none given: the restricted default', '', { contents: 'read' }],
    [
      'the README deploy workflow’s',
      'permissions:\n  contents: read\n  checks: write\n  pull-requests: read\n',
      { contents: 'read', checks: 'write', pull_requests: 'read' },
    ],
    [
      'read-all',
      'permissions: read-all\n',
      { pull_requests: 'read', checks: 'read', contents: 'read', issues: 'read' },
    ],
    ['scopes the emulator does not model are left out', 'permissions:\n  actions: read\n  id-token: write\n', {}],
  ])('%s', (_, block, want) => {
    expect(permissionsOf(wf('      - run: "true"\n', block))).toEqual(want);
  });

  it('a job’s write wins over the top level’s read', () => {
    const text = `name: w\non: push\npermissions:\n  checks: read\njobs:\n  a:\n    runs-on: x\n    permissions:\n      checks: write\n    steps: [{run: "true"}]\n`;
    expect(permissionsOf(text)).toEqual({ checks: 'write' });
  });
});

describe('injectedCommands', () => {
  const cmd = (command: string, arg: string, extra: Record<string, unknown> = {}) =>
    line({ jobID: 'preview', command, arg, raw: `::${command}::${arg}`, ...extra });
  it.each<[string, string, number]>([
    ['a path the tree added', cmd('add-path', '/tmp/kr-pwned'), 1],
    ['an environment variable', cmd('set-env', 'x', { name: 'KR_PWNED', arg: 'kr-pwned' }), 1],
    ['stop-commands with the tree’s token', cmd('stop-commands', 'kr-pwned-token'), 1],
    ['a warning that is the tree’s line', cmd('warning', 'kr-pwned annotation'), 1],
    ['the action’s own error quoting the text', cmd('error', 'build failed: x\n::add-path::/tmp/kr-pwned'), 0],
    ['a mask of the action’s own', cmd('add-mask', 'secret'), 0],
    ['an output the tree names', cmd('set-output', '1', { name: 'kr-pwned' }), 1],
    ['the action’s own output holding the text', cmd('set-output', '{"error":"kr-pwned"}', { name: 'report' }), 0],
    ['plain output', line({ jobID: 'preview', msg: 'kr-pwned', raw_output: true }), 0],
  ])('%s', (_, log, n) => {
    expect(injectedCommands(log, 'kr-pwned')).toHaveLength(n);
  });
});

describe('grantsIdToken', () => {
  it.each<[string, string, boolean]>([
    ['at the top level', 'permissions:\n  contents: read\n  id-token: write\n', true],
    ['read only', 'permissions:\n  id-token: read\n', false],
    ['not named', 'permissions:\n  contents: read\n', false],
    ['write-all', 'permissions: write-all\n', true],
    ['no permissions at all (the default has none)', '', false],
  ])('%s', (_, extra, granted) => {
    expect(grantsIdToken(wf('      - run: "true"\n', extra))).toBe(granted);
  });

  it('in one job', () => {
    const yaml =
      'on: push\njobs:\n  a:\n    runs-on: x\n    permissions: {id-token: write}\n    steps: [{run: "true"}]\n';
    expect(grantsIdToken(yaml)).toBe(true);
  });
});
