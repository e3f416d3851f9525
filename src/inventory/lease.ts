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
 *
 * A run that finds the Lease held judges the holder's claim before it waits (judgeClaim). A run of
 * this tool writes a lease of leaseMs (30s) and its renewTime from its own clock, and marks the Lease
 * with LOCK_LABELS; a claim beyond that (a duration over the cap, a renewTime further ahead of this
 * runner's clock than clock skew explains) was not written by a run of it as it is. Such a claim on a
 * Lease that says it is ours (the label, or a holder in the format runs write) is bounded: its
 * duration capped, its renewTime no later than the moment this run first saw it plus the skew, so
 * it is taken over once that bounded claim runs out. On any other Lease it is refused at once: the
 * Lease is not taken over (it may be someone else's lock) and not waited for (it never ends).
 */
import type { Entry } from '../objects/id.js';
import { minus, union } from './entries.js';

/** Labels on every Lease a run of this tool writes (as on its inventory ConfigMaps). */
export const LOCK_LABELS: Readonly<Record<string, string>> = { 'app.kubernetes.io/managed-by': 'kustomize-reconcile' };

/**
 * The holders runs of this tool write (src/options/run-info.ts): the workflow run's URL (with its
 * attempt and job), or the host and process of a local run. Recognised on a Lease written before
 * Leases carried LOCK_LABELS.
 */
const RUN_HOLDER = /^https?:\/\/[^\s/]+(\/\S+)?\/actions\/runs\/\d+( attempt \d+)?( job \S+)?$/;
const LOCAL_HOLDER = /^\S+ pid \d+$/;

/** Whether a Lease says it is a lock of this tool: its labels, or a holder in the format runs write. */
export function markedOurs(labels: Readonly<Record<string, string>> | undefined, holder: string): boolean {
  const marked = Object.entries(LOCK_LABELS).every(([k, v]) => labels?.[k] === v);
  return marked || RUN_HOLDER.test(holder) || LOCAL_HOLDER.test(holder);
}

/** The spec fields of a Lease that make a holder's claim. */
export interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number;
  acquireTime?: string | null;
  renewTime?: string | null;
  leaseTransitions?: number;
}

/** The leaseDurationSeconds a run writes for `leaseMs`. */
export const leaseSeconds = (leaseMs: number): number => Math.max(1, Math.round(leaseMs / 1000));

/** What a claim may say before it is absurd: no run of this tool writes more. */
export interface ClaimBounds {
  /** The longest lease (leaseDurationSeconds × 1000) a run writes, with room for another run's leaseMs. */
  maxDurationMs: number;
  /** How far ahead of this runner's clock a renewTime may be: the clock skew tolerated between runners. */
  maxAheadMs: number;
}

/** The bounds for a run whose lease lasts `leaseMs`: twice its lease and at least a minute; 30s of skew. */
export function claimBounds(leaseMs: number): ClaimBounds {
  return { maxDurationMs: Math.max(2 * leaseSeconds(leaseMs) * 1000, 60_000), maxAheadMs: 30_000 };
}

/** Whether a lease is free to take at `now` by its own claim: nobody holds it, or its holder stopped renewing it. */
export function leaseFree(spec: LeaseSpec | undefined, now: number): boolean {
  if (!spec?.holderIdentity) return true;
  const renewed = Date.parse(spec.renewTime ?? spec.acquireTime ?? '');
  const duration = (spec.leaseDurationSeconds ?? 0) * 1000;
  return !Number.isFinite(renewed) || renewed + duration < now;
}

export type ClaimVerdict =
  /** Nobody holds it, or the (bounded) claim ran out: take it. `absurd` says what was bounded. */
  | { kind: 'free'; absurd?: string[] }
  /** Held until `untilMs` (wall clock) unless renewed or released before: wait. */
  | { kind: 'held'; untilMs: number; absurd?: string[] }
  /** An absurd claim on a Lease that is not marked ours: neither wait nor take over. */
  | { kind: 'untrusted'; absurd: string[] };

const secondsText = (ms: number) => `${Math.round(ms / 1000)}s`;
/** A time ahead: seconds, or whole days past two. */
const aheadText = (ms: number) => (ms >= 2 * 86_400_000 ? `${Math.floor(ms / 86_400_000)} days` : secondsText(ms));

/**
 * The verdict on a Lease's claim at `now`, `firstSeenMs` being when this run first saw the Lease as
 * it is (this resourceVersion), both by this runner's wall clock. A sane claim is judged as it says
 * (leaseFree); an absurd one as the module comment says.
 */
export function judgeClaim(
  spec: LeaseSpec | undefined,
  ours: boolean,
  now: number,
  firstSeenMs: number,
  bounds: ClaimBounds,
): ClaimVerdict {
  if (!spec?.holderIdentity) return { kind: 'free' };
  const renewed = Date.parse(spec.renewTime ?? spec.acquireTime ?? '');
  if (!Number.isFinite(renewed)) return { kind: 'free' };
  const duration = Math.max(0, (spec.leaseDurationSeconds ?? 0) * 1000);
  const absurd: string[] = [];
  if (duration > bounds.maxDurationMs) {
    absurd.push(
      `its leaseDurationSeconds ${spec.leaseDurationSeconds} is more than the ${secondsText(bounds.maxDurationMs)} a run of kustomize-reconcile ever writes`,
    );
  }
  if (renewed > firstSeenMs + bounds.maxAheadMs) {
    absurd.push(
      `its renewTime ${spec.renewTime ?? spec.acquireTime} is ${aheadText(renewed - firstSeenMs)} ahead of this runner's clock ` +
        `(more than the ${secondsText(bounds.maxAheadMs)} of clock skew tolerated)`,
    );
  }
  if (absurd.length > 0 && !ours) return { kind: 'untrusted', absurd };
  const untilMs = Math.min(renewed, firstSeenMs + bounds.maxAheadMs) + Math.min(duration, bounds.maxDurationMs);
  const bounded = absurd.length > 0 ? { absurd } : {};
  return untilMs < now ? { kind: 'free', ...bounded } : { kind: 'held', untilMs, ...bounded };
}

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
 * The objects a run that lost its lock wrote that still exist (`stillThere`) and that the record of
 * the run that holds the lock now does not hold (as entries or pending): a write already on its way
 * when the lock was taken over. The run that lost the lock does not record them (it writes nothing
 * more, src/reconcile/record.ts); it names them in its report, for a person to look at.
 */
export function unrecorded(
  latest: { entries: readonly Entry[]; pending: readonly Entry[] } | undefined,
  stillThere: readonly Entry[],
): Entry[] {
  return minus(stillThere, union(latest?.entries ?? [], latest?.pending ?? []));
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
