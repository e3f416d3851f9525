import { describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import {
  Discovery,
  mappingKey,
  mappingsFromAggregated,
  mappingsFromLegacy,
  objectPath,
  servedKinds,
} from '../../src/cluster/discovery.js';

describe('mappingsFromAggregated', () => {
  it('reads resources and scope, leaving out subresources', () => {
    const doc = {
      kind: 'APIGroupDiscoveryList',
      items: [
        {
          metadata: { name: 'apps' },
          versions: [
            {
              version: 'v1',
              resources: [
                { resource: 'deployments', responseKind: { kind: 'Deployment' }, scope: 'Namespaced' },
                { resource: 'deployments/status', responseKind: { kind: 'Deployment' }, scope: 'Namespaced' },
              ],
            },
          ],
        },
        {
          metadata: {},
          versions: [
            {
              version: 'v1',
              resources: [{ resource: 'namespaces', responseKind: { kind: 'Namespace' }, scope: 'Cluster' }],
            },
          ],
        },
      ],
    };
    expect(mappingsFromAggregated(doc)).toEqual([
      { group: 'apps', version: 'v1', kind: 'Deployment', resource: 'deployments', namespaced: true },
      { group: '', version: 'v1', kind: 'Namespace', resource: 'namespaces', namespaced: false },
    ]);
  });
});

describe('mappingsFromLegacy', () => {
  it.each([
    ['v1', { group: '', version: 'v1' }],
    ['networking.k8s.io/v1', { group: 'networking.k8s.io', version: 'v1' }],
  ])('%s', (groupVersion, gv) => {
    const got = mappingsFromLegacy({
      groupVersion,
      resources: [
        { name: 'things', kind: 'Thing', namespaced: true },
        { name: 'things/scale', kind: 'Scale', namespaced: true },
      ],
    });
    expect(got).toEqual([{ ...gv, kind: 'Thing', resource: 'things', namespaced: true }]);
  });
});

describe('objectPath and mappingKey', () => {
  it.each([
    [
      { group: '', version: 'v1', kind: 'ConfigMap', resource: 'configmaps', namespaced: true },
      'ns',
      'a',
      '/api/v1/namespaces/ns/configmaps/a',
    ],
    [
      { group: 'apps', version: 'v1', kind: 'Deployment', resource: 'deployments', namespaced: true },
      'ns',
      'web',
      '/apis/apps/v1/namespaces/ns/deployments/web',
    ],
    [
      { group: '', version: 'v1', kind: 'Namespace', resource: 'namespaces', namespaced: false },
      undefined,
      'ns',
      '/api/v1/namespaces/ns',
    ],
    [
      {
        group: 'rbac.authorization.k8s.io',
        version: 'v1',
        kind: 'ClusterRole',
        resource: 'clusterroles',
        namespaced: false,
      },
      undefined,
      'system:x',
      '/apis/rbac.authorization.k8s.io/v1/clusterroles/system%3Ax',
    ],
    [
      { group: '', version: 'v1', kind: 'ConfigMap', resource: 'configmaps', namespaced: true },
      'ns',
      '',
      '/api/v1/namespaces/ns/configmaps',
    ],
  ])('%j %s/%s', (m, ns, name, want) => {
    expect(objectPath(m, ns, name)).toBe(want);
  });
  it.each([
    ['v1', 'Pod', '/v1/Pod'],
    ['apps/v1', 'Deployment', 'apps/v1/Deployment'],
  ])('%s %s → %s', (apiVersion, kind, want) => {
    expect(mappingKey(apiVersion, kind)).toBe(want);
  });
});

describe('servedKinds', () => {
  const crd = (versions: unknown, names: unknown = { kind: 'Widget' }) => ({
    spec: { group: 'example.com', names, versions },
  });
  it.each([
    [
      'each served version',
      crd([{ name: 'v1' }, { name: 'v2', served: true }]),
      [
        ['example.com/v1', 'Widget'],
        ['example.com/v2', 'Widget'],
      ],
    ],
    [
      'not a version that is not served',
      crd([{ name: 'v1', served: false }, { name: 'v2' }]),
      [['example.com/v2', 'Widget']],
    ],
    ['nothing without a kind', crd([{ name: 'v1' }], {}), []],
    ['nothing without versions', crd(undefined), []],
    ['not a version without a name', crd([null, { served: true }, { name: 'v1' }]), [['example.com/v1', 'Widget']]],
    ['nothing without a spec', {}, []],
  ])('%s', (_what, obj, want) => {
    expect(servedKinds(obj)).toEqual(want);
  });
});

describe('Discovery.awaitServed', () => {
  // /apis answers without the Widget kind `lagging` times, then with it; /api has the core group.
  const server = (lagging: number) => {
    let reads = 0;
    const group = (withWidget: boolean) => ({
      kind: 'APIGroupDiscoveryList',
      items: [
        {
          metadata: { name: 'example.com' },
          versions: [
            {
              version: 'v1',
              resources: withWidget
                ? [{ resource: 'widgets', responseKind: { kind: 'Widget' }, scope: 'Namespaced' }]
                : [],
            },
          ],
        },
      ],
    });
    const client = {
      request: (_verb: string, path: string) => {
        if (path === '/api') return Promise.resolve({ kind: 'APIGroupDiscoveryList', items: [] });
        return Promise.resolve(group(reads++ >= lagging));
      },
    };
    return { client: client as unknown as ClusterClient, reads: () => reads };
  };
  const clock = () => {
    let now = 0;
    return { now: () => now, sleep: (ms: number) => Promise.resolve(void (now += ms)) };
  };

  it('reads discovery again until an established CRD kind is served', async () => {
    const s = server(3);
    const discovery = new Discovery(s.client);
    await discovery.awaitServed([['example.com/v1', 'Widget']], 10_000, clock());
    expect(s.reads()).toBe(4);
    await expect(discovery.mapping('example.com/v1', 'Widget')).resolves.toMatchObject({ resource: 'widgets' });
  });

  it('returns at the deadline, and mapping says the kind is not served', async () => {
    const s = server(Number.POSITIVE_INFINITY);
    const discovery = new Discovery(s.client);
    await discovery.awaitServed([['example.com/v1', 'Widget']], 1_000, clock());
    expect(s.reads()).toBeGreaterThan(1);
    await expect(discovery.mapping('example.com/v1', 'Widget')).rejects.toThrow(/Widget/);
  });
});
