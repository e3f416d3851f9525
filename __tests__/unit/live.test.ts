import { describe, expect, it } from 'vitest';
import type { ResourceMapping } from '../../src/cluster/discovery.js';
import type { KubeObject } from '../../src/objects/kube.js';
import { itemsOfList, ownerSelector, versionOf } from '../../src/cluster/live.js';

const NAME = 'kustomize.toolkit.fluxcd.io/name';
const NS = 'kustomize.toolkit.fluxcd.io/namespace';

const obj = (labels?: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'c', namespace: 'n', ...(labels ? { labels } : {}) },
});

describe('ownerSelector', () => {
  it.each([
    [obj({ [NAME]: 'app', [NS]: 'flux-system' }), `${NAME}=app,${NS}=flux-system`],
    [obj({ [NAME]: 'app', [NS]: 'flux-system', team: 'a' }), `${NAME}=app,${NS}=flux-system`],
    [obj({ [NAME]: 'app' }), undefined],
    [obj({ [NS]: 'flux-system' }), undefined],
    [obj({ [NAME]: '', [NS]: 'flux-system' }), undefined],
    [obj(), undefined],
  ])('%j → %s', (o, want) => {
    expect(ownerSelector(o)).toBe(want);
  });
});

const core: ResourceMapping = { group: '', version: 'v1', kind: 'ConfigMap', resource: 'configmaps', namespaced: true };
const apps: ResourceMapping = {
  group: 'apps',
  version: 'v1',
  kind: 'Deployment',
  resource: 'deployments',
  namespaced: true,
};

describe('itemsOfList', () => {
  it.each([
    [
      'core items get apiVersion v1 and the kind',
      core,
      [{ metadata: { name: 'a' } }],
      { a: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } } },
    ],
    [
      'grouped items get group/version',
      apps,
      [{ metadata: { name: 'd' }, spec: {} }],
      { d: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: {} } },
    ],
    [
      'an item that names its own type keeps it',
      apps,
      [{ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' } }],
      { d: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' } } },
    ],
    [
      'items without a name are dropped',
      core,
      [{ metadata: {} }, {}, { metadata: { name: 'b' } }],
      { b: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'b' } } },
    ],
    ['an empty list', core, [], {}],
  ])('%s', (_what, mapping, items, want) => {
    expect(Object.fromEntries(itemsOfList(mapping, items))).toEqual(want);
  });
});

describe('versionOf', () => {
  it.each([
    [{ metadata: { resourceVersion: '42' } }, '42'],
    [{ metadata: { resourceVersion: '' } }, ''],
    [{ metadata: {} }, ''],
    [{ metadata: { resourceVersion: 42 } }, ''],
    [{}, ''],
    [undefined, ''],
  ])('%j → %j', (o, want) => {
    expect(versionOf(o)).toBe(want);
  });
});
