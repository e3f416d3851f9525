/**
 * A run's report as a file (input report-file, CLI --report-file): what one job of a fan-out hands
 * to mode: report through actions/upload-artifact. The report is the scrubbed value the job's
 * own outputs and summary are made from. Pure: text in, text out.
 */
import { checkReport, SchemaError } from './file-schema.js';
import type { Report } from './model.js';
import { ReportFileError } from './file-error.js';

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

/** A report file larger than this is refused before it is read (a job's report is far smaller). */
export const MAX_REPORT_FILE_BYTES = 32 * 1024 * 1024;

/**
 * Reads a report file's text, strictly: report files are untrusted (mode: report may merge the files
 * of a fork's run). Every field is checked (file-schema.ts) and only checked fields are kept; errors
 * name the file and the field.
 */
export function parseReportFile(text: string, name: string): ReportFile {
  if (text.length > MAX_REPORT_FILE_BYTES) {
    throw new ReportFileError(
      name,
      `not a report file this version writes (over ${MAX_REPORT_FILE_BYTES / 1024 / 1024} MiB)`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ReportFileError(name, `not a kustomize-reconcile report file (not JSON: ${(err as Error).message})`, {
      cause: err,
    });
  }
  const v = value as Partial<ReportFile> | null;
  if (typeof v !== 'object' || v === null || Array.isArray(v) || v.kind !== REPORT_FILE_KIND) {
    throw new ReportFileError(name, `not a kustomize-reconcile report file (kind is not "${REPORT_FILE_KIND}")`);
  }
  if ((v.version as number | undefined) !== REPORT_FILE_VERSION) {
    throw new ReportFileError(
      name,
      `report file version ${String(v.version)} is not ${REPORT_FILE_VERSION}: written by another version of kustomize-reconcile; use the same version in every job`,
    );
  }
  const report: unknown = v.report;
  if (typeof report !== 'object' || report === null) {
    throw new ReportFileError(name, `the report in it is incomplete (no report)`);
  }
  try {
    const o = v as Record<string, unknown>;
    const extra = Object.keys(o).filter((k) => !FILE_FIELDS.includes(k));
    if (extra.length > 0) throw new SchemaError(`unknown field${extra.length > 1 ? 's' : ''} ${extra.join(', ')}`);
    const meta = (key: 'revision' | 'runUrl' | 'job' | 'finishedAt') => {
      const m = o[key];
      if (m === undefined) return {};
      // eslint-disable-next-line no-control-regex
      if (typeof m !== 'string' || m.length > 2048 || /[\u0000-\u001f]/.test(m)) {
        throw new SchemaError(`${key}: expected a string of one line`);
      }
      return { [key]: m };
    };
    return {
      kind: REPORT_FILE_KIND,
      version: REPORT_FILE_VERSION,
      ...meta('revision'),
      ...meta('runUrl'),
      ...meta('job'),
      ...meta('finishedAt'),
      report: checkReport(report),
    };
  } catch (err) {
    if (!(err instanceof SchemaError)) throw err;
    throw new ReportFileError(name, `not a report file this version writes: ${err.message}`, { cause: err });
  }
}

const FILE_FIELDS = ['kind', 'version', 'revision', 'runUrl', 'job', 'finishedAt', 'report'];
