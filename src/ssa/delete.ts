/**
 * Prune: deleting the objects Git no longer has, as Flux's DeleteAll does. In the order given (the
 * reverse of the apply order), each object is read (from one owner-labelled list per resource and
 * namespace; by GET when the list does not have it); one that is gone counts as deleted; one whose
 * owner labels no longer name this Kustomization, or that is marked `prune: disabled`,
 * `reconcile: disabled` or `ssa: Ignore`, is skipped with the reason; the rest are deleted with
 * background propagation, on condition that they are still the object that was read (uid).
 */
import { isUnservedKind, type ResourceMapping } from '../cluster/discovery.js';
import type { ManagedCluster } from '../cluster/managed.js';
import { remove, waitGone } from '../cluster/verbs.js';
import { isNotFound } from '../cluster/errors.js';
import { refOf, subjectOfEntry, type Entry } from '../objects/id.js';
import { LiveObjects, selectorFor } from '../cluster/live.js';
import { hasMarker, OWNER_NAME_LABEL, OWNER_NAMESPACE_LABEL, PRUNE_KEEP_MARKERS } from '../objects/flux.js';

export interface PruneResult {
  subject: string;
  /** deleted: gone now (or already); skipped: left alone on purpose; failed: still there, kept in the inventory. */
  action: 'deleted' | 'skipped' | 'failed';
  reason?: string;
  entry: Entry;
}

export interface DeleteOptions {
  owner: { name: string; namespace: string };
  /** Names the same Kustomization had before (an adopted inventory's objects still carry them). */
  formerOwners?: readonly { name: string; namespace: string }[];
  /** Server-side dry-run (a preview): checks admission and RBAC, deletes nothing. */
  dryRun: boolean;
  /**
   * Called right before each DELETE is sent (after the read, which may wait for a list, so that a
   * stall between the check and the request is as short as it can be); a rejection stops the prune
   * there (a lost lock): see PruneStopped.
   */
  checkpoint?: () => Promise<void>;
}

/** The checkpoint refused the next delete; `results` is what the prune did before. */
export class PruneStopped extends Error {
  constructor(
    message: string,
    readonly results: PruneResult[],
  ) {
    super(message);
    this.name = 'PruneStopped';
  }
}

type Live = {
  metadata?: { uid?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
};

/** Why a live object must not be pruned, or undefined. `former` are names the owner had before. */
export function pruneExclusion(
  live: Live,
  owner: { name: string; namespace: string },
  former: readonly { name: string; namespace: string }[] = [],
): string | undefined {
  const labels = live.metadata?.labels ?? {};
  const ours = (o: { name: string; namespace: string }) =>
    labels[OWNER_NAME_LABEL] === o.name && labels[OWNER_NAMESPACE_LABEL] === o.namespace;
  if (!ours(owner) && !former.some(ours)) {
    const now = labels[OWNER_NAME_LABEL]
      ? `${labels[OWNER_NAMESPACE_LABEL] ?? '?'}/${labels[OWNER_NAME_LABEL]}`
      : 'no Kustomization';
    return `its owner labels name ${now}, not ${owner.namespace}/${owner.name} (taken over or relabelled)`;
  }
  const marker = PRUNE_KEEP_MARKERS.find(([key, value]) => hasMarker(live, key, value));
  return marker && `it is marked ${marker[0]}: ${marker[1]}`;
}

/** What a prune uses of its manager (ResourceManager.delete, manager.ts); one line per object goes to `log`. */
type Deleter = Pick<ManagedCluster, 'client' | 'discovery' | 'log'>;

export async function deleteStale(m: Deleter, stale: readonly Entry[], opts: DeleteOptions): Promise<PruneResult[]> {
  const results: PruneResult[] = [];
  const reader = new LiveObjects(m.client);
  for (const entry of stale) {
    const subject = subjectOfEntry(entry);
    const gate = async () => {
      await opts.checkpoint?.().catch((err: unknown) => {
        throw new PruneStopped((err as Error).message, results);
      });
    };
    const result = await deleteOne(m, reader, entry, subject, opts, gate).catch((err: unknown): PruneResult => {
      if (err instanceof PruneStopped) throw err;
      return { subject, action: 'failed', reason: (err as Error).message, entry };
    });
    results.push(result);
    const verb = opts.dryRun && result.action === 'deleted' ? 'deleted (dry run)' : result.action;
    m.log(`${subject} ${verb}${result.reason ? `: ${result.reason}` : ''}`);
  }
  return results;
}

async function deleteOne(
  m: Deleter,
  reader: LiveObjects,
  entry: Entry,
  subject: string,
  opts: DeleteOptions,
  gate: () => Promise<void>,
): Promise<PruneResult> {
  const ref = refOf(entry);
  let mapping: ResourceMapping;
  try {
    mapping = await m.discovery.mapping(ref.apiVersion, ref.kind);
  } catch (err) {
    // Nothing of this kind can exist at this version (its CRD was deleted or the version retired).
    if (isUnservedKind(err)) {
      return { subject, action: 'skipped', reason: `${ref.apiVersion} ${ref.kind} is no longer served`, entry };
    }
    throw err;
  }
  // Not in the list of our objects: gone, or no longer labelled ours; find's GET tells which.
  const live = (await reader.find(mapping, ref, selectorFor(opts.owner.name, opts.owner.namespace))) as
    Live | undefined;
  if (live === undefined) return { subject, action: 'deleted', reason: 'already gone', entry };
  const exclusion = pruneExclusion(live, opts.owner, opts.formerOwners);
  if (exclusion) return { subject, action: 'skipped', reason: exclusion, entry };
  await gate();
  try {
    // With a body, the API server reads DeleteOptions from it alone, so dryRun goes there, not in the query.
    await remove(
      m.client,
      { resource: mapping, namespace: ref.namespace, name: ref.name },
      {
        apiVersion: 'v1',
        kind: 'DeleteOptions',
        propagationPolicy: 'Background',
        ...(opts.dryRun ? { dryRun: ['All'] } : {}),
        ...(live.metadata?.uid ? { preconditions: { uid: live.metadata.uid } } : {}),
      },
    );
  } catch (err) {
    if (isNotFound(err)) return { subject, action: 'deleted', reason: 'already gone', entry };
    return { subject, action: 'failed', reason: `delete failed: ${(err as Error).message}`, entry };
  }
  return { subject, action: 'deleted', entry };
}

/**
 * Polls (every 2s, as Flux) until the objects are gone (a removed Kustomization's delete-and-wait);
 * returns the subjects still there at the timeout.
 */
export async function waitForTermination(
  m: Pick<ManagedCluster, 'client' | 'discovery'>,
  entries: readonly Entry[],
  timeoutMs: number,
): Promise<string[]> {
  const refs = [];
  for (const entry of entries) {
    const r = refOf(entry);
    const resource = await m.discovery.mapping(r.apiVersion, r.kind);
    refs.push({ resource, ...(r.namespace ? { namespace: r.namespace } : {}), name: r.name, entry });
  }
  const left = await waitGone(m.client, refs, { timeoutMs, intervalMs: 2000 });
  return left.map((r) => subjectOfEntry(r.entry));
}
