import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/objects/kube.js';
import type { ChangeSetEntry } from '../../src/ssa/changeset.js';
import { appliedSoFar } from '../../src/ssa/applied.js';
import { objectProblems, unservedKinds } from '../../src/ssa/prevalidate.js';
import { parseServerVersion } from '../../src/cluster/discovery.js';

const obj = (apiVersion: string, kind: string, name: string, extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion,
  kind,
  metadata: { name, ...((extra['metadata'] as object | undefined) ?? {}) },
  ...Object.fromEntries(Object.entries(extra).filter(([k]) => k !== 'metadata')),
});

describe('objectProblems: names the API server refuses', () => {
  it.each([
    { o: obj('v1', 'ConfigMap', 'Bad_Name'), want: 'ConfigMap/Bad_Name: metadata.name "Bad_Name" is not a valid name' },
    { o: obj('v1', 'ConfigMap', 'a..b'), want: 'ConfigMap/a..b: metadata.name "a..b" is not a valid name' },
    { o: obj('v1', 'ConfigMap', 'x'.repeat(254)), want: 'at most 253 characters' },
    {
      o: obj('v1', 'Namespace', 'team.a'),
      want: 'Namespace/team.a: metadata.name "team.a" is not a valid name for a Namespace',
    },
    { o: obj('v1', 'Namespace', 'n'.repeat(64)), want: 'at most 63 characters' },
    {
      o: obj('v1', 'Service', 'web.x'),
      want: 'Service/web.x: metadata.name "web.x" is not a valid name for a Service',
    },
    { o: obj('apps/v1', 'StatefulSet', 'db.x'), want: 'not a valid name for a StatefulSet' },
    { o: obj('apps/v1', 'Deployment', 'Web'), want: 'Deployment/Web: metadata.name "Web" is not a valid name' },
    { o: obj('batch/v1', 'CronJob', 'c'.repeat(53)), want: 'CronJob/' },
    {
      o: obj('v1', 'ConfigMap', 'ok', { metadata: { namespace: 'Bad_NS' } }),
      want: 'ConfigMap/Bad_NS/ok: metadata.namespace "Bad_NS" is not a valid namespace name',
    },
    {
      o: obj('v1', 'ConfigMap', 'ok', { metadata: { labels: { 'app/x/y': 'v' } } }),
      want: 'ConfigMap/ok: metadata.labels key "app/x/y" is not a valid label key',
    },
    {
      o: obj('v1', 'ConfigMap', 'ok', { metadata: { labels: { app: 'has space' } } }),
      want: 'ConfigMap/ok: metadata.labels["app"] value (9 characters) is not a valid label value',
    },
    {
      o: obj('v1', 'ConfigMap', 'ok', { metadata: { labels: { app: 'v'.repeat(64) } } }),
      want: 'is not a valid label value',
    },
    {
      o: obj('v1', 'ConfigMap', 'ok', { metadata: { annotations: { 'bad key!': 'x' } } }),
      want: 'ConfigMap/ok: metadata.annotations key "bad key!" is not a valid annotation key',
    },
    { o: obj('example.com/v1', 'Widget', 'a/b'), want: 'Widget/a/b: metadata.name "a/b" may not contain "/" or "%"' },
    { o: obj('example.com/v1', 'Widget', '..'), want: 'metadata.name ".." may not be "." or ".."' },
    {
      o: obj('apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'widget.example.com', {
        spec: { group: 'example.com', names: { plural: 'widgets', kind: 'Widget' } },
      }),
      want: 'CustomResourceDefinition/widget.example.com: metadata.name must be spec.names.plural "." spec.group: "widgets.example.com"',
    },
  ])('$want', ({ o, want }) => {
    const problems = objectProblems([o]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(want);
  });

  it.each([
    obj('v1', 'ConfigMap', 'a.b-c.d'),
    obj('v1', 'ConfigMap', 'x'.repeat(253)),
    obj('v1', 'Namespace', 'team-a'),
    obj('v1', 'Service', 'web-1'),
    // A server of unknown version: a Service gets the looser rule (DNS-1123 label), the dry-run judges.
    obj('v1', 'Service', '1web'),
    obj('policy/v1', 'PodDisruptionBudget', 'Bad_Name', { metadata: { namespace: 'a' } }),
    // RBAC names are path segments: capitals, ":" and "_" are allowed (system:controller:x).
    obj('rbac.authorization.k8s.io/v1', 'ClusterRole', 'system:Bad_Name'),
    obj('rbac.authorization.k8s.io/v1', 'RoleBinding', 'Read_All', { metadata: { namespace: 'a' } }),
    // Kinds the rules here do not know keep the server's word, beyond the universal rules.
    obj('example.com/v1', 'Widget', 'Capital_Name'),
    obj('v1', 'ConfigMap', 'ok', { metadata: { labels: { 'example.com/app': 'A.b_c-1', empty: '' } } }),
    obj('apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'widgets.example.com', {
      spec: { group: 'example.com', names: { plural: 'widgets', kind: 'Widget' } },
    }),
  ])('accepts %j', (o) => {
    expect(objectProblems([o])).toEqual([]);
  });
});

describe('a Service name by the server version (RelaxedServiceNameValidation)', () => {
  it.each([
    { server: { major: 1, minor: 34 }, name: '1web', refused: 'for a Service on Kubernetes 1.34' },
    { server: { major: 1, minor: 35 }, name: '1web', refused: 'starting with a letter' },
    { server: { major: 1, minor: 36 }, name: '1web', refused: undefined },
    { server: { major: 1, minor: 37 }, name: '1web', refused: undefined },
    { server: undefined, name: '1web', refused: undefined },
    { server: { major: 1, minor: 34 }, name: 'web-1', refused: undefined },
    { server: { major: 1, minor: 37 }, name: 'web.1', refused: 'for a Service' },
  ])('$name on $server', ({ server, name, refused }) => {
    const problems = objectProblems([obj('v1', 'Service', name)], server);
    if (refused === undefined) expect(problems).toEqual([]);
    else expect(problems).toEqual([expect.stringContaining(refused)]);
  });

  it.each([
    [
      { major: '1', minor: '34' },
      { major: 1, minor: 34 },
    ],
    [
      { major: '1', minor: '31+' },
      { major: 1, minor: 31 },
    ],
    [{ major: '1', minor: '' }, undefined],
    [{ major: 1, minor: 34 }, undefined],
    [{}, undefined],
  ])('parseServerVersion(%j)', (v, want) => {
    expect(parseServerVersion(v)).toEqual(want);
  });
});

describe('unservedKinds', () => {
  const served = new Set(['/v1/ConfigMap', 'apps/v1/Deployment']);
  const lookup = (apiVersion: string, kind: string) => {
    const [g, v] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
    return Promise.resolve(served.has(`${g}/${v}/${kind}`));
  };
  it('names kinds the server does not serve, not those a CRD of the same run defines', async () => {
    const objects = [
      obj('v1', 'ConfigMap', 'a'),
      obj('apps/v1beta1', 'Deployment', 'old'),
      obj('v1', 'Explode', 'x'),
      obj('v1', 'Explode', 'y'),
      obj('apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'widgets.example.com', {
        spec: { group: 'example.com', names: { plural: 'widgets', kind: 'Widget' }, versions: [{ name: 'v1' }] },
      }),
      obj('example.com/v1', 'Widget', 'w'),
      obj('example.com/v2', 'Widget', 'w2'),
    ];
    const lookupCrd = (apiVersion: string, kind: string) =>
      kind === 'CustomResourceDefinition' ? Promise.resolve(true) : lookup(apiVersion, kind);
    expect(await unservedKinds(objects, lookupCrd)).toEqual([
      'Deployment/old: the server has no resource for kind Deployment in apps/v1beta1 (is the apiVersion right, or its CustomResourceDefinition installed?)',
      'Explode/x, Explode/y: the server has no resource for kind Explode in v1 (is the apiVersion right, or its CustomResourceDefinition installed?)',
      'Widget/w2: the server has no resource for kind Widget in example.com/v2 (is the apiVersion right, or its CustomResourceDefinition installed?)',
    ]);
  });
});

describe('appliedSoFar', () => {
  const entry = (subject: string, action: ChangeSetEntry['action']): ChangeSetEntry => ({
    subject,
    action,
    apiVersion: 'v1',
    kind: 'Namespace',
    name: subject,
  });
  it.each([
    { changeset: [], want: '' },
    { changeset: [entry('Namespace/a', 'unchanged')], want: '' },
    {
      changeset: [
        entry('Namespace/a', 'created'),
        entry('Namespace/b', 'unchanged'),
        entry('ClusterRole/c', 'configured'),
      ],
      want: '\nAlready applied by this run: Namespace/a (created), ClusterRole/c (configured); they stay in the cluster and in the inventory.',
    },
  ])('$want', ({ changeset, want }) => {
    expect(appliedSoFar(changeset)).toBe(want);
  });
});
