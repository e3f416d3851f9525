import { describe, expect, it } from 'vitest';
import { refOf, type Entry } from '../../src/objects/id.js';
import {
  fluxConflict,
  fluxConflictNote,
  neverReconciled,
  fluxEntry,
  fluxHolds,
  fluxImport,
  type FluxKustomization,
  type Target,
} from '../../src/inventory/flux.js';

const RBAC = 'rbac.authorization.k8s.io';

describe('fluxEntry: Flux status.inventory ids as this tool reads them', () => {
  it.each<[string, unknown, Entry | undefined]>([
    ['namespaced, grouped', { id: 'apps_web_apps_Deployment', v: 'v1' }, { id: 'apps_web_apps_Deployment', v: 'v1' }],
    ['core group, cluster-scoped', { id: '_team-a__Namespace', v: 'v1' }, { id: '_team-a__Namespace', v: 'v1' }],
    [
      'a CRD (dots in name and group)',
      { id: '_foos.example.com_apiextensions.k8s.io_CustomResourceDefinition', v: 'v1' },
      { id: '_foos.example.com_apiextensions.k8s.io_CustomResourceDefinition', v: 'v1' },
    ],
    [
      'an RBAC name with a colon, which cli-utils writes as __',
      { id: `_system__auth-delegator_${RBAC}_ClusterRoleBinding`, v: 'v1' },
      { id: `_system:auth-delegator_${RBAC}_ClusterRoleBinding`, v: 'v1' },
    ],
    [
      'a namespaced Role with two colons',
      { id: `apps_a__b__c_${RBAC}_Role`, v: 'v1' },
      { id: `apps_a:b:c_${RBAC}_Role`, v: 'v1' },
    ],
    [
      'a beta version',
      { id: 'apps_web_example.com_Widget', v: 'v1beta2' },
      { id: 'apps_web_example.com_Widget', v: 'v1beta2' },
    ],
    ['__ in a name of a kind that cannot have a colon', { id: 'apps_a__b_apps_Deployment', v: 'v1' }, undefined],
    ['a name holding _', { id: 'apps_a_b_apps_Deployment_x', v: 'v1' }, undefined],
    ['three parts', { id: 'apps_web_Deployment', v: 'v1' }, undefined],
    ['no separator', { id: 'web', v: 'v1' }, undefined],
    ['empty name', { id: 'apps__apps_Deployment', v: 'v1' }, undefined],
    ['empty kind', { id: 'apps_web_apps_', v: 'v1' }, undefined],
    ['empty version', { id: 'apps_web_apps_Deployment', v: '' }, undefined],
    ['a version with a group in it', { id: 'apps_web_apps_Deployment', v: 'apps/v1' }, undefined],
    ['no version', { id: 'apps_web_apps_Deployment' }, undefined],
    ['an id that is not a string', { id: 7, v: 'v1' }, undefined],
    ['not an object', 'apps_web_apps_Deployment', undefined],
    ['null', null, undefined],
  ])('%s', (_, raw, expected) => {
    const entry = fluxEntry(raw);
    expect(entry).toEqual(expected);
    // Every entry it gives is one the rest of the inventory code can read back.
    if (entry) expect(() => refOf(entry)).not.toThrow();
  });
});

const flux = (extra: Partial<FluxKustomization> = {}, entries?: unknown): FluxKustomization => ({
  metadata: { name: 'web', namespace: 'apps' },
  spec: { suspend: true },
  ...(entries !== undefined ? { status: { inventory: { entries } } } : {}),
  ...extra,
});

describe('fluxImport', () => {
  const two = [
    { id: 'apps_web_apps_Deployment', v: 'v1' },
    { id: 'apps_old__ConfigMap', v: 'v1' },
  ];

  it.each<[string, FluxKustomization, Target, boolean, string[], RegExp]>([
    [
      'every entry, said',
      flux({}, two),
      undefined,
      false,
      ['apps_web_apps_Deployment', 'apps_old__ConfigMap'],
      /^Imported 2 entries from Flux Kustomization apps\/web's status\.inventory as the previous inventory: /,
    ],
    [
      'one entry, singular, in a preview',
      flux({}, two.slice(0, 1)),
      undefined,
      true,
      ['apps_web_apps_Deployment'],
      /^Imported 1 entry from Flux Kustomization apps\/web's status\.inventory as the previous inventory \(for this preview; an apply records them\)/,
    ],
    [
      'duplicates once',
      flux({}, [...two, two[0]]),
      undefined,
      false,
      ['apps_web_apps_Deployment', 'apps_old__ConfigMap'],
      /^Imported 2 entries/,
    ],
    [
      'malformed entries left out and named',
      flux({}, [...two, { id: 'nonsense', v: 'v1' }]),
      undefined,
      false,
      ['apps_web_apps_Deployment', 'apps_old__ConfigMap'],
      /Imported 2 entries.*; 1 entry is not <namespace>_<name>_<group>_<kind> with a version and was left out: \{"id":"nonsense","v":"v1"\}$/,
    ],
    [
      'no status',
      flux(),
      undefined,
      false,
      [],
      /^Flux Kustomization apps\/web has no status\.inventory entries: nothing was imported$/,
    ],
    ['empty inventory', flux({}, []), undefined, false, [], /has no status\.inventory entries/],
    ['entries not a list', flux({}, { id: 'x' }), undefined, false, [], /has no status\.inventory entries/],
    [
      'Flux reconciles into a remote cluster, this run into its own',
      flux({ spec: { suspend: true, kubeConfig: { secretRef: { name: 'prod' } } } }, two),
      undefined,
      false,
      [],
      /reconciles into the cluster of kubeConfig Secret prod, this Kustomization into its own cluster: its status\.inventory was not imported/,
    ],
    [
      'this run reconciles into a remote cluster, Flux into its own',
      flux({}, two),
      { secretRef: { name: 'prod' } },
      false,
      [],
      /reconciles into its own cluster, this Kustomization into the cluster of kubeConfig Secret prod/,
    ],
    [
      'both into the same remote cluster',
      flux({ spec: { suspend: true, kubeConfig: { secretRef: { name: 'prod' } } } }, two),
      { secretRef: { name: 'prod' } },
      false,
      ['apps_web_apps_Deployment', 'apps_old__ConfigMap'],
      /^Imported 2 entries/,
    ],
  ])('%s', (_, object, target, preview, ids, note) => {
    const got = fluxImport(object, target, preview);
    expect(got.entries.map((e) => e.id)).toEqual(ids);
    expect(got.note).toMatch(note);
  });
});

describe('neverReconciled: an object no kustomize-controller has touched', () => {
  const now = Date.parse('2026-12-05T12:00:00Z');
  const at = (minutesAgo: number) => new Date(now - minutesAgo * 60_000).toISOString();
  const object = (minutesAgo: number | undefined, status?: FluxKustomization['status']) =>
    flux({
      metadata: {
        name: 'web',
        namespace: 'apps',
        ...(minutesAgo !== undefined ? { creationTimestamp: at(minutesAgo) } : {}),
      },
      spec: { suspend: false },
      ...(status ? { status } : {}),
    });
  it.each<[string, FluxKustomization, boolean]>([
    ['created an hour ago, no status: no controller runs', object(60), true],
    ['created 5 minutes ago, no status', object(5), true],
    ['created a minute ago, no status: a controller may be about to', object(1), false],
    ['no creationTimestamp: unknown, so not taken', object(undefined), false],
    ['reconciled: conditions', object(60, { conditions: [{ type: 'Ready', status: 'True' }] }), false],
    ['reconciled: observedGeneration', object(60, { observedGeneration: 1 }), false],
    ['an empty status', object(60, {}), true],
  ])('%s', (_, obj, expected) => {
    expect(neverReconciled(obj, now)).toBe(expected);
    // fluxConflict agrees: an object no controller reconciles is not a second owner.
    expect(fluxConflict(obj, undefined, now) === undefined).toBe(expected);
  });
});

describe('fluxConflict: who else reconciles these objects', () => {
  const deleting = { name: 'web', namespace: 'apps', deletionTimestamp: '2026-01-01T00:00:00Z' };
  const remote = { kubeConfig: { secretRef: { name: 'prod' } } };
  it.each<[string, FluxKustomization, Target, RegExp | undefined]>([
    ['suspended: ours to take', flux(), undefined, undefined],
    [
      'suspended and being deleted: its finalizer leaves the objects',
      flux({ metadata: deleting }),
      undefined,
      undefined,
    ],
    [
      'not suspended',
      flux({ spec: { suspend: false } }),
      undefined,
      /^Flux Kustomization apps\/web exists in the cluster and is not suspended: .* Nothing was applied or pruned\. Suspend it first \(flux suspend kustomization web -n apps, or kubectl -n apps patch kustomizations\.kustomize\.toolkit\.fluxcd\.io web --field-manager=flux-client-side-apply --type=merge -p '\{"spec":\{"suspend":true\}\}'\), then run again; see docs\/handover\.md$/,
    ],
    ['no spec.suspend at all', flux({ spec: {} }), undefined, /is not suspended/],
    [
      'not suspended and being deleted',
      flux({ spec: { suspend: false }, metadata: deleting }),
      undefined,
      /It is being deleted, and unless it is suspended Flux deletes every object of its inventory when it goes\./,
    ],
    [
      'not suspended, into the same remote cluster',
      flux({ spec: { suspend: false, ...remote } }),
      remote.kubeConfig,
      /is not suspended/,
    ],
    [
      'not suspended, but into a remote cluster this run does not touch',
      flux({ spec: { suspend: false, ...remote } }),
      undefined,
      undefined,
    ],
    [
      'not suspended, into its own cluster while this run goes to a remote one',
      flux({ spec: { suspend: false } }),
      remote.kubeConfig,
      undefined,
    ],
  ])('%s', (_, object, target, expected) => {
    const conflict = fluxConflict(object, target);
    const note = fluxConflictNote(object, target);
    if (expected === undefined) {
      expect(conflict).toBeUndefined();
      expect(note).toBeUndefined();
    } else {
      expect(conflict).toMatch(expected);
      expect(note).toMatch(
        /an apply of this Kustomization is refused until it is \(flux suspend kustomization web -n apps\)/,
      );
    }
  });
});

describe('fluxHolds: a removed Kustomization handed back to Flux', () => {
  it.each<[string, FluxKustomization | undefined, string | undefined]>([
    ['no Flux Kustomization', undefined, undefined],
    ['a suspended one', flux(), undefined],
    [
      'one Flux reconciles',
      flux({ spec: { suspend: false } }),
      'Flux Kustomization apps/web is not suspended and reconciles these objects now (handed back to Flux)',
    ],
    [
      "one that reconciles into a remote cluster (removed Kustomizations are those of the action's cluster)",
      flux({ spec: { suspend: false, kubeConfig: { secretRef: { name: 'prod' } } } }),
      undefined,
    ],
    [
      'one without spec.suspend',
      flux({ spec: {} }),
      'Flux Kustomization apps/web is not suspended and reconciles these objects now (handed back to Flux)',
    ],
  ])('%s', (_, object, expected) => {
    expect(fluxHolds(object)).toBe(expected);
  });
});
