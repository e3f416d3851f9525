/**
 * The jobs of a merge checked against each other and against the plan (mode: report): every
 * Kustomization once, and, with the plan's matrix, every entry of it once and nothing else. A job
 * that wrote no report file becomes a failed row of its own; two reports of one Kustomization are
 * both kept and fail the merge. Pure.
 */
import type { ExpectedJob } from '../fanout/matrix.js';
import { clusterLabel, clusterNameOf, type InCluster } from './clusters.js';
import { reportOf, type RemovedKustomization, type Report } from './model.js';

/** One Kustomization's report in the merge, with the file it came from. */
export interface Row {
  k: Report;
  /** The report file's name; '' for a job that wrote none. */
  file: string;
  /** How text names it: with its cluster, and with its file when it is in more than one. */
  label: string;
}

/** What the checks found: the rows (those of missing jobs added), and the merge's errors and notes. */
export interface JobCheck {
  rows: Row[];
  errors: string[];
  notes: string[];
}

export const NO_MATRIX_NOTE =
  "No plan matrix was given (input matrix: the plan job's matrix output; CLI --matrix): a job that wrote no report file cannot be noticed, only two reports of one Kustomization";

const keyOf = (cluster: string, kustomization: string) => `${cluster}\u0000${kustomization}`;

/** `a.json, b.json`, the first few of many. */
function fileList(names: readonly string[]): string {
  const shown = names.slice(0, 5).join(', ');
  return names.length > 5 ? `${shown} and ${names.length - 5} more` : shown;
}

/**
 * The rows checked: a Kustomization in several rows (two files for one job: a job that ran twice, or
 * a file that is not what it says) is an error, every row kept and named with its file; with
 * `expected`, a row of a Kustomization not in the matrix is an error, each row takes its entry's
 * dependsOn level, and an entry without a row gets a failed row naming its id. A row without a
 * Kustomization (a job that failed before it knew one) has no identity to check: it is failed already.
 */
export function checkJobs(
  rows: readonly Row[],
  removed: readonly { r: InCluster<RemovedKustomization>; file: string }[],
  expected: readonly ExpectedJob[] | undefined,
  mode: Report['mode'],
): JobCheck {
  const errors: string[] = [];
  const notes: string[] = [];
  const byKey = new Map<string, Row[]>();
  for (const row of rows) {
    if (row.k.kustomization === '') continue;
    const key = keyOf(clusterNameOf(row.k), row.k.kustomization);
    byKey.set(key, [...(byKey.get(key) ?? []), row]);
  }
  const out = rows.map((row) => ({ ...row }));
  const relabel = new Map<Row, Row>(rows.map((r, i) => [r, out[i]!]));
  for (const group of byKey.values()) {
    if (group.length < 2) continue;
    const label = group[0]!.label;
    errors.push(
      `Kustomization ${label} is in ${group.length} report files (${fileList(group.map((r) => r.file))}): each job writes one, so a job ran twice or a file is not what it says; all of them are shown`,
    );
    for (const row of group) {
      const mine = relabel.get(row)!;
      mine.label = `${label} (${row.file})`;
      mine.k = {
        ...row.k,
        notes: [...row.k.notes, `one of ${group.length} reports of this Kustomization: ${row.file}`],
      };
    }
  }
  const removals = new Map<string, string[]>();
  for (const x of removed) {
    const key = keyOf(clusterNameOf(x.r), x.r.kustomization);
    removals.set(key, [...(removals.get(key) ?? []), x.file]);
  }
  for (const [key, files] of removals) {
    if (files.length < 2) continue;
    const [cluster, name] = key.split('\u0000') as [string, string];
    errors.push(
      `Removed Kustomization ${clusterLabel(cluster, name)} is in ${files.length} report files (${fileList(files)}): one job of a cluster handles removed Kustomizations; all of them are shown`,
    );
  }
  if (expected === undefined) return { rows: out, errors, notes: [NO_MATRIX_NOTE] };

  const entries = new Map(expected.map((e) => [keyOf(e.cluster, e.kustomization), e]));
  for (const row of out) {
    if (row.k.kustomization === '') continue;
    const entry = entries.get(keyOf(clusterNameOf(row.k), row.k.kustomization));
    if (entry === undefined) {
      errors.push(
        `Kustomization ${row.label} (${row.file}) is not in the plan's matrix: no job of this run reconciles it`,
      );
    } else if (entry.level !== undefined) {
      row.k = { ...row.k, level: entry.level };
    }
  }
  for (const [key, e] of entries) {
    if (byKey.has(key)) continue;
    const k = missingReport(e, mode);
    out.push({ k, file: '', label: clusterLabel(e.cluster, e.kustomization) });
  }
  return { rows: out, errors, notes };
}

/** The failed row of a matrix entry that has no report file. */
function missingReport(e: ExpectedJob, mode: Report['mode']): Report {
  return reportOf({
    mode,
    kustomization: e.kustomization,
    ...(e.cluster ? { cluster: e.cluster } : {}),
    ...(e.level !== undefined ? { level: e.level } : {}),
    path: e.path ?? '',
    server: '',
    changeset: [],
    durationMs: 0,
    notes: [],
    error: `no report file of matrix entry ${e.id}: its job failed before writing one, was cancelled, or its artifact was not downloaded`,
  });
}
