import { describe, expect, it } from 'vitest';
import {
  compareStep,
  deepDiff,
  fieldPaths,
  fluxVerdicts,
  keyOf,
  knownPatterns,
  listedAs,
  matches,
  normalise,
  subjectOfId,
  type SideStep,
} from '../../test/parity/compare.ts';

const step = (over: Partial<SideStep> = {}): SideStep => ({
  outcomes: { app: 'ready' },
  verdicts: { 'ConfigMap/ns/cm': 'created' },
  inventory: { app: ['ns_cm__ConfigMap v1'] },
  objects: {
    'ConfigMap/ns/cm': {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm', namespace: 'ns', uid: 'u1', resourceVersion: '5' },
      data: { a: '1' },
    },
  },
  ...over,
});

describe('fieldPaths', () => {
  it.each([
    [{}, []],
    [{ 'f:data': { 'f:a': {} } }, ['f:data.f:a']],
    [{ 'f:metadata': { 'f:labels': { '.': {}, 'f:x': {} } } }, ['f:metadata.f:labels', 'f:metadata.f:labels.f:x']],
    [
      { 'f:spec': { 'f:ports': { 'k:{"port":80}': { '.': {}, 'f:port': {} } } } },
      ['f:spec.f:ports.k:{"port":80}', 'f:spec.f:ports.k:{"port":80}.f:port'],
    ],
  ])('%j → %j', (set, paths) => {
    expect(fieldPaths(set)).toEqual(paths);
  });
});

describe('deepDiff', () => {
  it.each([
    [{ a: 1 }, { a: 1 }, []],
    [{ a: 1 }, { a: 2 }, ['a']],
    [{ a: { b: [1, 2] } }, { a: { b: [1, 3] } }, ['a.b[1]']],
    [{ a: [1] }, { a: [1, 2] }, ['a']],
    [{ 'x.y/z': 1 }, {}, ['["x.y/z"]']],
    [{ m: { 'app.kubernetes.io/name': 'a' } }, { m: {} }, ['m["app.kubernetes.io/name"]']],
  ])('%j vs %j → %j', (a, b, paths) => {
    expect(deepDiff(a, b).map((d) => d.path)).toEqual(paths);
  });
});

describe('normalise', () => {
  it('drops what the API server assigns and groups managed fields by manager and operation, status aside', () => {
    const n = normalise({
      kind: 'Service',
      metadata: {
        name: 's',
        uid: 'x',
        resourceVersion: '1',
        creationTimestamp: 't',
        generation: 2,
        managedFields: [
          { manager: 'm', operation: 'Apply', fieldsV1: { 'f:spec': { 'f:type': {} } } },
          { manager: 'm', operation: 'Update', subresource: 'status', fieldsV1: { 'f:status': {} } },
        ],
      },
      spec: {
        clusterIP: '10.0.0.1',
        clusterIPs: ['10.0.0.1'],
        ports: [{ port: 80, nodePort: 30000 }],
        type: 'NodePort',
      },
      status: { loadBalancer: {} },
    });
    expect(n.object).toEqual({
      kind: 'Service',
      metadata: { name: 's', generation: 2 },
      spec: { ports: [{ port: 80 }], type: 'NodePort' },
    });
    expect(n.managed).toEqual({ 'm/Apply': ['f:spec.f:type'] });
  });
});

describe('known differences', () => {
  const md = [
    '# Differences',
    '## Owner of ports',
    'Parity: `managedFields Service/* kustomize-controller/Apply *.f:protocol: only in flux`',
    '## Two patterns',
    'Parity: `verdict */x flux=configured ours=unchanged` `exists Namespace/* *`',
  ].join('\n');
  it('reads every pattern with its section', () => {
    expect(knownPatterns(md)).toEqual([
      {
        pattern: 'managedFields Service/* kustomize-controller/Apply *.f:protocol: only in flux',
        section: 'Owner of ports',
      },
      { pattern: 'verdict */x flux=configured ours=unchanged', section: 'Two patterns' },
      { pattern: 'exists Namespace/* *', section: 'Two patterns' },
    ]);
  });
  it.each([
    ['a*c', 'abbbc', true],
    ['a*c', 'abbbd', false],
    ['a.c', 'abc', false],
    ['x (y)', 'x (y)', true],
    ['*', 'anything at all', true],
  ])('%s matches %s: %s', (pattern, key, want) => {
    expect(matches(pattern, key)).toBe(want);
  });
  it('finds the section a difference is listed under, and nothing for an unlisted one', () => {
    const known = knownPatterns(md);
    const d = { aspect: 'verdict', subject: 'ConfigMap/ns/x', detail: 'flux=configured ours=unchanged', message: '' };
    expect(listedAs(d, known)?.section).toBe('Two patterns');
    expect(listedAs({ ...d, detail: 'flux=created ours=unchanged' }, known)).toBeUndefined();
  });
});

describe('fluxVerdicts', () => {
  it('reads apply outputs and garbage collection lines, the first verdict winning', () => {
    expect(
      fluxVerdicts([
        { msg: 'server-side apply completed', output: { 'Namespace/a': 'created', 'ConfigMap/a/x': 'configured' } },
        { msg: 'garbage collection completed: Secret/a/old deleted\nConfigMap/a/gone deleted' },
        { msg: 'server-side apply completed', output: { 'ConfigMap/a/x': 'unchanged' } },
        { msg: 'Reconciliation finished in 1s' },
      ]),
    ).toEqual({
      'Namespace/a': 'created',
      'ConfigMap/a/x': 'configured',
      'Secret/a/old': 'deleted',
      'ConfigMap/a/gone': 'deleted',
    });
  });
});

describe('subjectOfId', () => {
  it.each([
    ['ns_cm__ConfigMap', 'ConfigMap/ns/cm'],
    ['_team-a__Namespace', 'Namespace/team-a'],
    ['ns_web_apps_Deployment', 'Deployment/ns/web'],
    ['_system__reader_rbac.authorization.k8s.io_ClusterRole', 'ClusterRole/system:reader'],
    ['_system:reader_rbac.authorization.k8s.io_ClusterRole', 'ClusterRole/system:reader'],
  ])('%s → %s', (id, subject) => {
    expect(subjectOfId(id)).toBe(subject);
  });
});

describe('compareStep', () => {
  it('finds nothing between identical sides, server-assigned metadata aside', () => {
    const other = step();
    (other.objects['ConfigMap/ns/cm']!['metadata'] as Record<string, unknown>)['uid'] = 'u2';
    expect(compareStep(step(), other)).toEqual([]);
  });

  it.each<[string, Partial<SideStep>, string]>([
    ['an outcome', { outcomes: { app: 'failed' } }, 'outcome app flux=ready ours=failed'],
    [
      'a verdict',
      { verdicts: { 'ConfigMap/ns/cm': 'configured' } },
      'verdict ConfigMap/ns/cm flux=created ours=configured',
    ],
    ['an inventory entry', { inventory: { app: [] } }, 'inventory app ns_cm__ConfigMap v1: only in flux'],
    [
      'an object that exists on one side only',
      { objects: { 'ConfigMap/ns/cm': null } },
      'exists ConfigMap/ns/cm flux=present ours=absent',
    ],
    [
      'a field',
      {
        objects: {
          'ConfigMap/ns/cm': {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: 'cm', namespace: 'ns' },
            data: { a: '2' },
          },
        },
      },
      'object ConfigMap/ns/cm data.a',
    ],
  ])('reports %s', (_what, over, key) => {
    expect(compareStep(step(), step(over)).map(keyOf)).toEqual([key]);
  });

  it('compares only the verdicts a failed Flux reconcile logged, and marks inventories after a failure', () => {
    const failed = { outcomes: { app: 'failed' as const } };
    const keys = compareStep(
      step({ ...failed, verdicts: {}, inventory: { app: [] } }),
      step({ ...failed, verdicts: { 'ConfigMap/ns/cm': 'created' } }),
    ).map(keyOf);
    expect(keys).toEqual(['inventory app ns_cm__ConfigMap v1: only in ours (after a failed apply)']);
  });

  it('counts an object being deleted as gone', () => {
    const terminating = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a', deletionTimestamp: 't' } };
    expect(
      compareStep(step({ objects: { 'Namespace/a': terminating } }), step({ objects: { 'Namespace/a': null } })),
    ).toEqual([]);
  });

  it("ignores the uid in a Job controller's selector labels", () => {
    const job = (uid: string) => ({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'j', namespace: 'ns' },
      spec: {
        selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } },
        template: {
          metadata: { labels: { 'controller-uid': uid, 'batch.kubernetes.io/controller-uid': uid, app: uid } },
        },
      },
    });
    const keys = compareStep(
      step({ objects: { 'Job/ns/j': job('u1') } }),
      step({ objects: { 'Job/ns/j': job('u2') } }),
    ).map(keyOf);
    expect(keys).toEqual(['object Job/ns/j spec.template.metadata.labels.app']);
  });

  it('never shows a Secret value, only that it differs', () => {
    const secret = (v: string) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's', namespace: 'ns' },
      data: { k: v },
    });
    const [d] = compareStep(
      step({ objects: { 'Secret/ns/s': secret('c2VjcmV0LWE=') } }),
      step({ objects: { 'Secret/ns/s': secret('c2VjcmV0LWI=') } }),
    );
    expect(d?.message).toBe('data.k: differs (Secret value)');
  });

  it('reports managed fields owned on one side only', () => {
    const owned = (fields: Record<string, unknown>) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'cm',
        namespace: 'ns',
        managedFields: [{ manager: 'kc', operation: 'Apply', fieldsV1: fields }],
      },
    });
    const keys = compareStep(
      step({ objects: { 'ConfigMap/ns/cm': owned({ 'f:data': { 'f:a': {} } }) } }),
      step({ objects: { 'ConfigMap/ns/cm': owned({ 'f:data': { 'f:b': {} } }) } }),
    ).map(keyOf);
    expect(keys).toEqual([
      'managedFields ConfigMap/ns/cm kc/Apply f:data.f:a: only in flux',
      'managedFields ConfigMap/ns/cm kc/Apply f:data.f:b: only in ours',
    ]);
  });
});
