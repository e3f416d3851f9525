/**
 * What Kubernetes' own deleters would delete because of a change (pure): the garbage collector
 * deletes an object once every owner its ownerReferences name is gone (no object of that kind and
 * name, or one with another uid; an owner being pruned by the same change), and the StatefulSet
 * controller deletes the claims of a set whose persistentVolumeClaimRetentionPolicy says Delete,
 * when it scales down (whenScaled) or is deleted (whenDeleted). A prune lists only what the run
 * deletes itself; these are deletions all the same, so the preview lists them and the destructive
 * gate (reconcile/gate.ts) holds them as it holds a prune. The reads they need are in
 * reconcile/implied.ts.
 */
import { entryOf, groupOf, type Entry } from '../objects/id.js';
import { subjectOf, type KubeObject } from '../objects/kube.js';

/** One item of metadata.ownerReferences, as far as the garbage collector reads it. */
export interface OwnerRef {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
}

/**
 * What the cluster holds under the name an owner reference gives, read where the garbage collector
 * looks (the dependent's namespace for a namespaced kind): its inventory id (`ns_name_group_kind`)
 * and its live uid (undefined: there is no such object). A reference the collector cannot resolve
 * (a kind the server does not serve, a namespaced owner of a cluster-scoped dependent) has no
 * OwnerSeen: the collector never deletes because of it.
 */
export interface OwnerSeen {
  id: string;
  uid?: string;
}

/** An object this change makes Kubernetes delete. */
export interface ImpliedDeletion {
  subject: string;
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
  /** Who deletes it: `the garbage collector` or `the StatefulSet controller`. */
  by: string;
  /** Why, in words: which references or which policy. */
  why: string;
  /** The live object carries kustomize-reconcile.dev/destructive: allowed (the gate's yes). */
  approved: boolean;
}

export interface ImpliedFacts {
  /** This build's objects that may matter (with ownerReferences, StatefulSets) and their live versions. */
  objects: readonly { desired: KubeObject; live?: KubeObject }[];
  /** Live Namespaces with ownerReferences (a Namespace outside the build goes when its owners do). */
  namespaces: readonly KubeObject[];
  /** Live StatefulSets this change prunes. */
  prunedSets: readonly KubeObject[];
  /** Inventory ids (`ns_name_group_kind`) of what this change prunes. */
  pruned: ReadonlySet<string>;
  /** How the collector would resolve `ref` for a dependent in `namespace` (see OwnerSeen). */
  owner: (namespace: string | undefined, ref: OwnerRef) => OwnerSeen | undefined;
  /** A live PersistentVolumeClaim, or undefined. */
  claim: (namespace: string, name: string) => KubeObject | undefined;
  /** The approving annotation's key and value (gate.ts). */
  approval: { key: string; value: string };
}

const GC = 'the garbage collector';
const STS = 'the StatefulSet controller';

/** The well-formed ownerReferences of an object (the API server refuses the others). */
export function ownerRefsOf(obj: KubeObject | undefined): OwnerRef[] {
  const refs = obj?.metadata.ownerReferences;
  if (!Array.isArray(refs)) return [];
  return refs.flatMap((r: unknown): OwnerRef[] => {
    if (typeof r !== 'object' || r === null) return [];
    const { apiVersion, kind, name, uid } = r as Record<string, unknown>;
    return typeof apiVersion === 'string' &&
      typeof kind === 'string' &&
      typeof name === 'string' &&
      typeof uid === 'string'
      ? [{ apiVersion, kind, name, uid }]
      : [];
  });
}

/**
 * The references an object will carry after a server-side apply: ownerReferences is a list keyed
 * by uid, so the desired items join those other managers keep on the live object.
 */
export function effectiveRefs(desired: KubeObject, live: KubeObject | undefined): OwnerRef[] {
  const out = new Map<string, OwnerRef>();
  for (const r of [...ownerRefsOf(live), ...ownerRefsOf(desired)]) out.set(r.uid, r);
  return [...out.values()];
}

/** Whether the owner a reference names is gone (or goes with this change); undefined: never resolved. */
function ownerGone(facts: ImpliedFacts, namespace: string | undefined, ref: OwnerRef): boolean | undefined {
  const seen = facts.owner(namespace, ref);
  if (seen === undefined) return undefined;
  return seen.uid === undefined || seen.uid !== ref.uid || facts.pruned.has(seen.id);
}

/** Why the collector deletes an object with `refs` in `namespace`, or undefined while one owner stays. */
function orphanedBy(facts: ImpliedFacts, namespace: string | undefined, refs: readonly OwnerRef[]): string | undefined {
  if (refs.length === 0) return undefined;
  const reasons: string[] = [];
  for (const ref of refs) {
    if (ownerGone(facts, namespace, ref) !== true) return undefined;
    const seen = facts.owner(namespace, ref)!;
    const what = `${ref.kind} ${ref.name} (uid ${ref.uid})`;
    reasons.push(
      seen.uid === undefined
        ? `${what} does not exist`
        : seen.uid !== ref.uid
          ? `${what} does not exist: the live ${ref.kind} ${ref.name} has another uid`
          : `${what} is pruned by this change`,
    );
  }
  return `every owner its ownerReferences name is gone: ${reasons.join('; ')}`;
}

const isKind = (o: KubeObject, group: string, kind: string) => groupOf(o.apiVersion) === group && o.kind === kind;

const approvedBy = (facts: ImpliedFacts, live: KubeObject | undefined) =>
  live?.metadata.annotations?.[facts.approval.key] === facts.approval.value;

function deletion(obj: KubeObject, by: string, why: string, approved: boolean): ImpliedDeletion {
  return {
    subject: subjectOf(obj),
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    name: obj.metadata.name,
    ...(obj.metadata.namespace ? { namespace: obj.metadata.namespace } : {}),
    by,
    why,
    approved,
  };
}

interface SetShape {
  name: string;
  namespace: string;
  replicas: number;
  start: number;
  templates: string[];
  whenScaled?: unknown;
  whenDeleted?: unknown;
}

/** A StatefulSet's fields that decide which claims it keeps (the server's defaults where unset). */
function setShape(obj: KubeObject): SetShape {
  const spec = (obj['spec'] ?? {}) as {
    replicas?: unknown;
    ordinals?: { start?: unknown };
    volumeClaimTemplates?: { metadata?: { name?: unknown } }[];
    persistentVolumeClaimRetentionPolicy?: { whenScaled?: unknown; whenDeleted?: unknown };
  };
  const templates = Array.isArray(spec.volumeClaimTemplates) ? spec.volumeClaimTemplates : [];
  return {
    name: obj.metadata.name,
    namespace: obj.metadata.namespace ?? '',
    replicas: typeof spec.replicas === 'number' ? spec.replicas : 1,
    start: typeof spec.ordinals?.start === 'number' ? spec.ordinals.start : 0,
    templates: templates.flatMap((t) => (typeof t.metadata?.name === 'string' ? [t.metadata.name] : [])),
    whenScaled: spec.persistentVolumeClaimRetentionPolicy?.whenScaled,
    whenDeleted: spec.persistentVolumeClaimRetentionPolicy?.whenDeleted,
  };
}

/** The claims (`<template>-<set>-<ordinal>`) of ordinals [from, to) of a set. */
const claimNames = (s: SetShape, from: number, to: number): string[] =>
  s.templates.flatMap((t) => Array.from({ length: Math.max(0, to - from) }, (_, i) => `${t}-${s.name}-${from + i}`));

/**
 * The claims the StatefulSet controller deletes when `desired` is applied over `live` (whenScaled:
 * Delete and fewer replicas), or when `live` is pruned (`desired` undefined; whenDeleted: Delete).
 * Templates are immutable, so the live set's are the ones that made claims.
 */
export function claimsAtRisk(desired: KubeObject | undefined, live: KubeObject): { names: string[]; why: string } {
  const was = setShape(live);
  if (desired === undefined) {
    if (was.whenDeleted !== 'Delete') return { names: [], why: '' };
    return {
      names: claimNames(was, was.start, was.start + was.replicas),
      why: `StatefulSet ${was.name} is pruned by this change and its persistentVolumeClaimRetentionPolicy.whenDeleted is Delete`,
    };
  }
  const spec = (desired['spec'] ?? {}) as { replicas?: unknown; persistentVolumeClaimRetentionPolicy?: unknown };
  const policy = spec.persistentVolumeClaimRetentionPolicy as { whenScaled?: unknown } | undefined;
  // A field the desired object leaves out keeps its live value under server-side apply.
  const whenScaled = policy?.whenScaled ?? was.whenScaled;
  const replicas = typeof spec.replicas === 'number' ? spec.replicas : was.replicas;
  if (whenScaled !== 'Delete' || replicas >= was.replicas) return { names: [], why: '' };
  return {
    names: claimNames(was, was.start + replicas, was.start + was.replicas),
    why:
      `StatefulSet ${was.name} scales from ${was.replicas} to ${replicas} replica(s) with ` +
      'persistentVolumeClaimRetentionPolicy.whenScaled: Delete',
  };
}

/**
 * The references worth resolving: of build objects whose ownerReferences this change adds or
 * changes, or that name an owner it prunes, and of live Namespaces owned by something.
 */
export function refsToResolve(
  facts: Pick<ImpliedFacts, 'objects' | 'namespaces'>,
): { namespace: string | undefined; ref: OwnerRef }[] {
  const out = facts.objects.flatMap(({ desired, live }) =>
    live === undefined ? [] : effectiveRefs(desired, live).map((ref) => ({ namespace: live.metadata.namespace, ref })),
  );
  return [...out, ...facts.namespaces.flatMap((n) => ownerRefsOf(n).map((ref) => ({ namespace: undefined, ref })))];
}

/** Every deletion `facts` imply, each object once, in the order found. */
export function impliedDeletions(facts: ImpliedFacts): ImpliedDeletion[] {
  const out = new Map<string, ImpliedDeletion>();
  const add = (d: ImpliedDeletion) => {
    if (!out.has(d.subject)) out.set(d.subject, d);
  };
  const built = new Set<string>();
  for (const { desired, live } of facts.objects) {
    built.add(subjectOf(desired));
    // An object that is not live yet loses nothing: only live objects are counted.
    if (live === undefined) continue;
    const liveUids = new Set(ownerRefsOf(live).map((r) => r.uid));
    const refs = effectiveRefs(desired, live);
    const added = ownerRefsOf(desired).some((r) => !liveUids.has(r.uid));
    const toPruned = refs.some((r) => facts.pruned.has(facts.owner(live.metadata.namespace, r)?.id ?? ''));
    if (added || toPruned) {
      const why = orphanedBy(facts, live.metadata.namespace, refs);
      if (why !== undefined) add(deletion(live, GC, why, approvedBy(facts, live)));
    }
    if (isKind(desired, 'apps', 'StatefulSet')) addClaims(facts, claimsAtRisk(desired, live), live, add);
  }
  for (const set of facts.prunedSets) addClaims(facts, claimsAtRisk(undefined, set), set, add);
  for (const ns of facts.namespaces) {
    if (built.has(subjectOf(ns))) continue;
    const refs = ownerRefsOf(ns);
    // Only a change can make a Namespace's owners go: one pruned now.
    if (!refs.some((r) => facts.pruned.has(facts.owner(undefined, r)?.id ?? ''))) continue;
    const why = orphanedBy(facts, undefined, refs);
    if (why !== undefined) add(deletion(ns, GC, why, approvedBy(facts, ns)));
  }
  return [...out.values()];
}

function addClaims(
  facts: ImpliedFacts,
  risk: { names: string[]; why: string },
  set: KubeObject,
  add: (d: ImpliedDeletion) => void,
): void {
  for (const name of risk.names) {
    const claim = facts.claim(set.metadata.namespace ?? '', name);
    if (claim !== undefined) add(deletion(claim, STS, risk.why, approvedBy(facts, claim)));
  }
}

/** The inventory entry of an implied deletion (the gate's refusal names entries). */
export const entryOfImplied = (d: ImpliedDeletion): Entry => entryOf(d);

/** What an implied deletion costs, in words (`contents`: how many objects a Namespace holds). */
export function impliedCost(d: Pick<ImpliedDeletion, 'kind'>, contents?: number): string {
  switch (d.kind) {
    case 'Namespace':
      return `everything in it is deleted with it${contents === undefined ? '' : ` (${contents.toLocaleString('en-US')} object(s) now)`}`;
    case 'PersistentVolumeClaim':
      return 'its volume is released, and its data kept or deleted by the reclaim policy';
    case 'Service':
      return 'its cluster IP, endpoints and any load-balancer address go with it';
    default:
      return 'the object is gone';
  }
}

/** The report's reason for an implied deletion: who deletes it, why, and what it costs. */
export const impliedReason = (d: ImpliedDeletion, contents?: number): string =>
  `deleted by ${d.by}: ${d.why}; ${impliedCost(d, contents)}`;
