import type { HealthResult } from '../kstatus/wait.js';
import type { RenamedObject } from '../ssa/renames.js';
import type { Problem } from './problems.js';
import type { Mode } from '../options/settings.js';
import { countActions, type Action, type ChangeSetEntry } from '../ssa/changeset.js';

/** A run's totals: the changeset's actions and the objects prune deleted (in a preview, would delete). */
export type Counts = Record<Action, number> & { deleted: number };

/** The phase of a run a failure happened in (src/reconcile/). */
export type Stage = 'resolve' | 'render' | 'plan' | 'apply' | 'health' | 'prune' | 'record' | 'dependency' | 'removed';

/** Why a run failed: its phase, Flux's Ready reason for it, and the message (as `error`). */
export interface Failure {
  stage: Stage;
  /** kustomize-controller's Ready reason where the same step fails (ArtifactFailed, BuildFailed, ...). */
  reason: string;
  message: string;
  /**
   * The failure is in what the run was given (an input, a file of the repository, a Kustomization;
   * util/user-error.ts): the message says what to change, and running again will not help before
   * that. Absent for failures of the cluster, the network or this action.
   */
  userError?: true;
}

/** One run's outcome: the single value every report (log, summary, outputs, JSON) is rendered from. */
export interface Report {
  mode: Mode;
  /** The Kustomization reconciled, `namespace/name` (derived from the path for action inputs). */
  kustomization: string;
  /**
   * The cluster of a repository that drives several (`clusters/<name>/`, the input cluster), when
   * the run was for one; a merged report (mode: report) has a section per cluster.
   */
  cluster?: string;
  /**
   * In a fan-out job's report (input select): the Kustomization's dependsOn level among all of its
   * files' (0 depends on nothing), so that a merged report lists them in dependsOn order.
   */
  level?: number;
  path: string;
  /** API server URL the run talked to (no credentials). */
  server: string;
  ok: boolean;
  changeset: ChangeSetEntry[];
  counts: Counts;
  durationMs: number;
  /** Each waited-for object's last status (wait: true or healthChecks), when health was checked. */
  health?: HealthResult[];
  /** What prune did (or, in a preview, would do) to objects that left Git. */
  pruned?: PrunedObject[];
  /**
   * Objects pruned with one of the same kind and nearly the same content created in their place
   * (ssa/renames.ts), with what replacing them costs.
   */
  renamed?: RenamedObject[];
  /**
   * In a preview with destructive-approval-label: the pull request label an apply needs, and the
   * objects of destructive kinds it would delete or recreate without it (reconcile/gate.ts).
   */
  approval?: { label: string; objects: string[] };
  /** Kustomizations whose file left the repository while their inventory stayed (see src/reconcile/removed.ts). */
  removed?: RemovedKustomization[];
  /** Where the inventory lives, `namespace/name` of its ConfigMap. */
  inventory?: string;
  /** Things worth knowing that are not errors: skipped files, dropped components, a suspended spec. */
  notes: string[];
  /** With several Kustomizations: each one's own report, in the order they were given. */
  kustomizations?: Report[];
  /** With an error: the objects at fault, with their source file and line where known (annotations). */
  problems?: Problem[];
  /** In drift mode: whether the cluster differed from Git, and whether this run corrected it. */
  drift?: { detected: boolean; corrected: boolean };
  /**
   * What the Kustomization was built from: `this checkout`, `GitRepository ns/name (this checkout)`,
   * or a source fetched or made (`OCIRepository ns/name`), with its revision when it was had.
   */
  source?: { ref: string; revision?: string; originRevision?: string };
  /** Set when the run failed; the changeset then holds what was done before the failure. */
  error?: string;
  /** Set with `error`: the phase that failed and Flux's reason for it. */
  failure?: Failure;
  /**
   * In a preview: the last run its inventory recorded (the last apply, on the default branch), when
   * that failed: since when its runs have failed (the inventory's failingSince) and its message. A
   * failure of this report with it was there before the change.
   */
  before?: Before;
}

/** A Kustomization's last recorded run, when it failed (Report.before). */
export interface Before {
  result: 'Failed';
  /** ISO time of the first of the failed runs in a row. */
  since?: string;
  message?: string;
}

export interface PrunedObject {
  subject: string;
  /** moved: it left this build for another Kustomization's (`movedTo`), which builds it now; not deleted. */
  action: 'deleted' | 'skipped' | 'failed' | 'moved';
  reason?: string;
  /** With action moved: the Kustomization (`namespace/name`) whose build has it now. */
  movedTo?: string;
  /** Set when the object belonged to a Kustomization removed from the repository (`namespace/name`). */
  removedWith?: string;
  /**
   * Set when Kubernetes deletes it because of the change (`the garbage collector`, `the StatefulSet
   * controller`; reconcile/implied.ts), not the prune: the reason says why and what it costs.
   */
  by?: string;
}

export interface RemovedKustomization {
  /** `namespace/name`. */
  kustomization: string;
  /** `namespace/name` of its inventory ConfigMap. */
  inventory: string;
  /** Objects its inventory held. */
  objects: number;
  deletionPolicy: 'MirrorPrune' | 'Delete' | 'WaitForTermination' | 'Orphan';
  /**
   * orphaned: reported only, inventory kept; released: objects left in place by the policy, inventory
   * removed; deleted: objects deleted (or, in a preview, would be) and inventory removed; failed: some
   * objects could not be deleted and stay in the inventory; refused: a prune guard held it back;
   * renamed: every object it held is built by another Kustomization now (handedTo): none is deleted,
   * and its inventory is removed.
   */
  action: 'orphaned' | 'released' | 'deleted' | 'failed' | 'refused' | 'renamed';
  reason: string;
  /**
   * The present Kustomizations (`namespace/name`) whose builds have some of its objects now: those
   * are handed over, never pruned nor deleted by its deletionPolicy, whatever removed-kustomizations says.
   */
  handedTo?: string[];
  /** How many of its objects were handed over. */
  handedOver?: number;
}

/** A report's own parts: everything but what reportOf derives from them. */
export type ReportParts = Omit<Report, 'ok' | 'counts'>;

/**
 * A report from its parts: `ok` from its error (a report fails exactly when it has one), `counts`
 * from its changeset and pruned lists. Every report a run, a merge or a cluster's share makes is
 * made by it, so that these never disagree with what they are derived from.
 */
export function reportOf(parts: ReportParts): Report {
  // A report spread into its parts brings its own ok and counts: those are derived again.
  const { mode, kustomization, path, server, changeset, ok: _ok, counts: _counts, ...rest } = parts as Report;
  return {
    mode,
    kustomization,
    path,
    server,
    ok: parts.error === undefined,
    changeset,
    counts: countReport(changeset, parts.pruned),
    ...rest,
  };
}

/**
 * The totals of a changeset and its prune results. Only `deleted` prune results count: a skipped
 * object stays, and a failed deletion fails the run.
 */
export function countReport(
  changeset: readonly ChangeSetEntry[],
  pruned: readonly Pick<PrunedObject, 'action'>[] = [],
): Counts {
  return { ...countActions(changeset), deleted: pruned.filter((p) => p.action === 'deleted').length };
}

/**
 * Drift: anything to create or configure, or an object that left Git still in the cluster (with
 * prune: Flux's next reconciliation would delete it, so a pending prune is drift).
 */
export function driftFound(report: Pick<Report, 'counts'>): boolean {
  return hasChanges(report);
}

/** True when the plan found anything to create, configure or delete. */
export function hasChanges(report: Pick<Report, 'counts'>): boolean {
  return report.counts.created + report.counts.configured + report.counts.deleted > 0;
}
