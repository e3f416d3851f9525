// What Kubernetes' own deleters take because of a change (issue 47, class 5): the garbage collector
// once every owner of an object is gone, the StatefulSet controller the claims of a set whose
// retention policy says Delete. Each row is one way a change leads there (or does not).
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/objects/kube.js';
import {
  claimsAtRisk,
  effectiveRefs,
  impliedDeletions,
  impliedReason,
  refsToResolve,
  type ImpliedFacts,
  type OwnerRef,
  type OwnerSeen,
} from '../../src/ssa/implied.js';
import { readableOf } from '../../src/reconcile/readable.js';
import { reportOf } from '../../src/report/model.js';
import { destructiveBlock, destructiveLines } from '../../src/report/destructive.js';
import { ownerLabelChanges } from '../../src/ssa/unread.js';

const ALLOW = { 'kustomize-reconcile.dev/destructive': 'allowed' };

const obj = (
  apiVersion: string,
  kind: string,
  name: string,
  namespace?: string,
  more: { refs?: OwnerRef[]; annotations?: Record<string, string>; spec?: unknown; uid?: string } = {},
): KubeObject => ({
  apiVersion,
  kind,
  metadata: {
    name,
    ...(namespace ? { namespace } : {}),
    ...(more.refs ? { ownerReferences: more.refs } : {}),
    ...(more.annotations ? { annotations: more.annotations } : {}),
    ...(more.uid ? { uid: more.uid } : {}),
  },
  ...(more.spec ? { spec: more.spec } : {}),
});

const ref = (kind: string, name: string, uid: string, apiVersion = 'v1'): OwnerRef => ({ apiVersion, kind, name, uid });

/** The cluster of the rows: what lives under each name (namespace|kind|name → uid). */
const LIVE: Record<string, string> = {
  'a|ConfigMap|owner': 'uid-owner',
  'a|Deployment|web': 'uid-web',
  '|ClusterRole|tenant': 'uid-role',
  'a|ConfigMap|doomed': 'uid-doomed',
  '|Namespace|parent': 'uid-parent',
};
const CLUSTER_KINDS = new Set(['ClusterRole', 'Namespace']);
const UNSERVED = new Set(['Widget']);

function owner(namespace: string | undefined, r: OwnerRef): OwnerSeen | undefined {
  if (UNSERVED.has(r.kind)) return undefined;
  const clusterScoped = CLUSTER_KINDS.has(r.kind);
  if (!clusterScoped && namespace === undefined) return undefined;
  const ns = clusterScoped ? '' : (namespace ?? '');
  const group = r.apiVersion.includes('/') ? r.apiVersion.split('/')[0]! : '';
  const uid = LIVE[`${ns}|${r.kind}|${r.name}`];
  return { id: `${ns}_${r.name}_${group}_${r.kind}`, ...(uid ? { uid } : {}) };
}

const facts = (over: Partial<ImpliedFacts>): ImpliedFacts => ({
  objects: [],
  namespaces: [],
  prunedSets: [],
  pruned: new Set(),
  owner,
  claim: () => undefined,
  approval: { key: 'kustomize-reconcile.dev/destructive', value: 'allowed' },
  ...over,
});

const subjects = (f: ImpliedFacts) =>
  impliedDeletions(f).map((d) => `${d.subject} by ${d.by}${d.approved ? ' (approved)' : ''}`);

describe('the garbage collector: ownerReferences of a build object', () => {
  const svc = (refs?: OwnerRef[], annotations?: Record<string, string>) =>
    obj('v1', 'Service', 'web', 'a', { ...(refs ? { refs } : {}), ...(annotations ? { annotations } : {}) });
  it.each([
    {
      name: 'a uid that does not exist (no object of that name)',
      desired: svc([ref('ConfigMap', 'nobody', 'u1')]),
      live: svc(),
      want: ['Service/a/web by the garbage collector'],
    },
    {
      name: 'the name of a live owner with another uid',
      desired: svc([ref('ConfigMap', 'owner', 'forged')]),
      live: svc(),
      want: ['Service/a/web by the garbage collector'],
    },
    {
      name: 'a live owner with its own uid: kept',
      desired: svc([ref('ConfigMap', 'owner', 'uid-owner')]),
      live: svc(),
      want: [],
    },
    {
      name: 'one bogus reference beside a live owner kept by another manager: kept',
      desired: svc([ref('ConfigMap', 'nobody', 'u1')]),
      live: svc([ref('Deployment', 'web', 'uid-web', 'apps/v1')]),
      want: [],
    },
    {
      name: 'a cluster-scoped owner (a ClusterRole) with a forged uid, from a namespaced dependent',
      desired: svc([ref('ClusterRole', 'tenant', 'forged', 'rbac.authorization.k8s.io/v1')]),
      live: svc(),
      want: ['Service/a/web by the garbage collector'],
    },
    {
      name: 'a kind the server does not serve: the collector never resolves it',
      desired: svc([ref('Widget', 'w', 'u1', 'example.com/v1')]),
      live: svc(),
      want: [],
    },
    {
      name: 'an owner this same change prunes',
      desired: svc([ref('ConfigMap', 'doomed', 'uid-doomed')]),
      live: svc(),
      pruned: ['a_doomed__ConfigMap'],
      want: ['Service/a/web by the garbage collector'],
    },
    {
      name: 'the live object carries the approving annotation: listed, approved',
      desired: svc([ref('ConfigMap', 'nobody', 'u1')]),
      live: svc(undefined, ALLOW),
      want: ['Service/a/web by the garbage collector (approved)'],
    },
    {
      name: 'the annotation only in the desired object does not approve',
      desired: svc([ref('ConfigMap', 'nobody', 'u1')], ALLOW),
      live: svc(),
      want: ['Service/a/web by the garbage collector'],
    },
    {
      name: 'an object that is not live yet loses nothing',
      desired: svc([ref('ConfigMap', 'nobody', 'u1')]),
      live: undefined,
      want: [],
    },
    {
      name: 'references the live object already has (no change): nothing new',
      desired: svc([ref('ConfigMap', 'owner', 'uid-owner')]),
      live: svc([ref('ConfigMap', 'owner', 'uid-owner')]),
      want: [],
    },
    {
      name: 'a Namespace owned by a forged cluster-scoped owner',
      desired: obj('v1', 'Namespace', 'team', undefined, { refs: [ref('Namespace', 'parent', 'forged')] }),
      live: obj('v1', 'Namespace', 'team'),
      want: ['Namespace/team by the garbage collector'],
    },
    {
      name: 'a Namespace owned by a namespaced kind: unresolvable, never collected',
      desired: obj('v1', 'Namespace', 'team', undefined, { refs: [ref('ConfigMap', 'x', 'forged')] }),
      live: obj('v1', 'Namespace', 'team'),
      want: [],
    },
    {
      name: 'a PersistentVolumeClaim owned by a Deployment that does not exist',
      desired: obj('v1', 'PersistentVolumeClaim', 'data', 'a', { refs: [ref('Deployment', 'gone', 'u', 'apps/v1')] }),
      live: obj('v1', 'PersistentVolumeClaim', 'data', 'a'),
      want: ['PersistentVolumeClaim/a/data by the garbage collector'],
    },
  ])('$name', ({ desired, live, pruned, want }) => {
    const f = facts({ objects: [{ desired, ...(live ? { live } : {}) }], pruned: new Set(pruned ?? []) });
    expect(subjects(f)).toEqual(want);
  });

  it('says which owners are gone and why', () => {
    const f = facts({
      objects: [{ desired: svc([ref('ConfigMap', 'owner', 'forged')]), live: svc() }],
    });
    expect(impliedDeletions(f)[0]?.why).toContain(
      'ConfigMap owner (uid forged) does not exist: the live ConfigMap owner has another uid',
    );
  });
});

describe('the garbage collector: a live Namespace outside the build', () => {
  it.each([
    {
      name: 'owned by a ClusterRole this change prunes',
      pruned: ['_tenant_rbac.authorization.k8s.io_ClusterRole'],
      want: ['Namespace/team by the garbage collector'],
    },
    { name: 'owned by a ClusterRole that stays', pruned: [], want: [] },
  ])('$name', ({ pruned, want }) => {
    const ns = obj('v1', 'Namespace', 'team', undefined, {
      refs: [ref('ClusterRole', 'tenant', 'uid-role', 'rbac.authorization.k8s.io/v1')],
    });
    expect(subjects(facts({ namespaces: [ns], pruned: new Set(pruned) }))).toEqual(want);
  });
});

describe('the StatefulSet controller: claims of a retention policy that says Delete', () => {
  const sts = (replicas: number | undefined, policy?: Record<string, string>, start?: number) =>
    obj('apps/v1', 'StatefulSet', 'db', 'a', {
      spec: {
        ...(replicas !== undefined ? { replicas } : {}),
        ...(start !== undefined ? { ordinals: { start } } : {}),
        ...(policy ? { persistentVolumeClaimRetentionPolicy: policy } : {}),
        volumeClaimTemplates: [{ metadata: { name: 'data' } }, { metadata: { name: 'logs' } }],
      },
    });
  it.each([
    {
      name: 'whenScaled Delete, 3 → 1',
      desired: sts(1, { whenScaled: 'Delete' }),
      live: sts(3),
      want: ['data-db-1', 'data-db-2', 'logs-db-1', 'logs-db-2'],
    },
    {
      name: 'whenScaled Delete already live, 2 → 1',
      desired: sts(1),
      live: sts(2, { whenScaled: 'Delete' }),
      want: ['data-db-1', 'logs-db-1'],
    },
    { name: 'whenScaled Retain, 3 → 1', desired: sts(1, { whenScaled: 'Retain' }), live: sts(3), want: [] },
    {
      name: 'whenScaled Delete, replicas left out (kept)',
      desired: sts(undefined, { whenScaled: 'Delete' }),
      live: sts(3),
      want: [],
    },
    {
      name: 'whenScaled Delete, 3 → 0 from ordinal 5',
      desired: sts(0, { whenScaled: 'Delete' }),
      live: sts(3, undefined, 5),
      want: ['data-db-5', 'data-db-6', 'data-db-7', 'logs-db-5', 'logs-db-6', 'logs-db-7'],
    },
    { name: 'whenScaled Delete, more replicas', desired: sts(4, { whenScaled: 'Delete' }), live: sts(3), want: [] },
    {
      name: 'pruned with whenDeleted Delete',
      desired: undefined,
      live: sts(2, { whenDeleted: 'Delete' }),
      want: ['data-db-0', 'data-db-1', 'logs-db-0', 'logs-db-1'],
    },
    { name: 'pruned with whenDeleted Retain', desired: undefined, live: sts(2, { whenDeleted: 'Retain' }), want: [] },
  ])('$name', ({ desired, live, want }) => {
    expect(claimsAtRisk(desired, live).names.sort()).toEqual(want);
  });

  it('lists only the claims that exist, each with its own annotation', () => {
    const claims: Record<string, KubeObject> = {
      'a/data-db-2': obj('v1', 'PersistentVolumeClaim', 'data-db-2', 'a'),
      'a/logs-db-2': obj('v1', 'PersistentVolumeClaim', 'logs-db-2', 'a', { annotations: ALLOW }),
    };
    const f = facts({
      objects: [{ desired: sts(2, { whenScaled: 'Delete' }), live: sts(3) }],
      claim: (ns, name) => claims[`${ns}/${name}`],
    });
    expect(subjects(f)).toEqual([
      'PersistentVolumeClaim/a/data-db-2 by the StatefulSet controller',
      'PersistentVolumeClaim/a/logs-db-2 by the StatefulSet controller (approved)',
    ]);
  });

  it('a pruned set with whenDeleted: Delete takes its claims', () => {
    const f = facts({
      prunedSets: [sts(1, { whenDeleted: 'Delete' })],
      claim: (ns, name) => (name === 'data-db-0' ? obj('v1', 'PersistentVolumeClaim', name, ns) : undefined),
    });
    expect(subjects(f)).toEqual(['PersistentVolumeClaim/a/data-db-0 by the StatefulSet controller']);
  });
});

describe('helpers', () => {
  it('joins desired references with those other managers keep, by uid', () => {
    const live = obj('v1', 'Service', 'web', 'a', { refs: [ref('ConfigMap', 'owner', 'uid-owner')] });
    const desired = obj('v1', 'Service', 'web', 'a', {
      refs: [ref('ConfigMap', 'x', 'u2'), ref('ConfigMap', 'owner', 'uid-owner')],
    });
    expect(effectiveRefs(desired, live).map((r) => r.uid)).toEqual(['uid-owner', 'u2']);
  });
  it('resolves live objects’ references and owned Namespaces’, not those of objects not live yet', () => {
    const desired = obj('v1', 'Service', 'web', 'a', { refs: [ref('ConfigMap', 'x', 'u2')] });
    const ns = obj('v1', 'Namespace', 'team', undefined, { refs: [ref('Namespace', 'parent', 'p')] });
    expect(refsToResolve({ objects: [{ desired }], namespaces: [ns] })).toEqual([
      { namespace: undefined, ref: ref('Namespace', 'parent', 'p') },
    ]);
  });
  it.each([
    { kind: 'Namespace', contents: 12, has: '(12 object(s) now)' },
    { kind: 'PersistentVolumeClaim', contents: undefined, has: 'its data kept or deleted by the reclaim policy' },
    { kind: 'Service', contents: undefined, has: 'cluster IP, endpoints' },
  ])('the cost of a $kind', ({ kind, contents, has }) => {
    const d = {
      subject: `${kind}/x`,
      apiVersion: 'v1',
      kind,
      name: 'x',
      by: 'the garbage collector',
      why: 'w',
      approved: false,
    };
    expect(impliedReason(d, contents)).toContain(has);
    expect(impliedReason(d, contents)).toMatch(/^deleted by the garbage collector: w; /);
  });
});

describe('reads with the apply identity (class 6): what a dry-run may read', () => {
  const inventory = { old: [{ id: 'a_own__ConfigMap', v: 'v1' }] };
  it.each([
    {
      name: 'a preview without an account: its own inventory only',
      applying: false,
      sa: undefined,
      dflt: undefined,
      want: ['a_own__ConfigMap'],
    },
    {
      name: 'a preview as spec.serviceAccountName: what the account may read',
      applying: false,
      sa: 'deployer',
      dflt: undefined,
      want: undefined,
    },
    { name: 'a preview as default-service-account', applying: false, sa: undefined, dflt: 'deployer', want: undefined },
    { name: 'an apply', applying: true, sa: undefined, dflt: undefined, want: undefined },
  ])('$name', ({ applying, sa, dflt, want }) => {
    const got = readableOf(
      {
        applying,
        spec: { namespace: 'a', ...(sa ? { serviceAccountName: sa } : {}) },
        settings: dflt ? { defaultServiceAccount: dflt } : {},
      },
      inventory,
    );
    expect(got === undefined ? undefined : [...got]).toEqual(want);
  });
});

describe('an object not read: only its owner labels are compared', () => {
  const desired = (labels: Record<string, string>): KubeObject => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'db', namespace: 'b', labels },
  });
  const N = 'kustomize.toolkit.fluxcd.io/name';
  const S = 'kustomize.toolkit.fluxcd.io/namespace';
  it.each([
    {
      name: 'another Kustomization holds it (a move or a takeover)',
      desired: { [N]: 'app', [S]: 'a' },
      live: { [N]: 'db', [S]: 'b', secret: 'x' },
      want: [
        { path: '/metadata/labels/kustomize.toolkit.fluxcd.io~1name', kind: 'changed', before: 'db', after: 'app' },
        { path: '/metadata/labels/kustomize.toolkit.fluxcd.io~1namespace', kind: 'changed', before: 'b', after: 'a' },
      ],
    },
    {
      name: 'no Kustomization held it (an adoption); its other labels are not shown',
      desired: { [N]: 'app', [S]: 'a' },
      live: { team: 'payments-secret-label' },
      want: [
        { path: '/metadata/labels/kustomize.toolkit.fluxcd.io~1name', kind: 'added', after: 'app' },
        { path: '/metadata/labels/kustomize.toolkit.fluxcd.io~1namespace', kind: 'added', after: 'a' },
      ],
    },
    { name: 'already this one', desired: { [N]: 'app', [S]: 'a' }, live: { [N]: 'app', [S]: 'a' }, want: [] },
  ])('$name', ({ desired: d, live, want }) => {
    expect(ownerLabelChanges(desired(d), live as unknown as Record<string, string>)).toEqual(want);
  });
});

describe('the preview says what Kubernetes would delete, first', () => {
  const report = (mode: 'preview' | 'apply') =>
    reportOf({
      mode,
      kustomization: 'a/app',
      path: './app',
      server: 'https://k',
      durationMs: 1,
      changeset: [],
      notes: [],
      pruned: [
        { subject: 'ConfigMap/a/old', action: 'deleted' },
        {
          subject: 'Namespace/team',
          action: 'deleted',
          by: 'the garbage collector',
          reason: 'deleted by the garbage collector: every owner its ownerReferences name is gone; everything in it',
        },
      ],
    });
  it.each([
    { render: (r: ReturnType<typeof report>) => destructiveLines(r).join('\n'), name: 'the log' },
    { render: (r: ReturnType<typeof report>) => destructiveBlock(r).join('\n'), name: 'the comment and summary' },
  ])('$name', ({ render }) => {
    const text = render(report('preview'));
    expect(text).toContain('would delete 2 live object(s)');
    expect(text).toMatch(/Namespace\/team.*deleted by the garbage collector: every owner/);
  });
});
