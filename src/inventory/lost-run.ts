/**
 * A run that lost its lock (src/inventory/lease.ts has the rule): what it says. It writes nothing
 * more, not even its record: the objects it wrote that the new holder's record does not hold (those
 * that still exist: ResourceManager.existing, ssa/manager.ts) are named in its report instead.
 */
import { entryOf, subjectOfEntry, type Entry, type ObjectRef } from '../objects/id.js';

/**
 * What is read here of ssa's ChangeSetEntry and PruneResult: written as shapes so that inventory/
 * does not import ssa/ (which imports inventory/).
 */
type Written = ObjectRef & { subject: string; action: string };
type Pruned = { subject: string; action: string; reason?: string | undefined };

/** The objects a run wrote (created or changed), as inventory entries. */
export function written(changeset: readonly Written[]): Entry[] {
  return changeset.filter((e) => e.action === 'created' || e.action === 'configured').map(entryOf);
}

/**
 * The run's error once the lock was lost: the reason (who took it), that the run stopped, and what
 * it had applied and pruned before it noticed. `cause` is the run's own error when it was not the
 * lock's; `unrecorded` the objects it wrote that exist and that no record holds.
 */
export function lostLockMessage(
  lost: string,
  changeset: readonly Written[],
  pruned: readonly Pruned[],
  cause?: string,
  unrecorded: readonly Entry[] = [],
): string {
  const applied = changeset.filter((e) => e.action === 'created' || e.action === 'configured');
  const deleted = pruned.filter((r) => r.action === 'deleted' && r.reason === undefined);
  return [
    `${lost}. This run stopped: it applied nothing more and pruned nothing${deleted.length > 0 ? ' more' : ''}.`,
    // What it applied is what the new holder found: it may have changed or pruned any of it since.
    applied.length > 0
      ? ` It had applied ${applied.length} object(s): ${applied.map((e) => `${e.subject} ${e.action}`).join(', ')};` +
        ' the run that holds the lock now may have changed or pruned them since.'
      : ' It had applied nothing.',
    deleted.length > 0
      ? ` It had pruned ${deleted.length} object(s): ${deleted.map((r) => r.subject).join(', ')}.`
      : '',
    ' The inventory is left to the run that holds the lock now; run this revision again if it is the one to apply.',
    unrecorded.length > 0
      ? ` ${unrecorded.length} object(s) it wrote exist but are in no inventory (a write already on its way when the lock ` +
        `was taken over), so no run prunes them: ${unrecorded.map(subjectOfEntry).join(', ')}; delete them, or apply a revision that has them.`
      : '',
    cause !== undefined ? `\n${cause}` : '',
  ].join('');
}
