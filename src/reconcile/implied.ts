/**
 * The reads behind ssa/implied.ts: the live versions of this build's objects that carry
 * ownerReferences and of its StatefulSets, each owner those references name (where the garbage
 * collector would look), the live StatefulSets a prune deletes, the Namespaces owned by what it
 * deletes, and the claims the StatefulSet controller would delete. All with the run's own
 * credentials, as the collector and the controllers see every object whatever the Kustomization's
 * account may; only names, uids and the approving annotation reach the report, never values.
 */
import type { ClusterClient } from '../cluster/client.js';
import type { Discovery, ResourceMapping } from '../cluster/discovery.js';
import { find, list, NAMESPACES } from '../cluster/verbs.js';
import { groupOf, refOf, type Entry } from '../objects/id.js';
import type { KubeObject } from '../objects/kube.js';
import { namespaceContents } from '../cluster/contents.js';
import {
  claimsAtRisk,
  impliedDeletions,
  impliedReason,
  ownerRefsOf,
  refsToResolve,
  type ImpliedDeletion,
  type OwnerRef,
  type OwnerSeen,
} from '../ssa/implied.js';
import { mapLimit } from '../util/concurrency.js';
import { DESTRUCTIVE_ALLOWED, DESTRUCTIVE_ANNOTATION } from '../ssa/renames.js';

/** What any object's name is made of (a path segment such as `..` is none). */
const OBJECT_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.:]*[A-Za-z0-9])?$/;

/** An implied deletion with the report's reason (its cost included). */
export type Implied = ImpliedDeletion & { reason: string };

export interface ImpliedReads {
  client: ClusterClient;
  discovery: Discovery;
  /** This build's objects. */
  objects: readonly KubeObject[];
  /** What this change prunes (asked only when something may depend on it). */
  doomed: () => Promise<readonly Entry[]>;
  note: (line: string) => void;
  concurrency: number;
}

const mappingOf = (discovery: Discovery, apiVersion: string, kind: string) =>
  discovery.mapping(apiVersion, kind).catch(() => undefined);

/** The live object, or undefined (not there, or a kind the server does not serve). */
async function liveOf(
  r: Pick<ImpliedReads, 'client' | 'discovery'>,
  ref: { apiVersion: string; kind: string; name: string; namespace?: string | undefined },
): Promise<{ object?: KubeObject; mapping?: ResourceMapping }> {
  const mapping = await mappingOf(r.discovery, ref.apiVersion, ref.kind);
  if (mapping === undefined) return {};
  const namespace = mapping.namespaced ? ref.namespace : undefined;
  if (mapping.namespaced && namespace === undefined) return { mapping };
  const object = await find<KubeObject>(r.client, { resource: mapping, namespace, name: ref.name });
  return object === undefined ? { mapping } : { object, mapping };
}

/** What this change makes the garbage collector and the StatefulSet controller delete. */
export async function impliedOf(r: ImpliedReads): Promise<Implied[]> {
  const candidates = r.objects.filter(
    (o) => ownerRefsOf(o).length > 0 || (groupOf(o.apiVersion) === 'apps' && o.kind === 'StatefulSet'),
  );
  const doomed = await r.doomed();
  const prunedSetEntries = doomed.filter((e) => {
    const ref = refOf(e);
    return groupOf(ref.apiVersion) === 'apps' && ref.kind === 'StatefulSet';
  });
  // A Namespace may only be owned by cluster-scoped objects: it can go with a prune only of those.
  const clusterScopedDoomed = doomed.some((e) => refOf(e).namespace === undefined);
  if (candidates.length === 0 && prunedSetEntries.length === 0 && !clusterScopedDoomed) return [];
  const objects = await mapLimit(candidates, r.concurrency, async (desired) => {
    const { object } = await liveOf(r, { ...desired, ...desired.metadata });
    return object === undefined ? { desired } : { desired, live: object };
  });
  const prunedSets = (
    await mapLimit(prunedSetEntries, r.concurrency, async (e) => (await liveOf(r, refOf(e))).object)
  ).filter((o): o is KubeObject => o !== undefined);
  const namespaces = clusterScopedDoomed
    ? (await list<KubeObject>(r.client, { resource: NAMESPACES }))
        // A list's items carry no apiVersion nor kind.
        .map((n) => ({ ...n, apiVersion: 'v1', kind: 'Namespace' }))
        .filter((n) => ownerRefsOf(n).length > 0)
    : [];
  const owners = new Map<string, OwnerSeen | undefined>();
  const ownerKey = (namespace: string | undefined, ref: OwnerRef) =>
    `${namespace ?? ''}|${groupOf(ref.apiVersion)}|${ref.kind}|${ref.name}`;
  await mapLimit(refsToResolve({ objects, namespaces }), r.concurrency, async ({ namespace, ref }) => {
    const key = ownerKey(namespace, ref);
    if (owners.has(key)) return;
    owners.set(key, undefined);
    owners.set(key, await resolveOwner(r, namespace, ref));
  });
  const claims = new Map<string, KubeObject | undefined>();
  const sets = [
    ...objects.flatMap((o) => (o.live && o.desired.kind === 'StatefulSet' ? [claimsAtRisk(o.desired, o.live)] : [])),
    ...prunedSets.map((s) => claimsAtRisk(undefined, s)),
  ];
  const setsWithNs = [
    ...objects.flatMap((o) => (o.live && o.desired.kind === 'StatefulSet' ? [o.live] : [])),
    ...prunedSets,
  ];
  await mapLimit(
    sets.flatMap((s, i) => s.names.map((name) => ({ namespace: setsWithNs[i]!.metadata.namespace ?? '', name }))),
    r.concurrency,
    async ({ namespace, name }) => {
      const claim = await liveOf(r, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace, name });
      claims.set(`${namespace}/${name}`, claim.object);
    },
  );
  const found = impliedDeletions({
    objects,
    namespaces,
    prunedSets,
    pruned: new Set(doomed.map((e) => e.id)),
    owner: (namespace, ref) => owners.get(ownerKey(namespace, ref)),
    claim: (namespace, name) => claims.get(`${namespace}/${name}`),
    approval: { key: DESTRUCTIVE_ANNOTATION, value: DESTRUCTIVE_ALLOWED },
  });
  // A Namespace's cost is what it holds (metadata-only lists, as the prune guard reads them).
  const held = found.filter((d) => d.kind === 'Namespace').map((d) => d.name);
  const contents = held.length > 0 ? await namespaceContents(r, held, r.note) : [];
  const counts = new Map(contents.map((c) => [c.namespace, c.objects.length]));
  return found.map((d) => ({
    ...d,
    reason: impliedReason(d, d.kind === 'Namespace' ? counts.get(d.name) : undefined),
  }));
}

/**
 * Where the garbage collector looks for `ref`'s owner: in the dependent's namespace for a
 * namespaced kind, cluster-wide for a cluster-scoped one; a namespaced owner of a cluster-scoped
 * dependent, or a kind the server does not serve, is never resolved (the collector deletes nothing
 * for it).
 */
async function resolveOwner(
  r: Pick<ImpliedReads, 'client' | 'discovery'>,
  namespace: string | undefined,
  ref: OwnerRef,
): Promise<OwnerSeen | undefined> {
  const mapping = await mappingOf(r.discovery, ref.apiVersion, ref.kind);
  if (mapping === undefined || (mapping.namespaced && namespace === undefined)) return undefined;
  const ns = mapping.namespaced ? namespace : undefined;
  const id = `${ns ?? ''}_${ref.name}_${mapping.group}_${mapping.kind}`;
  // No object has a name like this: the collector finds none, and the path is never sent.
  if (!OBJECT_NAME.test(ref.name)) return { id };
  const live = await find<KubeObject>(r.client, { resource: mapping, namespace: ns, name: ref.name });
  const uid = live?.metadata['uid'];
  return typeof uid === 'string' ? { id, uid } : { id };
}

/** `Kind/ns/name (by the garbage collector)`, as the gate's refusal names it. */
export const impliedSubject = (d: Pick<Implied, 'subject' | 'by'>): string => `${d.subject} (by ${d.by})`;
