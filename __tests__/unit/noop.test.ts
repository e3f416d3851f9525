import { describe, expect, it } from 'vitest';
import { provenUnchanged } from '../../src/ssa/noop.js';

const FM = 'kustomize-controller';
type Obj = Record<string, unknown>;

const entry = (fieldsV1: Obj, extra: Obj = {}) => ({
  manager: FM,
  operation: 'Apply',
  apiVersion: 'v1',
  fieldsType: 'FieldsV1',
  fieldsV1,
  ...extra,
});
const other = (manager: string, operation: string, fieldsV1: Obj) => ({
  manager,
  operation,
  apiVersion: 'v1',
  fieldsType: 'FieldsV1',
  fieldsV1,
});

const cm = (data: Obj, labels: Obj = { app: 'a' }): Obj => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'c', namespace: 'n', labels },
  data,
});
const fieldSet = (keys: string[]): Obj =>
  Object.fromEntries([['.', {}] as [string, Obj], ...keys.map((k): [string, Obj] => [`f:${k}`, {}])]);
const cmFields = (keys: string[], labels = ['app']): Obj => ({
  'f:data': fieldSet(keys),
  'f:metadata': { 'f:labels': fieldSet(labels) },
});
const liveOf = (obj: Obj, managedFields: unknown[], extraMeta: Obj = {}): Obj => ({
  ...obj,
  metadata: {
    ...(obj['metadata'] as Obj),
    uid: 'u-1',
    resourceVersion: '7',
    creationTimestamp: '2026-01-01T00:00:00Z',
    ...extraMeta,
    managedFields,
  },
});

const strSecret = (stringData: Obj): Obj => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 's', namespace: 'n' },
  stringData,
});
const strSecretLive = (data: Obj, ownedKeys: string[]): Obj =>
  liveOf({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'n' }, data, type: 'Opaque' }, [
    entry({ 'f:stringData': Object.fromEntries(ownedKeys.map((k) => [`f:${k}`, {}])) }),
  ]);

// A Deployment as applied and as the server keeps it: defaults in the container and its port
// (whose list key includes the defaulted protocol), an atomic selector, and status.
const deploy = (image: string, ports: Obj[] = [{ containerPort: 8080 }], args?: string[]): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'd', namespace: 'n' },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: 'd' } },
    template: {
      metadata: { labels: { app: 'd' } },
      spec: { containers: [{ name: 'app', image, ports, ...(args ? { args } : {}) }] },
    },
  },
});
const deployLive = (image: string, opts: { args?: string[]; argsOwner?: string; ports?: Obj[] } = {}): Obj => {
  const ports = opts.ports ?? [{ containerPort: 8080, protocol: 'TCP' }];
  const container: Obj = { name: 'app', image, ports, imagePullPolicy: 'IfNotPresent', resources: {} };
  if (opts.args) container['args'] = opts.args;
  const containerFields: Obj = {
    '.': {},
    'f:name': {},
    'f:image': {},
    'f:ports': { '.': {}, 'k:{"containerPort":8080,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } },
  };
  if (opts.args && !opts.argsOwner) containerFields['f:args'] = {};
  const fields = {
    'f:spec': {
      'f:replicas': {},
      'f:selector': {},
      'f:template': {
        'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
        'f:spec': { 'f:containers': { 'k:{"name":"app"}': containerFields } },
      },
    },
  };
  const managed: unknown[] = [entry(fields, { apiVersion: 'apps/v1' })];
  if (opts.argsOwner) {
    managed.push(
      other(opts.argsOwner, 'Update', {
        'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"app"}': { 'f:args': {} } } } } },
      }),
    );
  }
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'd',
      namespace: 'n',
      generation: 1,
      resourceVersion: '9',
      annotations: { 'deployment.kubernetes.io/revision': '1' },
      managedFields: managed,
    },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'd' } },
      strategy: { type: 'RollingUpdate' },
      template: {
        metadata: { labels: { app: 'd' } },
        spec: { containers: [container], restartPolicy: 'Always' },
      },
    },
    status: { replicas: 1 },
  };
};

describe('provenUnchanged', () => {
  it.each<[string, Obj, Obj, true | RegExp]>([
    ['the same ConfigMap, all ours', cm({ a: '1' }), liveOf(cm({ a: '1' }), [entry(cmFields(['a']))]), true],
    ['a changed value', cm({ a: '2' }), liveOf(cm({ a: '1' }), [entry(cmFields(['a']))]), /\/data\/a differs/],
    ['a new key', cm({ a: '1', b: '2' }), liveOf(cm({ a: '1' }), [entry(cmFields(['a']))]), /\/data\/b is not live/],
    [
      'an owned key no longer desired (the apply would remove it)',
      cm({ a: '1' }),
      liveOf(cm({ a: '1', b: '2' }), [entry(cmFields(['a', 'b']))]),
      /owned \/data\/b is not desired/,
    ],
    [
      "another manager's extra key stays",
      cm({ a: '1' }),
      liveOf(cm({ a: '1', b: '2' }), [
        entry(cmFields(['a'])),
        other('kubectl-edit', 'Update', { 'f:data': { 'f:b': {} } }),
      ]),
      true,
    ],
    [
      'a desired key owned only by another manager (the apply would take it over)',
      cm({ a: '1', b: '2' }),
      liveOf(cm({ a: '1', b: '2' }), [
        entry(cmFields(['a'])),
        other('kubectl-edit', 'Update', { 'f:data': { 'f:b': {} } }),
      ]),
      /\/data\/b is not ours/,
    ],
    [
      'a label value changed',
      cm({ a: '1' }, { app: 'b' }),
      liveOf(cm({ a: '1' }, { app: 'a' }), [entry(cmFields(['a']))]),
      /\/metadata\/labels\/app differs/,
    ],
    [
      'an owned label no longer desired',
      cm({ a: '1' }, {}),
      liveOf(cm({ a: '1' }, { app: 'a' }), [entry(cmFields(['a']))]),
      /owned \/metadata\/labels\/app is not desired/,
    ],
    [
      'no entry of our manager',
      cm({ a: '1' }),
      liveOf(cm({ a: '1' }), [other('kubectl', 'Apply', cmFields(['a']))]),
      /no Apply entry/,
    ],
    [
      'our manager only by Update',
      cm({ a: '1' }),
      liveOf(cm({ a: '1' }), [{ ...entry(cmFields(['a'])), operation: 'Update' }]),
      /no Apply entry/,
    ],
    [
      'our entry at another apiVersion',
      cm({ a: '1' }),
      liveOf(cm({ a: '1' }), [entry(cmFields(['a']), { apiVersion: 'v1beta1' })]),
      /owned at v1beta1/,
    ],
    [
      'two Apply entries of ours',
      cm({ a: '1' }),
      liveOf(cm({ a: '1' }), [entry(cmFields(['a'])), entry(cmFields(['a']))]),
      /2 Apply entries/,
    ],
    [
      'a status-subresource entry is not ours to compare',
      cm({ a: '1' }),
      liveOf(cm({ a: '1' }), [entry(cmFields(['a']), { subresource: 'status' })]),
      /no Apply entry/,
    ],
    [
      'a null in the desired object',
      cm({ a: null }),
      liveOf(cm({ a: '1' }), [entry(cmFields(['a']))]),
      /null at \/data\/a/,
    ],
    [
      'a number where the server keeps a string',
      cm({ a: 1 }),
      liveOf(cm({ a: '1' }), [entry(cmFields(['a']))]),
      /\/data\/a differs/,
    ],
    ['Secret stringData stored as the same data', strSecret({ k: 'v' }), strSecretLive({ k: 'dg==' }, ['k']), true],
    [
      'Secret stringData beside data keys of others',
      strSecret({ k: 'v' }),
      strSecretLive({ k: 'dg==', other: 'eA==' }, ['k']),
      true,
    ],
    [
      'Secret stringData with a new value',
      strSecret({ k: 'w' }),
      strSecretLive({ k: 'dg==' }, ['k']),
      /\/stringData\/k differs/,
    ],
    [
      'Secret stringData with a new key',
      strSecret({ k: 'v', n: 'x' }),
      strSecretLive({ k: 'dg==' }, ['k']),
      /\/stringData\/n differs/,
    ],
    [
      'Secret stringData with a key removed',
      strSecret({ k: 'v' }),
      strSecretLive({ k: 'dg==', gone: 'eA==' }, ['k', 'gone']),
      /owned \/stringData\/gone is not live/,
    ],
    [
      'Secret with a key in both data and stringData',
      { ...strSecret({ k: 'v' }), data: { k: 'dg==' } },
      strSecretLive({ k: 'dg==' }, ['k']),
      /k is in both/,
    ],
    [
      'Secret data, all ours',
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 's', namespace: 'n' },
        data: { k: 'dg==' },
        type: 'Opaque',
      },
      liveOf(
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 's', namespace: 'n' },
          data: { k: 'dg==' },
          type: 'Opaque',
        },
        [entry({ 'f:data': { '.': {}, 'f:k': {} }, 'f:type': {} })],
      ),
      true,
    ],
    [
      'an unknown fieldsV1 key',
      cm({ a: '1' }),
      liveOf(cm({ a: '1' }), [entry({ ...cmFields(['a']), 'x:odd': {} })]),
      /unknown fieldsV1 key x:odd/,
    ],
    [
      'a Deployment with server defaults (list key with the defaulted protocol)',
      deploy('img:1'),
      deployLive('img:1'),
      true,
    ],
    ['a Deployment with a new image', deploy('img:2'), deployLive('img:1'), /containers\/0\/image differs/],
    [
      'a port item added by someone else (list lengths differ)',
      deploy('img:1'),
      deployLive('img:1', {
        ports: [
          { containerPort: 8080, protocol: 'TCP' },
          { containerPort: 9090, protocol: 'TCP' },
        ],
      }),
      /list \/spec\/template\/spec\/containers\/0\/ports differs/,
    ],
    ['an atomic list (args) we own', deploy('img:1', undefined, ['-v']), deployLive('img:1', { args: ['-v'] }), true],
    [
      'an atomic list taken over by another manager, same value (the apply would take it back)',
      deploy('img:1', undefined, ['-v']),
      deployLive('img:1', { args: ['-v'], argsOwner: 'kubectl-edit' }),
      /containers\/0\/args\/0 is not ours/,
    ],
    [
      'a set list (v: keys)',
      { apiVersion: 'v1', kind: 'X', metadata: { name: 'x' }, spec: { finalizers: ['a', 'b'] } },
      liveOf({ apiVersion: 'v1', kind: 'X', metadata: { name: 'x' }, spec: { finalizers: ['a', 'b'] } }, [
        entry({ 'f:spec': { 'f:finalizers': { '.': {}, 'v:"a"': {}, 'v:"b"': {} } } }),
      ]),
      true,
    ],
    [
      'a list owned by index (i: keys)',
      { apiVersion: 'v1', kind: 'X', metadata: { name: 'x' }, spec: { items: [{ v: 1 }] } },
      liveOf({ apiVersion: 'v1', kind: 'X', metadata: { name: 'x' }, spec: { items: [{ v: 1 }] } }, [
        entry({ 'f:spec': { 'f:items': { 'i:0': { 'f:v': {} } } } }),
      ]),
      true,
    ],
    [
      'two live items with one key',
      { apiVersion: 'v1', kind: 'X', metadata: { name: 'x' }, spec: { l: [{ name: 'a' }, { name: 'a' }] } },
      liveOf({ apiVersion: 'v1', kind: 'X', metadata: { name: 'x' }, spec: { l: [{ name: 'a' }, { name: 'a' }] } }, [
        entry({ 'f:spec': { 'f:l': { 'k:{"name":"a"}': { 'f:name': {} } } } }),
      ]),
      /2 list items match/,
    ],
    [
      'an empty map we own',
      { apiVersion: 'v1', kind: 'X', metadata: { name: 'x' }, spec: { resources: {} } },
      liveOf({ apiVersion: 'v1', kind: 'X', metadata: { name: 'x' }, spec: { resources: {} } }, [
        entry({ 'f:spec': { 'f:resources': {} } }),
      ]),
      true,
    ],
    [
      'an empty map we do not own',
      { apiVersion: 'v1', kind: 'X', metadata: { name: 'x' }, spec: { resources: {}, x: 1 } },
      liveOf({ apiVersion: 'v1', kind: 'X', metadata: { name: 'x' }, spec: { resources: {}, x: 1 } }, [
        entry({ 'f:spec': { 'f:x': {} } }),
      ]),
      /\/spec\/resources is not ours/,
    ],
    [
      'status in the desired object (never ours by apply)',
      { ...cm({ a: '1' }), status: { phase: 'x' } },
      liveOf({ ...cm({ a: '1' }), status: { phase: 'x' } }, [entry(cmFields(['a']))]),
      /\/status\/phase is not ours/,
    ],
    [
      'another namespace',
      { ...cm({ a: '1' }), metadata: { name: 'c', namespace: 'm', labels: { app: 'a' } } },
      liveOf(cm({ a: '1' }), [entry(cmFields(['a']))]),
      /\/metadata\/namespace differs/,
    ],
  ])('%s', (_what, desired, live, want) => {
    const proof = provenUnchanged(desired, live, FM);
    if (want === true) {
      expect(proof).toEqual({ unchanged: true });
    } else {
      expect(proof.unchanged).toBe(false);
      expect(proof.unchanged ? '' : proof.why).toMatch(want);
    }
  });
});
