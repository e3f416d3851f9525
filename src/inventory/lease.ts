/**
 * When the holder of a Kustomization's lock may go on writing, and what a run that lost it may still
 * record; pure (src/inventory/lock.ts is the edge).
 *
 * A run writes (applies, deletes, records) only while its lease is surely its own by its own
 * monotonic clock: renewed within the last half of the lease's duration. Past that it renews first,
 * so a stall (SIGSTOP, a suspended runner, a long GC) is noticed before the next write, and a clock
 * skew of up to half the lease with the run that would take it over is tolerated. A renewal refused
 * because the lease changed (another run took it over, released it or deleted it) means the lock is
 * lost; so does a renewal that fails once the lease has run out.
 */
import type { Entry } from '../objects/id.js';
import { minus, union } from './entries.js';

export interface LeaseState {
  /** Why the lease was found lost earlier, if it was. */
  lost?: string;
  /** Monotonic milliseconds since the last successful renewal (or the acquisition) was sent. */
  sinceRenewedMs: number;
  /** The lease's duration as recorded in it (leaseDurationSeconds × 1000). */
  durationMs: number;
}

export type LeaseVerdict = { kind: 'held' } | { kind: 'renew' } | { kind: 'lost'; reason: string };

/** Before a write: go on, renew first, or stop. */
export function leaseCheck(s: LeaseState): LeaseVerdict {
  if (s.lost !== undefined) return { kind: 'lost', reason: s.lost };
  return s.sinceRenewedMs < s.durationMs / 2 ? { kind: 'held' } : { kind: 'renew' };
}

export type RenewalOutcome =
  | { kind: 'renewed' }
  /**
   * The lease changed under us (409) or is gone (404). `holder` is who holds it now; a lease
   * released since names its last holder in `lastHolder`.
   */
  | { kind: 'taken'; holder?: string; lastHolder?: string; gone?: boolean }
  | { kind: 'failed'; message: string };

/** After a renewal: held, or lost with the reason (a sentence fragment naming who took it). */
export function afterRenewal(outcome: RenewalOutcome, s: Omit<LeaseState, 'lost'>): LeaseVerdict {
  const seconds = (ms: number) => `${Number((ms / 1000).toFixed(1))}s`;
  const stalled = `while this run did not renew it for ${seconds(s.sinceRenewedMs)} (its lease lasts ${seconds(s.durationMs)})`;
  switch (outcome.kind) {
    case 'renewed':
      return { kind: 'held' };
    case 'taken': {
      const who = outcome.gone
        ? 'it was deleted by another run (its Kustomization was removed)'
        : outcome.holder
          ? `it was taken over by ${outcome.holder}`
          : `it was taken over by ${outcome.lastHolder ?? 'another run'} (released since)`;
      return { kind: 'lost', reason: `${who}, ${stalled}` };
    }
    case 'failed':
      return s.sinceRenewedMs >= s.durationMs
        ? {
            kind: 'lost',
            reason: `it could not be renewed before it ran out, ${stalled}: ${outcome.message}`,
          }
        : { kind: 'held' };
  }
}

/**
 * What a run that lost its lock adds to the inventory another run now owns: nothing but the objects
 * it wrote that still exist (`stillThere`) and that the record does not hold yet, as pending (a later
 * run looks them up). It never drops or confirms entries and leaves the status alone: the record is
 * the new holder's. Undefined when there is nothing to add.
 */
export function lostRunPending(
  latest: { entries: readonly Entry[]; pending: readonly Entry[] } | undefined,
  stillThere: readonly Entry[],
): Entry[] | undefined {
  const add = minus(stillThere, union(latest?.entries ?? [], latest?.pending ?? []));
  return add.length > 0 ? union(latest?.pending ?? [], add) : undefined;
}

/**
 * Pending entries after a run's final record. A successful run settled its leftovers (pruned or
 * kept); a failed one keeps them. Entries added by someone else since this run recorded its own
 * pending (`recorded`), i.e. by a run that lost the lock to this one, stay until a run settles them.
 * Whatever the run confirmed (`confirmed`) is no longer pending.
 */
export function pendingAfter(opts: {
  succeeded: boolean;
  leftover: readonly Entry[];
  recorded: readonly Entry[];
  latest: readonly Entry[];
  confirmed: readonly Entry[];
}): Entry[] {
  const concurrent = minus(opts.latest, opts.recorded);
  return minus(union(opts.succeeded ? [] : opts.leftover, concurrent), opts.confirmed);
}
