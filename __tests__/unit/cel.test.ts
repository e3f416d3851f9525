import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { celStatusReader, celSyntaxProblem, evalReadyExpr, toCel } from '../../src/kstatus/cel.js';
import type { Status } from '../../src/kstatus/status.js';
import type { HealthCheckExpr } from '../../src/flux/types.js';

// cert-manager's Certificate, with the expressions from Flux's CEL cheatsheet.
const CERT: HealthCheckExpr = {
  apiVersion: 'cert-manager.io/v1',
  kind: 'Certificate',
  inProgress:
    "status.conditions.filter(e, e.type == 'Issuing').all(e, e.observedGeneration == metadata.generation && e.status == 'True')",
  failed:
    "status.conditions.filter(e, e.type == 'Ready').all(e, e.observedGeneration == metadata.generation && e.status == 'False')",
  current:
    "status.conditions.filter(e, e.type == 'Ready').all(e, e.observedGeneration == metadata.generation && e.status == 'True')",
};
// A whole-group entry and a kind-specific one in the same group: the kind wins.
const GROUP: HealthCheckExpr = { apiVersion: 'example.com/v1', current: "status.phase == 'Done'" };
const WIDGET: HealthCheckExpr = {
  apiVersion: 'example.com/v1alpha1',
  kind: 'Widget',
  current: 'status.readyReplicas >= spec.replicas',
  failed: "has(status.error) && status.error != ''",
};
const OPTIONAL: HealthCheckExpr = {
  apiVersion: 'opt.example.com/v1',
  kind: 'Thing',
  current: "status.?phase.orValue('') == 'Ready' && sets.contains(status.?features.orValue([]), ['a'])",
};

const cert = (gen: number, conds: string) =>
  `apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: c, generation: ${gen}}\nstatus:\n  conditions: ${conds}`;

interface Row {
  why: string;
  yaml: string;
  status: Status | undefined;
  message?: string;
}

const rows: Row[] = [
  {
    why: 'issuing → InProgress (inProgress is tried first)',
    yaml: cert(
      1,
      "[{type: Issuing, status: 'True', observedGeneration: 1}, {type: Ready, status: 'True', observedGeneration: 1}]",
    ),
    status: 'InProgress',
    message: 'healthCheckExprs: inProgress is true',
  },
  {
    why: 'no Issuing condition: all() over nothing is true → InProgress (CEL semantics, as in Flux)',
    yaml: cert(1, "[{type: Ready, status: 'True', observedGeneration: 1}]"),
    status: 'InProgress',
  },
  {
    why: 'Ready False at this generation → Failed',
    yaml: cert(
      2,
      "[{type: Issuing, status: 'False', observedGeneration: 2}, {type: Ready, status: 'False', observedGeneration: 2}]",
    ),
    status: 'Failed',
    message: 'healthCheckExprs: failed is true',
  },
  {
    why: 'Ready True at this generation → Current',
    yaml: cert(
      2,
      "[{type: Issuing, status: 'False', observedGeneration: 2}, {type: Ready, status: 'True', observedGeneration: 2}]",
    ),
    status: 'Current',
    message: 'healthCheckExprs: current is true',
  },
  {
    why: 'a condition of an older generation → none true → InProgress',
    yaml: cert(
      3,
      "[{type: Ready, status: 'True', observedGeneration: 2}, {type: Issuing, status: 'False', observedGeneration: 2}]",
    ),
    status: 'InProgress',
    message: 'healthCheckExprs: no expression is true yet',
  },
  {
    why: 'status.observedGeneration behind generation → InProgress before any expression',
    yaml: 'apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g, generation: 4}\nstatus: {observedGeneration: 3, phase: Done}',
    status: 'InProgress',
    message: 'generation 4 not yet observed',
  },
  {
    why: 'a non-integer observedGeneration skips the generation rule',
    yaml: 'apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g, generation: 4}\nstatus: {observedGeneration: "3", phase: Done}',
    status: 'Current',
  },
  {
    why: 'whole-group entry matches any kind of the group, whatever the version',
    yaml: 'apiVersion: example.com/v2\nkind: Gadget\nmetadata: {name: g}\nstatus: {phase: Done}',
    status: 'Current',
  },
  {
    why: 'the kind-specific entry wins over the whole-group entry',
    yaml: 'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {replicas: 2}\nstatus: {phase: Done, readyReplicas: 1}',
    status: 'InProgress',
  },
  {
    why: 'ints compare with ints (readyReplicas >= replicas)',
    yaml: 'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {replicas: 2}\nstatus: {readyReplicas: 2}',
    status: 'Current',
  },
  {
    why: 'failed wins over current',
    yaml: 'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {replicas: 2}\nstatus: {readyReplicas: 2, error: boom}',
    status: 'Failed',
  },
  {
    why: 'a missing field is an evaluation error → Unknown (the wait goes on)',
    yaml: 'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {replicas: 2}',
    status: 'Unknown',
  },
  {
    why: 'no status at all → Unknown for an expression reading status',
    yaml: 'apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}',
    status: 'Unknown',
  },
  {
    why: 'optional field access and the sets extension',
    yaml: 'apiVersion: opt.example.com/v1\nkind: Thing\nmetadata: {name: t}\nstatus: {phase: Ready, features: [a, b]}',
    status: 'Current',
  },
  {
    why: 'optional access on a missing field gives the default, not an error',
    yaml: 'apiVersion: opt.example.com/v1\nkind: Thing\nmetadata: {name: t}\nstatus: {}',
    status: 'InProgress',
  },
  {
    why: 'another group → no match (kstatus decides)',
    yaml: 'apiVersion: other.io/v1\nkind: Widget\nmetadata: {name: w}',
    status: undefined,
  },
  {
    why: 'same group, kind without an entry and no whole-group entry → no match',
    yaml: 'apiVersion: cert-manager.io/v1\nkind: Issuer\nmetadata: {name: i}',
    status: undefined,
  },
];

describe('celStatusReader', () => {
  const reader = celStatusReader([CERT, GROUP, WIDGET, OPTIONAL]);
  it.each(rows)('$why', ({ yaml, status, message }) => {
    const result = reader(parse(yaml) as Record<string, unknown>);
    expect(result?.status).toBe(status);
    if (message !== undefined) expect(result?.message).toBe(message);
  });

  it('reports an expression that does not return a bool as Unknown, naming it', () => {
    const r = celStatusReader([{ apiVersion: 'x.io/v1', current: 'status.count' }]);
    expect(r({ apiVersion: 'x.io/v1', kind: 'K', status: { count: 3 } })).toEqual({
      status: 'Unknown',
      message: 'healthCheckExprs: healthCheckExprs current returned the int 3, not a bool',
    });
  });
});

describe('celSyntaxProblem', () => {
  it.each([
    ["status.conditions.exists(c, c.type == 'Ready')", undefined],
    ['has(status.x) && status.x > 1', undefined],
    ["status.?x.orValue('')", undefined],
    ["status.phase == 'Ready", 'Unterminated string'],
    ['a &&', 'Unexpected token: EOF'],
    ['(a', 'Expected RPAREN, got EOF'],
  ])('%s', (text, problem) => {
    const got = celSyntaxProblem(text);
    if (problem === undefined) expect(got).toBeUndefined();
    else expect(got).toContain(problem);
  });
});

describe('toCel', () => {
  it.each([
    [3, 'int', 3n],
    [3, 'double', 3],
    [1.5, 'int', 1.5],
    [{ a: [1, 'x', null, true] }, 'int', { a: [1n, 'x', null, true] }],
  ] as const)('%j as %s', (input, mode, want) => {
    expect(toCel(input, mode)).toEqual(want);
  });
});

describe('evalReadyExpr', () => {
  const self = { metadata: { name: 'apps', generation: 1, labels: { 'app/version': 'v2' } } };
  const dep = (version: string, ready: string, observed: number) => ({
    metadata: { name: 'infra', generation: 1, labels: { 'app/version': version } },
    status: { observedGeneration: observed, conditions: [{ type: 'Ready', status: ready }] },
  });
  // The example from Flux's documentation.
  const DOC =
    "dep.metadata.labels['app/version'] == self.metadata.labels['app/version'] && " +
    "dep.status.conditions.filter(e, e.type == 'Ready').all(e, e.status == 'True') && " +
    'dep.metadata.generation == dep.status.observedGeneration';
  it.each([
    ['same version, ready, observed', dep('v2', 'True', 1), true],
    ['other version', dep('v1', 'True', 1), false],
    ['not ready', dep('v2', 'False', 1), false],
    ['generation not observed', dep('v2', 'True', -1), false],
  ])('%s', (_why, d, want) => {
    expect(evalReadyExpr(DOC, self, d)).toBe(want);
  });

  it('compares numbers as doubles, as google.protobuf.Struct does', () => {
    expect(
      evalReadyExpr('dep.metadata.generation == 1.0 && dep.metadata.generation == 1', self, dep('v', 'True', 1)),
    ).toBe(true);
  });

  it('throws when the expression is not a bool or reads a missing field', () => {
    expect(() => evalReadyExpr('dep.metadata.name', self, dep('v', 'True', 1))).toThrow(
      'readyExpr returned the string "infra", not a bool',
    );
    expect(() => evalReadyExpr('dep.spec.path == "x"', self, dep('v', 'True', 1))).toThrow(/spec/);
  });
});
