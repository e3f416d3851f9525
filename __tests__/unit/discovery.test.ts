import { describe, expect, it } from 'vitest';
import { mappingKey, mappingsFromAggregated, mappingsFromLegacy, objectPath } from '../../src/cluster/discovery.js';

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
