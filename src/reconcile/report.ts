/** The reports of a run that are not one Kustomization's own: failed before it, skipped, combined. */
import { combinedError, failedFirst } from '../report/combine.js';
import { reportOf, type Report } from '../report/model.js';
import { runMode, type Settings } from '../options/settings.js';
import type { KustomizationSpec } from '../flux/types.js';
import type { Outcome } from '../flux/object.js';
import { failureOf, STAGE_REASONS, type Stage } from './errors.js';

/** The report of a run that failed before any Kustomization could start. */
export function emptyReport(
  settings: Settings,
  durationMs: number,
  error: string,
  stage: Stage = 'resolve',
  cause?: unknown,
): Report {
  return reportOf({
    mode: runMode(settings),
    kustomization: '',
    path: settings.path,
    server: '',
    changeset: [],
    durationMs,
    notes: [],
    error,
    failure: failureOf(stage, error, cause),
  });
}

/**
 * The report of a Kustomization that was not built: skipped, or refused before its build (`cause`:
 * the error that refused it, which may be the user's).
 */
export function skippedReport(
  settings: Settings,
  spec: KustomizationSpec,
  reason: string,
  stage: Stage,
  opts: { fluxReason?: string; cause?: unknown } = {},
): Report {
  return {
    ...emptyReport(settings, 0, reason),
    kustomization: `${spec.namespace}/${spec.name}`,
    path: spec.path,
    failure: failureOf(stage, reason, opts.cause, opts.fluxReason),
  };
}

/** One report for several Kustomizations: totals, all objects, and each Kustomization's own report. */
export function combine(settings: Settings, reports: Report[], durationMs: number, server: string): Report {
  const changeset = reports.flatMap((r) => r.changeset);
  const problems = reports.flatMap((r) => r.problems ?? []);
  const health = reports.flatMap((r) => r.health ?? []);
  const pruned = reports.flatMap((r) => r.pruned ?? []);
  const renamed = reports.flatMap((r) => r.renamed ?? []);
  // The root causes first: a Kustomization skipped because a dependency failed comes after that failure.
  const failed = failedFirst(reports);
  const error = failed.length > 0 ? combinedError(failed) : undefined;
  const first = failed[0]?.failure;
  return reportOf({
    mode: runMode(settings),
    kustomization: reports.map((r) => r.kustomization).join(', '),
    path: reports.map((r) => r.path).join(', '),
    server,
    changeset,
    durationMs,
    notes: reports.flatMap((r) => r.notes.map((n) => `[${r.kustomization}] ${n}`)),
    ...(health.length > 0 ? { health } : {}),
    ...(pruned.length > 0 ? { pruned } : {}),
    ...(renamed.length > 0 ? { renamed } : {}),
    ...(problems.length > 0 ? { problems } : {}),
    ...(error !== undefined ? { error } : {}),
    ...(error !== undefined && first ? { failure: { ...first, message: error } } : {}),
    kustomizations: reports,
  });
}

/** kustomize-controller's Ready condition after a successful reconciliation. */
const SUCCEEDED: Outcome = { ok: true, reason: 'ReconciliationSucceeded', message: 'Applied revision' };

/** The Ready condition kustomize-controller would have written for this report. */
export function outcomeOf(report: Report): Outcome {
  if (report.ok) return SUCCEEDED;
  return {
    ok: false,
    reason: report.failure?.reason ?? STAGE_REASONS.apply,
    message: report.error ?? report.failure?.message ?? 'failed',
  };
}

/** The Ready condition of a run another job recorded in its inventory (a failure's stage is not kept). */
export function outcomeOfStatus(status: { result: string; message?: string }): Outcome {
  if (status.result === 'Succeeded') return SUCCEEDED;
  return { ok: false, reason: STAGE_REASONS.apply, message: status.message ?? 'failed' };
}
