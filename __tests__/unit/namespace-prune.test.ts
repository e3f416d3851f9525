import { describe, expect, it } from 'vitest';
import { entryOf } from '../../src/objects/id.js';
import {
  namespaceRefusal,
  prunedNamespaces,
  takenAlongBy,
  type NamespaceContents,
  type NamespacedObject,
} from '../../src/inventory/plan.js';
import { OWNER_NAME_LABEL, OWNER_NAMESPACE_LABEL } from '../../src/objects/flux.js';

const OWNER = { name: 'a', namespace: 'flux-system' };
const labels = (name: string, namespace: string) => ({ [OWNER_NAME_LABEL]: name, [OWNER_NAMESPACE_LABEL]: namespace });
const OURS = labels('a', 'flux-system');
const B = labels('b', 'flux-system');
const cm = (name: string, extra: Partial<NamespacedObject> = {}): NamespacedObject => ({
  group: '',
  kind: 'ConfigMap',
  name,
  ...extra,
});
/** What Git still has: ConfigMap/team/kept. */
const NEXT = [entryOf({ apiVersion: 'v1', kind: 'ConfigMap', name: 'kept', namespace: 'team' })];

describe('prunedNamespaces', () => {
  it('finds the core Namespaces among the stale entries, and nothing else', () => {
    const stale = [
      entryOf({ apiVersion: 'v1', kind: 'ConfigMap', name: 'x', namespace: 'team' }),
      entryOf({ apiVersion: 'v1', kind: 'Namespace', name: 'team' }),
      entryOf({ apiVersion: 'example.com/v1', kind: 'Namespace', name: 'not-core' }),
      entryOf({ apiVersion: 'v1', kind: 'Namespace', name: 'other' }),
    ];
    expect(prunedNamespaces(stale)).toEqual(['team', 'other']);
  });
});

describe('takenAlongBy', () => {
  it.each<[string, NamespacedObject, string | undefined]>([
    ['another Kustomization', cm('b-config', { labels: B }), 'Kustomization flux-system/b'],
    ['a Kustomization of the same name elsewhere', cm('x', { labels: labels('a', 'team') }), 'Kustomization team/a'],
    ['a name label alone', cm('x', { labels: { [OWNER_NAME_LABEL]: 'b' } }), 'Kustomization ?/b'],
    ['no owner labels', cm('loose'), 'no Kustomization (no owner labels)'],
    ['other labels only', cm('loose', { labels: { app: 'web' } }), 'no Kustomization (no owner labels)'],
    ['ours, pruned anyway', cm('old', { labels: OURS }), undefined],
    ['ours, still in Git', cm('kept', { labels: OURS }), 'this Kustomization (still in Git)'],
    [
      'ours, marked prune: disabled',
      cm('old', { labels: OURS, annotations: { 'kustomize.toolkit.fluxcd.io/prune': 'disabled' } }),
      'this Kustomization (marked kustomize.toolkit.fluxcd.io/prune: disabled)',
    ],
    [
      'ours, labelled ssa: ignore',
      cm('old', { labels: { ...OURS, 'kustomize.toolkit.fluxcd.io/ssa': 'ignore' } }),
      'this Kustomization (marked kustomize.toolkit.fluxcd.io/ssa: Ignore)',
    ],
    ['a dependent of no one (a Pod of a ReplicaSet)', { group: '', kind: 'Pod', name: 'w-1', owned: true }, undefined],
    [
      'a dependent labelled by another Kustomization',
      cm('x', { labels: B, owned: true }),
      'Kustomization flux-system/b',
    ],
    [
      'an inventory',
      cm('kustomize-reconcile.team.web', {
        labels: {
          'app.kubernetes.io/managed-by': 'kustomize-reconcile',
          'kustomize-reconcile/inventory': 'true',
          'kustomize-reconcile/name': 'web',
          'kustomize-reconcile/namespace': 'team',
        },
      }),
      'the inventory of Kustomization team/web',
    ],
    [
      'a part of an inventory',
      cm('kustomize-reconcile.team.web.g2-1', {
        labels: { 'kustomize-reconcile/inventory-part': 'kustomize-reconcile.team.web' },
      }),
      'the inventory kustomize-reconcile.team.web',
    ],
    ['a terminating object', cm('b-config', { labels: B, terminating: true }), undefined],
    ['the root CA ConfigMap', cm('kube-root-ca.crt'), undefined],
    ['the root CA ConfigMap labelled by another', cm('kube-root-ca.crt', { labels: B }), 'Kustomization flux-system/b'],
    ['the default ServiceAccount', { group: '', kind: 'ServiceAccount', name: 'default' }, undefined],
    [
      'another ServiceAccount',
      { group: '', kind: 'ServiceAccount', name: 'builder' },
      'no Kustomization (no owner labels)',
    ],
    [
      'a ConfigMap-kind of another group named like the default',
      { group: 'example.com', kind: 'ConfigMap', name: 'kube-root-ca.crt' },
      'no Kustomization (no owner labels)',
    ],
  ])('%s → %s', (_, obj, want) => {
    expect(takenAlongBy(obj, 'team', OWNER, NEXT)).toBe(want);
  });
});

describe('namespaceRefusal', () => {
  const guard = { allowLarge: false };
  const team = (...objects: NamespacedObject[]): NamespaceContents => ({ namespace: 'team', objects });

  it.each<[string, NamespaceContents[], { allowLarge: boolean }]>([
    ['no Namespace pruned', [], guard],
    ['an empty Namespace', [team()], guard],
    [
      'only its defaults, dependents and objects pruned with it',
      [
        team(
          cm('kube-root-ca.crt'),
          { group: '', kind: 'ServiceAccount', name: 'default' },
          { group: '', kind: 'Pod', name: 'w-1', owned: true },
          cm('old', { labels: OURS }),
        ),
      ],
      guard,
    ],
    ['allow-large-prune', [team(cm('b-config', { labels: B }), cm('loose'))], { allowLarge: true }],
  ])('%s: no refusal', (_, contents, g) => {
    expect(namespaceRefusal(contents, OWNER, NEXT, g)).toBeUndefined();
  });

  it('names what the Namespace would take along, per owner and kind, and what lifts it', () => {
    const contents = [
      team(
        cm('loose'),
        cm('b-config', { labels: B }),
        cm('old', { labels: OURS }),
        { group: 'apps', kind: 'Deployment', name: 'web', labels: B },
        cm('kube-root-ca.crt'),
      ),
    ];
    expect(namespaceRefusal(contents, OWNER, NEXT, guard)).toBe(
      'pruning Namespace/team would also delete the 3 object(s) in it that this run does not prune; nothing was ' +
        'deleted. Move or delete those objects first, or set allow-large-prune: true for one run to delete them ' +
        'with the Namespace:\n' +
        '  in Namespace/team: 1 ConfigMap (b-config), 1 Deployment.apps (web) of Kustomization flux-system/b; ' +
        '1 ConfigMap (loose) of no Kustomization (no owner labels)',
    );
  });

  it('counts every object but names three per kind, one line per Namespace', () => {
    const secrets = ['s5', 's1', 's4', 's2', 's3'].map((name) => ({ group: '', kind: 'Secret', name }));
    const got = namespaceRefusal(
      [
        team(...secrets),
        { namespace: 'empty', objects: [] },
        { namespace: 'other', objects: [cm('kept', { labels: OURS })] },
      ],
      OWNER,
      [entryOf({ apiVersion: 'v1', kind: 'ConfigMap', name: 'kept', namespace: 'other' })],
      guard,
    );
    expect(got?.split('\n')).toEqual([
      'pruning Namespace/team, Namespace/other would also delete the 6 object(s) in them that this run does not ' +
        'prune; nothing was deleted. Move or delete those objects first, or set allow-large-prune: true for one ' +
        'run to delete them with the Namespaces:',
      '  in Namespace/team: 5 Secret objects (s1, s2, s3, …) of no Kustomization (no owner labels)',
      '  in Namespace/other: 1 ConfigMap (kept) of this Kustomization (still in Git)',
    ]);
  });
});
