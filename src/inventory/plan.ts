/**
 * The inventory rule and the prune guards, pure. Nothing a run creates is forgotten, and confirmed
 * entries claim only what was applied: before applying, the objects about to be applied are
 * recorded as pending; afterwards the entries are the new set on success (plus objects whose
 * deletion failed), or old ∪ applied on failure, when nothing is pruned.
 */
import { minus, union, type Entry } from './entries.js';

export interface PruneGuard {
  /** Largest share (0–1) of the inventory one run may delete. */
  maxShare: number;
  /** Lifts both guards (input allow-large-prune). */
  allowLarge: boolean;
}

/** Prunes of this many objects or fewer are never held back by the share rule. */
export const SMALL_PRUNE = 5;

/**
 * Why pruning `stale` must not happen, or undefined. Two guards beyond Flux: a build that renders
 * nothing while the inventory holds objects (a broken path or an emptied overlay would otherwise
 * delete everything), and a prune of more than `maxShare` of the inventory (more than SMALL_PRUNE objects).
 */
export function pruneRefusal(
  old: readonly Entry[],
  next: readonly Entry[],
  stale: readonly Entry[],
  guard: PruneGuard,
): string | undefined {
  if (guard.allowLarge || stale.length === 0) return undefined;
  if (next.length === 0) {
    return (
      `the build rendered no objects, so pruning would delete all ${old.length} object(s) of the inventory; ` +
      'nothing was deleted. If that is intended, set the input allow-large-prune: true for one run'
    );
  }
  return shareRefusal(old.length, stale.length, guard);
}

/** The share rule alone: deleting `deleting` of `total` objects, more than SMALL_PRUNE and above maxShare. */
export function shareRefusal(total: number, deleting: number, guard: PruneGuard): string | undefined {
  if (guard.allowLarge || deleting <= SMALL_PRUNE || total === 0) return undefined;
  const share = deleting / total;
  if (share <= guard.maxShare) return undefined;
  return (
    `pruning would delete ${deleting} of ${total} object(s) (${Math.round(share * 100)}%), more than ` +
    `prune-max-share (${Math.round(guard.maxShare * 100)}%); nothing was deleted. If that is intended, raise ` +
    'prune-max-share or set allow-large-prune: true for one run'
  );
}

/** The outcome of a run, as the inventory rule needs it. */
export type RunOutcome =
  /** Applied (and healthy where checked); `survivors` are stale objects that were not deleted. */
  | { kind: 'succeeded'; survivors: readonly Entry[] }
  /** Failed before or during apply, or in the health check; `applied` is what this run applied. */
  | { kind: 'failed'; applied: readonly Entry[] };

/** The confirmed entries after a run: `old` is what the run started from (confirmed ∪ pending). */
export function entriesAfter(old: readonly Entry[], next: readonly Entry[], outcome: RunOutcome): Entry[] {
  // On failure the applied objects' versions win: the version this run applied is the one served.
  return outcome.kind === 'succeeded' ? union(next, outcome.survivors) : union(outcome.applied, old);
}

/**
 * Another writer's changes since this run read the inventory, merged into this run's result: entries
 * they added stay (this run knows nothing of those objects); everything else is this run's answer.
 */
export function mergeConcurrent(base: readonly Entry[], latest: readonly Entry[], ours: readonly Entry[]): Entry[] {
  return union(ours, minus(latest, base));
}
