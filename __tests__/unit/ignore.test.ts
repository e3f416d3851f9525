import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/objects/kube.js';
import type { Selector } from '../../src/flux/types.js';
import {
  adoptPaths,
  ignoredPaths,
  parsePointer,
  ruleMatches,
  selectorMatches,
  stripPaths,
} from '../../src/ssa/ignore.js';

const deploy: KubeObject = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'web',
    namespace: 'prod',
    labels: { app: 'web', tier: 'frontend', 'example.com/team': 'a' },
    annotations: { 'fluxcd.io/ignore-replicas': 'true' },
  },
  spec: { replicas: 3, template: { spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
};
const named = (name: string): KubeObject => ({ ...deploy, metadata: { ...deploy.metadata, name } });
const configMap: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { a: '1' } };

describe('ruleMatches', () => {
  it.each<{ why: string; target: Selector | undefined; obj?: KubeObject; want: boolean }>([
    { why: 'no target matches everything', target: undefined, want: true },
    { why: 'no target matches a core object', target: undefined, obj: configMap, want: true },
    { why: 'empty target matches everything', target: {}, want: true },
    { why: 'kind', target: { kind: 'Deployment' }, want: true },
    { why: 'kind mismatch', target: { kind: 'StatefulSet' }, want: false },
    { why: 'kind alternation', target: { kind: 'StatefulSet|Deployment' }, want: true },
    { why: 'kind is anchored at the start', target: { kind: 'ployment' }, want: false },
    { why: 'name is anchored: web ≠ web-2', target: { name: 'web' }, obj: named('web-2'), want: false },
    { why: 'name regex web.* matches web-2', target: { name: 'web.*' }, obj: named('web-2'), want: true },
    { why: 'name regex web.* matches web', target: { name: 'web.*' }, want: true },
    { why: 'group from apiVersion', target: { group: 'apps' }, want: true },
    { why: 'group regex', target: { group: 'app.*' }, want: true },
    { why: 'group of core is ""', target: { group: 'apps' }, obj: configMap, want: false },
    { why: 'group "" means no constraint', target: { group: '' }, obj: configMap, want: true },
    { why: 'version from apiVersion', target: { version: 'v1' }, want: true },
    { why: 'version mismatch', target: { version: 'v1beta1' }, want: false },
    { why: 'core version', target: { version: 'v1', kind: 'ConfigMap' }, obj: configMap, want: true },
    { why: 'namespace', target: { namespace: 'prod' }, want: true },
    { why: 'namespace anchored', target: { namespace: 'pro' }, want: false },
    { why: 'namespace on cluster-scoped object', target: { namespace: 'prod' }, obj: configMap, want: false },
    { why: 'all fields match', target: { group: 'apps', version: 'v1', kind: 'Deployment', name: 'web' }, want: true },
    { why: 'one field fails', target: { group: 'apps', version: 'v1', kind: 'Deployment', name: 'api' }, want: false },
    { why: 'labelSelector matches', target: { labelSelector: 'app=web' }, want: true },
    { why: 'labelSelector fails', target: { labelSelector: 'app=api' }, want: false },
    { why: 'labelSelector on object without labels', target: { labelSelector: 'app' }, obj: configMap, want: false },
    { why: 'annotationSelector matches', target: { annotationSelector: 'fluxcd.io/ignore-replicas=true' }, want: true },
    { why: 'annotationSelector fails', target: { annotationSelector: 'fluxcd.io/ignore-replicas=false' }, want: false },
    { why: 'kind and label both needed', target: { kind: 'Service', labelSelector: 'app=web' }, want: false },
  ])('$why', ({ target, obj, want }) => {
    expect(ruleMatches({ paths: ['/spec/replicas'], target }, obj ?? deploy)).toBe(want);
  });

  it('throws on an invalid regex', () => {
    expect(() => ruleMatches({ paths: [], target: { name: '(' } }, deploy)).toThrow(/invalid name regex/);
  });
});

describe('selectorMatches', () => {
  const labels = { app: 'web', tier: 'frontend', 'example.com/team': 'a', empty: '' };
  it.each([
    { sel: '', want: true },
    { sel: 'app=web', want: true },
    { sel: 'app = web', want: true },
    { sel: 'app==web', want: true },
    { sel: 'app=api', want: false },
    { sel: 'app!=api', want: true },
    { sel: 'app!=web', want: false },
    { sel: 'missing!=x', want: true },
    { sel: 'missing=x', want: false },
    { sel: 'app in (web, api)', want: true },
    { sel: 'app in (api,db)', want: false },
    { sel: 'missing in (web)', want: false },
    { sel: 'app notin (api, db)', want: true },
    { sel: 'app notin (web)', want: false },
    { sel: 'missing notin (web)', want: true },
    { sel: 'app', want: true },
    { sel: 'missing', want: false },
    { sel: '!missing', want: true },
    { sel: '!app', want: false },
    { sel: 'example.com/team=a', want: true },
    { sel: 'empty=', want: true },
    { sel: 'app=web,tier=frontend', want: true },
    { sel: 'app=web, tier=backend', want: false },
    { sel: 'app in (web,api),tier notin (backend),!missing,example.com/team', want: true },
  ])('"$sel" → $want', ({ sel, want }) => {
    expect(selectorMatches(sel, labels)).toBe(want);
  });

  it.each(['app=(', 'app in (web', 'app in web', '=web', 'app=we b', 'app>1', 'app,,tier'])('rejects "%s"', (sel) => {
    expect(() => selectorMatches(sel, labels)).toThrow(/invalid selector/);
  });
});

describe('ignoredPaths', () => {
  it('collects the paths of matching rules only, without duplicates', () => {
    const rules = [
      { paths: ['/spec/replicas'], target: { kind: 'Deployment' } },
      { paths: ['/data'], target: { kind: 'ConfigMap' } },
      { paths: ['/metadata/annotations', '/spec/replicas'] },
    ];
    expect(ignoredPaths(rules, deploy)).toEqual(['/spec/replicas', '/metadata/annotations']);
    expect(ignoredPaths(rules, configMap)).toEqual(['/data', '/metadata/annotations', '/spec/replicas']);
    expect(ignoredPaths([], deploy)).toEqual([]);
  });
});

describe('parsePointer', () => {
  it.each([
    { p: '', want: [] },
    { p: '/', want: [''] },
    { p: '/a/b', want: ['a', 'b'] },
    { p: '/metadata/annotations/example.com~1x', want: ['metadata', 'annotations', 'example.com/x'] },
    { p: '/a~0b', want: ['a~b'] },
    { p: '/~01', want: ['~1'] },
  ])('"$p"', ({ p, want }) => {
    expect(parsePointer(p)).toEqual(want);
  });

  it.each(['a/b', '/a~2', '/a~'])('rejects "%s"', (p) => {
    expect(() => parsePointer(p)).toThrow(/invalid JSON pointer/);
  });
});

describe('stripPaths', () => {
  const obj = {
    metadata: { annotations: { 'example.com/x': '1', 'a~b': '2', keep: '3' } },
    spec: { replicas: 2, list: ['a', 'b', 'c'], items: [{ n: 1, v: 'x' }, { n: 2 }] },
  };
  it.each<{ why: string; pointers: string[]; want: unknown }>([
    { why: 'nothing', pointers: [], want: obj },
    { why: 'a leaf', pointers: ['/spec/replicas'], want: { ...obj, spec: { ...obj.spec, replicas: undefined } } },
    {
      why: '~1 escape',
      pointers: ['/metadata/annotations/example.com~1x'],
      want: { ...obj, metadata: { annotations: { 'a~b': '2', keep: '3' } } },
    },
    {
      why: '~0 escape',
      pointers: ['/metadata/annotations/a~0b'],
      want: { ...obj, metadata: { annotations: { 'example.com/x': '1', keep: '3' } } },
    },
    { why: 'an array element', pointers: ['/spec/list/1'], want: { ...obj, spec: { ...obj.spec, list: ['a', 'c'] } } },
    {
      why: 'a field inside an array element',
      pointers: ['/spec/items/0/v'],
      want: { ...obj, spec: { ...obj.spec, items: [{ n: 1 }, { n: 2 }] } },
    },
    {
      why: 'sequential removes shift indexes',
      pointers: ['/spec/list/0', '/spec/list/0'],
      want: { ...obj, spec: { ...obj.spec, list: ['c'] } },
    },
    { why: 'a whole subtree', pointers: ['/spec'], want: { metadata: obj.metadata } },
    {
      why: 'missing paths are ignored',
      pointers: ['/spec/nope', '/nope/deeper', '/spec/list/9', '/spec/list/-', '/spec/list/01', '/spec/replicas/x', ''],
      want: obj,
    },
  ])('$why', ({ pointers, want }) => {
    const before = JSON.stringify(obj);
    const got = stripPaths(obj, pointers);
    expect(JSON.parse(JSON.stringify(got))).toEqual(JSON.parse(JSON.stringify(want)));
    expect(JSON.stringify(obj)).toBe(before);
    expect(got).not.toBe(obj);
  });

  it('removes a numeric key from a map', () => {
    expect(stripPaths({ m: { '0': 'a', '1': 'b' } }, ['/m/0'])).toEqual({ m: { '1': 'b' } });
  });
});

describe('adoptPaths', () => {
  const desired: KubeObject = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', annotations: { a: '1' } },
    spec: { replicas: 1, template: { spec: { containers: [{ name: 'c', image: 'nginx:1' }] } } },
  };
  const live = {
    ...desired,
    metadata: { name: 'web', annotations: { a: '1', 'x/y': 'live' } },
    spec: {
      replicas: 5,
      paused: true,
      template: { spec: { containers: [{ name: 'c', image: 'nginx:2' }] } },
    },
  };
  const spec = desired['spec'] as Record<string, unknown>;
  it.each<{ why: string; live: Record<string, unknown> | undefined; pointers: string[]; want: KubeObject }>([
    {
      why: 'takes the live value (HPA-owned replicas)',
      live,
      pointers: ['/spec/replicas'],
      want: { ...desired, spec: { ...spec, replicas: 5 } },
    },
    {
      why: 'removes the field when live lacks it',
      live: { ...live, spec: { template: live.spec.template } },
      pointers: ['/spec/replicas'],
      want: { ...desired, spec: { template: spec['template'] } },
    },
    {
      why: 'adds a field that only live has',
      live,
      pointers: ['/spec/paused'],
      want: { ...desired, spec: { ...spec, paused: true } },
    },
    {
      why: 'escaped key',
      live,
      pointers: ['/metadata/annotations/x~1y'],
      want: { ...desired, metadata: { name: 'web', annotations: { a: '1', 'x/y': 'live' } } },
    },
    {
      why: 'array element field',
      live,
      pointers: ['/spec/template/spec/containers/0/image'],
      want: { ...desired, spec: { ...spec, template: live.spec.template } },
    },
    {
      why: 'missing everywhere: no change',
      live,
      pointers: ['/spec/nope'],
      want: desired,
    },
    {
      why: 'no live object (creation): unchanged',
      live: undefined,
      pointers: ['/spec/replicas'],
      want: desired,
    },
  ])('$why', ({ live: l, pointers, want }) => {
    const before = JSON.stringify(desired);
    expect(adoptPaths(desired, l, pointers)).toEqual(want);
    expect(JSON.stringify(desired)).toBe(before);
  });

  it('creates missing intermediate maps and does not alias the live value', () => {
    const bare: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' } };
    const l = { ...bare, data: { nested: { k: ['v'] } } };
    const got = adoptPaths(bare, l, ['/data/nested/k']);
    expect(got).toEqual({ ...bare, data: { nested: { k: ['v'] } } });
    (got['data'] as { nested: { k: string[] } }).nested.k.push('w');
    expect(l.data.nested.k).toEqual(['v']);
  });
});
