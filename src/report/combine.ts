/**
 * How several Kustomizations' failures become one report's error: shared by a run over several
 * Kustomizations (src/reconcile/report.ts) and the merge of a fan-out's jobs (merge.ts), so both
 * read alike. Pure.
 */
import type { Report } from './model.js';

/**
 * The failed reports, root causes first: a Kustomization skipped because a dependency failed comes
 * after that failure, so the error (and the check run's title) starts with what to fix.
 */
export function failedFirst<T extends Pick<Report, 'ok' | 'failure'>>(reports: readonly T[]): T[] {
  return [
    ...reports.filter((r) => !r.ok && r.failure?.stage !== 'dependency'),
    ...reports.filter((r) => !r.ok && r.failure?.stage === 'dependency'),
  ];
}

/**
 * The failed Kustomizations' errors, each text once: Kustomizations that failed alike share a line.
 * `name` says how a Kustomization is named (a merged report adds its cluster).
 */
export function combinedError<T extends Pick<Report, 'error' | 'kustomization'>>(
  failed: readonly T[],
  name: (r: T) => string = (r) => r.kustomization,
): string {
  const byError = new Map<string, string[]>();
  for (const r of failed) {
    const error = r.error ?? 'failed';
    byError.set(error, [...(byError.get(error) ?? []), name(r)]);
  }
  return [...byError]
    .map(([error, names]) => `Kustomization${names.length > 1 ? 's' : ''} ${names.join(', ')}: ${error}`)
    .join('\n');
}
