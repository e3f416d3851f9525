/**
 * The record phase: the inventory after the run, succeeded or failed (the inventory rule of
 * src/inventory/plan.ts). A failed run never records what it did not apply, and a run that lost
 * its lock writes nothing: the inventory is the run's that holds it (src/inventory/lease.ts).
 */
import { lostLockMessage, written } from '../inventory/lost-run.js';
import { entryOf, type Entry } from '../objects/id.js';
import type { Problem } from '../report/problems.js';
import { scrubText } from '../report/scrub.js';
import type { ChangeSetEntry } from '../ssa/changeset.js';
import { ApplyError } from '../ssa/apply.js';
import type { PruneResult } from '../ssa/delete.js';
import type { RenamedObject } from '../ssa/renames.js';
import type { HealthResult } from '../kstatus/wait.js';
import type { KustomizationContext } from './context.js';
import { rootCause, type StageError } from './errors.js';
import type { InventoryRun } from '../inventory/session.js';
import type { Moved, Plan, Pruned } from './phases.js';
import { forkHint } from './render.js';
import type { Implied } from './implied.js';

/** What a Kustomization's run did so far: the report is made from it, whether the run ends well or not. */
export interface Progress {
  changeset: ChangeSetEntry[];
  health?: HealthResult[];
  pruned?: PruneResult[];
  /** Objects that left the build for another Kustomization's (phases.ts movesOf). */
  moved?: Moved[];
  /** Objects pruned with one of the same kind and nearly the same content created in their place. */
  renamed?: RenamedObject[];
  /** In a preview with destructive-approval-label: the deletions an apply would need a yes for. */
  unapproved?: string[];
  /** What Kubernetes' own deleters would delete because of the change (implied.ts). */
  implied?: Implied[];
  problems: Problem[];
  /** Each object's source file, keyed by subject. */
  origins: Map<string, string>;
  /** Every object's source file, by building again, when `origins` lacks some (Rendered.traceOrigins). */
  traceOrigins?: () => Promise<Map<string, string>>;
}

/** A run that got to the end: this run's objects are the inventory now, but for the prune's survivors. */
export async function recordSuccess(
  ctx: KustomizationContext,
  inventory: InventoryRun,
  planned: Plan,
  pruned: Pruned,
  known: ReadonlySet<string>,
): Promise<void> {
  await planned.checkpoint?.();
  if (!ctx.applying) return;
  const error = pruned.error && scrubText(pruned.error, known);
  await inventory.end({ kind: 'succeeded', survivors: pruned.survivors }, pruned.next, error, ctx.note);
}

/**
 * The run's own error beside a lost lock: none when it is the loss; an apply's failure without what
 * it says the run had applied "stays in the cluster and in the inventory" (the inventory is the new
 * holder's now: lostLockMessage says what is true of those objects).
 */
export function causeOf(err: StageError, lost: string): string | undefined {
  if (err.message === lost) return undefined;
  const cause = rootCause(err);
  return cause instanceof ApplyError ? cause.detail : err.message;
}

/**
 * A failed run's record, and the report's error: `locate` says whether the error is about objects
 * that annotations can point at (not a lost lock or an unreachable cluster).
 */
export async function recordFailure(
  ctx: KustomizationContext,
  inventory: InventoryRun,
  done: Progress,
  err: StageError,
  known: ReadonlySet<string>,
): Promise<{ message: string; locate: boolean }> {
  const { applying } = ctx;
  // The failed run's record is a write too: only while the lock is still this run's.
  if (applying) await inventory.checkpoint().catch(() => undefined);
  const lost = inventory.lost;
  if (lost !== undefined) {
    ctx.lostLocks.add(`${ctx.spec.namespace}/${ctx.spec.name}`);
    // Another run holds the lock now: this run writes nothing more, not even its record; it reports
    // the loss, and the objects it wrote that no record holds (src/inventory/lease.ts).
    const message = (unrecorded: Entry[] = []) =>
      lostLockMessage(lost, done.changeset, done.pruned ?? [], causeOf(err, lost), unrecorded);
    try {
      return {
        message: message(await inventory.unrecorded(await ctx.manager.existing(written(done.changeset)))),
        locate: false,
      };
    } catch (readErr) {
      return {
        message: `${message()}\nWhat it wrote could not be looked up: ${(readErr as Error).message}`,
        locate: false,
      };
    }
  }
  // A cluster that cannot be reached is one error, not one per object or per step after it.
  const unreachable = ctx.client.unreachable ?? ctx.management.unreachable;
  if (unreachable) {
    const notRecorded = applying && inventory.begun ? '\nThe inventory could not be updated either.' : '';
    return { message: unreachable.message + notRecorded, locate: false };
  }
  const message = err.message + forkHint(ctx.settings, rootCause(err));
  if (applying && inventory.begun) {
    const applied = done.changeset.filter((e) => e.action !== 'skipped').map(entryOf);
    try {
      await inventory.end({ kind: 'failed', applied }, [], scrubText(message, known), ctx.note);
    } catch (writeErr) {
      return {
        message: `${message}\nand the inventory could not be updated: ${(writeErr as Error).message}`,
        locate: true,
      };
    }
  }
  return { message, locate: true };
}
