/**
 * What lives in Namespaces, read for the prune guard of inventory/plan.ts (namespaceRefusal: deleting
 * a Namespace deletes everything in it, whoever applied it) and for the cost of an implied deletion
 * (reconcile/implied.ts). One metadata-only list (paged) per namespaced resource the server can
 * list; events and metrics are left out, and resources the credentials may not list (or whose list
 * fails) are named in a note. A ResourceManager's namespaceContents (ssa/manager.ts).
 */
import type { ClusterClient } from './client.js';
import type { ResourceMapping } from './discovery.js';
import type { ManagedCluster } from './managed.js';
import { list } from './verbs.js';
import { ApiError } from './errors.js';
import { LIST_PAGE_SIZE } from './live.js';
import { mapLimit } from '../util/concurrency.js';

/** An object found in a Namespace about to be pruned: its metadata, as a metadata-only list returns it. */
export interface NamespacedObject {
  /** API group, '' for the core group. */
  group: string;
  kind: string;
  name: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** It has ownerReferences: the garbage collector deletes it with its owner, which is counted instead. */
  owned?: boolean;
  /** It has a deletionTimestamp: it is going anyway. */
  terminating?: boolean;
}

/** What lives in one Namespace about to be pruned. */
export interface NamespaceContents {
  namespace: string;
  objects: readonly NamespacedObject[];
}

/** Metadata only: no Secret value is read, and the lists stay small. */
const METADATA_LIST = 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json';

/** Lists in flight at once. */
const CONCURRENCY = 8;

/**
 * Not objects a Namespace's deletion takes along: events are records of what happened, and the
 * metrics API serves a PodMetrics for every running Pod (whose owner counts).
 */
const LEFT_OUT = new Set(['/events', 'events.k8s.io/events']);
const LEFT_OUT_GROUPS = new Set(['metrics.k8s.io']);

/** One item of a PartialObjectMetadataList. */
interface MetadataItem {
  metadata?: {
    name?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: unknown[];
    deletionTimestamp?: string;
  };
}

/** The objects of every listable namespaced resource in each of `namespaces`. */
export async function namespaceContents(
  m: Pick<ManagedCluster, 'client' | 'discovery'>,
  namespaces: readonly string[],
  note: (line: string) => void,
): Promise<NamespaceContents[]> {
  const resources = (await m.discovery.namespacedLists()).filter(
    (m) => !LEFT_OUT.has(`${m.group}/${m.resource}`) && !LEFT_OUT_GROUPS.has(m.group),
  );
  const out: NamespaceContents[] = [];
  for (const namespace of namespaces) {
    const forbidden: string[] = [];
    const failed: string[] = [];
    const lists = await mapLimit(resources, CONCURRENCY, async (r) => {
      const name = r.group === '' ? r.resource : `${r.resource}.${r.group}`;
      try {
        return await listAll(m.client, r, namespace);
      } catch (err) {
        // Anything but an API answer (the server unreachable) fails the run, as the deletes would.
        if (!(err instanceof ApiError)) throw err;
        // Gone since discovery (a CRD deleted), or not listable after all: nothing of it can be there.
        if (err.status === 404 || err.status === 405) return [];
        if (err.status === 401 || err.status === 403) forbidden.push(name);
        // An aggregated API that is down answers 503: one resource must not stop every prune.
        else failed.push(`${name} (${err.message})`);
        return [];
      }
    });
    if (forbidden.length > 0) {
      note(
        `Namespace ${namespace} is being pruned, but the credentials may not list ${forbidden.sort().join(', ')} ` +
          'in it, so objects of those kinds were not looked for before deleting it (grant list on them to have ' +
          'the prune guard see them)',
      );
    }
    if (failed.length > 0) {
      note(
        `Namespace ${namespace} is being pruned, but listing ${failed.sort().join('; ')} in it failed, so ` +
          'objects of those kinds were not looked for before deleting it',
      );
    }
    out.push({ namespace, objects: lists.flat() });
  }
  return out;
}

async function listAll(client: ClusterClient, m: ResourceMapping, namespace: string): Promise<NamespacedObject[]> {
  const items = await list<MetadataItem>(
    client,
    { resource: m, namespace },
    { accept: METADATA_LIST, pageSize: LIST_PAGE_SIZE },
  );
  const objects: NamespacedObject[] = [];
  for (const item of items) {
    const md = item.metadata ?? {};
    if (md.name === undefined) continue;
    objects.push({
      group: m.group,
      kind: m.kind,
      name: md.name,
      ...(md.labels ? { labels: md.labels } : {}),
      ...(md.annotations ? { annotations: md.annotations } : {}),
      ...(md.ownerReferences?.length ? { owned: true } : {}),
      ...(md.deletionTimestamp ? { terminating: true } : {}),
    });
  }
  return objects;
}
