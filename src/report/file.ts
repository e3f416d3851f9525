/**
 * A run's report as a file (input report-file, CLI --report-file): what one job of a fan-out hands
 * to mode: report through actions/upload-artifact. The report is the scrubbed value the job's
 * own outputs and summary are made from. Pure: text in, text out.
 */
import type { Report } from './model.js';

export const REPORT_FILE_KIND = 'kustomize-reconcile/report';
export const REPORT_FILE_VERSION = 1;

export interface ReportFile {
  kind: typeof REPORT_FILE_KIND;
  version: typeof REPORT_FILE_VERSION;
  /** The commit the job reconciled (GITHUB_SHA, or the checkout's HEAD for the CLI). */
  revision?: string;
  /** The workflow run and job that wrote it. */
  runUrl?: string;
  job?: string;
  /** When the job's run ended (ISO 8601): with durationMs, when it started; the merge's wall time. */
  finishedAt?: string;
  report: Report;
}

/** The file's text for a (scrubbed) report: one JSON document. */
export function reportFileText(
  report: Report,
  meta: { revision?: string; runUrl?: string; job?: string },
  now: Date = new Date(),
): string {
  const file: ReportFile = {
    kind: REPORT_FILE_KIND,
    version: REPORT_FILE_VERSION,
    ...(meta.revision ? { revision: meta.revision } : {}),
    ...(meta.runUrl ? { runUrl: meta.runUrl } : {}),
    ...(meta.job ? { job: meta.job } : {}),
    finishedAt: now.toISOString(),
    report,
  };
  return JSON.stringify(file, null, 2) + '\n';
}

/** Reads a report file's text; errors name the file and say what is wrong. */
export function parseReportFile(text: string, name: string): ReportFile {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(`${name}: not a kustomize-reconcile report file (not JSON: ${(err as Error).message})`, {
      cause: err,
    });
  }
  const v = value as Partial<ReportFile> | null;
  if (typeof v !== 'object' || v === null || v.kind !== REPORT_FILE_KIND) {
    throw new Error(`${name}: not a kustomize-reconcile report file (kind is not "${REPORT_FILE_KIND}")`);
  }
  if ((v.version as number | undefined) !== REPORT_FILE_VERSION) {
    throw new Error(
      `${name}: report file version ${String(v.version)} is not ${REPORT_FILE_VERSION}: written by another version of kustomize-reconcile; use the same version in every job`,
    );
  }
  const r = v.report as Partial<Report> | null | undefined;
  if (typeof r !== 'object' || r === null || typeof r.ok !== 'boolean' || !Array.isArray(r.changeset) || !r.counts) {
    throw new Error(`${name}: the report in it is incomplete (ok, changeset and counts are required)`);
  }
  return v as ReportFile;
}
