/**
 * The merge of a fan-out's reports (mode: report, CLI `report`). Each matrix job wrote its report as
 * a file (file.ts); here they become one report, as if one run had reconciled every Kustomization,
 * each carrying its cluster, so that one PR comment and one check run tell the whole change. Pure:
 * the edge (merge-files.ts) reads the files.
 */
import type { ExpectedJob } from '../fanout/matrix.js';
import { byCluster, clusterLabel, clusterNameOf, type InCluster } from './clusters.js';
import { combinedError, failedFirst } from './combine.js';
import type { ReportFile } from './file.js';
import { checkJobs, type Row } from './merge-jobs.js';
import {
  countReport,
  reportOf,
  hasChanges,
  type Failure,
  type PrunedObject,
  type RemovedKustomization,
  type Report,
} from './model.js';

export interface NamedReportFile {
  /** Where the file was read from (relative to the workspace): named in errors and notes. */
  name: string;
  file: ReportFile;
}

/** A removed Kustomization with the prune results of its objects, which go wherever it goes. */
interface Removal {
  r: InCluster<RemovedKustomization>;
  pruned: InCluster<PrunedObject>[];
  file: string;
}

/** One file's share of the merge: its Kustomizations, and what its report holds besides them. */
interface Share {
  name: string;
  cluster: string;
  /** Its Kustomizations' reports, each settled: counts and verdict worked out from its own lists. */
  parts: Report[];
  removals: Removal[];
  /** Notes of the job's report that belong to none of its Kustomizations. */
  notes: string[];
  /** What is wrong with the file that none of its Kustomizations' verdicts says. */
  errors: string[];
  failure?: Failure;
  /** The job's drift, worked out again (drift mode). */
  drift?: NonNullable<Report['drift']>;
}

/**
 * One report of the files' reports, as if one run had reconciled every Kustomization. The files
 * are untrusted (a fork's run may have written them), so nothing is taken from a file's totals or
 * verdict: each Kustomization's counts come from its own object lists, and it failed when its
 * report says so, gives an error or a failure, or lists a failed deletion; a file's report that
 * failed, lists objects none of its Kustomizations does, or had a removal fail, fails the merge
 * whatever else it says. Every Kustomization should be in one file: two reports of one are both
 * kept and fail the merge; with `expected` (the plan's matrix), an entry without a report is a
 * failed row and a Kustomization not in it an error (without it, a note says what is not checked).
 * Ordered by cluster (single-cluster first, then as clusters first appear in the files sorted by
 * name) and then by dependsOn level (the plan's, else the jobs'); the error names the failed
 * Kustomizations, root causes first. Throws when there are no files or their modes differ: one PR
 * comment cannot say both what was applied and what would be.
 */
export function mergeReports(files: readonly NamedReportFile[], expected?: readonly ExpectedJob[]): Report {
  if (files.length === 0) throw new Error('no report files to merge');
  const sorted = [...files].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const mode = sameMode(sorted);
  const shares = sorted.map(shareOf);
  const rows: Row[] = shares.flatMap((s) => s.parts.map((k) => ({ k, file: s.name, label: nameOf(k) })));
  const removals = shares.flatMap((s) => s.removals);
  const checked = checkJobs(rows, removals, expected, mode);
  const label = new Map(checked.rows.map((r) => [r.k, r.label]));
  const labelOf = (k: Report) => label.get(k) ?? nameOf(k);
  const parts = checked.rows.map((r) => r.k);
  const clusters = clusterOrder(parts, removals);
  // Stable sorts: by dependsOn level where the plan or the jobs said it, then by cluster.
  const ordered = byCluster(
    [...parts].sort((a, b) => (a.level ?? 0) - (b.level ?? 0)),
    clusters,
  );
  const removed = byCluster(
    removals.map((x) => ({ ...x, cluster: clusterNameOf(x.r) })),
    clusters,
  );
  const notes = [
    ...checked.notes,
    ...revisionNotes(sorted),
    ...ordered.flatMap((k) => k.notes.map((n) => `[${labelOf(k)}] ${n}`)),
    ...shares.flatMap((s) => s.notes.map((n) => `[${s.name}] ${n}`)),
  ];
  const changeset = ordered.flatMap((k) => k.changeset);
  const pruned = [...ordered.flatMap((k) => k.pruned ?? []), ...removed.flatMap((x) => x.pruned)];
  const health = ordered.flatMap((k) => k.health ?? []);
  const renamed = ordered.flatMap((k) => k.renamed ?? []);
  const problems = ordered.flatMap((k) => k.problems ?? []);
  const failed = failedFirst(ordered);
  const jobErrors = shares.filter((s) => s.errors.length > 0);
  const errors = [
    ...(failed.length > 0 ? [combinedError(failed, labelOf)] : []),
    ...jobErrors.flatMap((s) => s.errors.map((e) => `${jobOf(s)}: ${e}`)),
    ...checked.errors,
  ];
  const error = errors.length > 0 ? errors.join('\n') : undefined;
  const first = failed[0]?.failure ?? jobErrors.find((s) => s.failure)?.failure;
  const drift = mergedDrift(shares);
  return reportOf({
    mode,
    kustomization: ordered.map(nameOf).join(', '),
    path: ordered.map((k) => k.path).join(', '),
    server: [...new Set(sorted.map((f) => f.file.report.server).filter((s) => s !== ''))].join(', '),
    changeset,
    // From the first job's start to the last one's end: dependent jobs run one after the other.
    durationMs: wallTime(sorted),
    notes,
    ...(health.length > 0 ? { health } : {}),
    ...(pruned.length > 0 ? { pruned } : {}),
    ...(renamed.length > 0 ? { renamed } : {}),
    ...(removed.length > 0 ? { removed: removed.map((x) => x.r) } : {}),
    ...(problems.length > 0 ? { problems } : {}),
    ...(drift ? { drift } : {}),
    ...(error !== undefined ? { error } : {}),
    ...(error !== undefined && first ? { failure: { ...first, message: error } } : {}),
    kustomizations: ordered,
  });
}

/** How the merged report names a Kustomization: with its cluster, as `production · flux-system/apps`. */
function nameOf(k: Report): string {
  return clusterLabel(clusterNameOf(k), k.kustomization || k.path);
}

function jobOf(s: Share): string {
  return `${s.name}${s.cluster ? ` (cluster ${s.cluster})` : ''}`;
}

/** The files' one mode; an error naming the files of each mode when they differ. */
function sameMode(files: readonly NamedReportFile[]): Report['mode'] {
  const byMode = new Map<string, string[]>();
  for (const f of files) byMode.set(f.file.report.mode, [...(byMode.get(f.file.report.mode) ?? []), f.name]);
  if (byMode.size > 1) {
    const list = [...byMode].map(([mode, names]) => `${mode}: ${names.join(', ')}`).join('; ');
    throw new Error(
      `the report files are of different modes (${list}): merge the report files of one workflow run, whose jobs all run one mode`,
    );
  }
  return files[0]!.file.report.mode;
}

/** Puts `cluster` on a value, or leaves the value without one for the single-cluster ''. */
function withCluster<T extends object>(x: T, cluster: string): InCluster<T> {
  const { cluster: _old, ...rest } = x as InCluster<T>;
  return (cluster ? { ...rest, cluster } : rest) as InCluster<T>;
}

/**
 * A Kustomization's report with its counts from its own lists and its verdict from what it holds:
 * failed when it says so, gives an error or a failure, or lists a failed deletion (a failed
 * deletion fails the run); a failure without an error gets one.
 */
function settled(k: Report): Report {
  const failedDeletes = (k.pruned ?? []).filter((p) => p.action === 'failed');
  const ok = k.ok && k.error === undefined && k.failure === undefined && failedDeletes.length === 0;
  const { error: _error, ...rest } = k;
  const why =
    k.error ??
    k.failure?.message ??
    (failedDeletes.length > 0
      ? `deleting ${failedDeletes.map((p) => p.subject).join(', ')} failed`
      : 'failed (its report gives no error)');
  return reportOf({ ...rest, ...(ok ? {} : { error: why }) });
}

/** Splits a file's report into its Kustomizations' reports and the rest, and checks it against itself. */
function shareOf({ name, file }: NamedReportFile): Share {
  const r = file.report;
  const cluster = r.cluster ?? '';
  const errors: string[] = [];
  const removedNames = new Set((r.removed ?? []).map((x) => x.kustomization));
  const ofRemoved = (p: PrunedObject) => p.removedWith !== undefined && removedNames.has(p.removedWith);
  const removals = (r.removed ?? []).map((x) => ({
    r: withCluster(x, cluster),
    pruned: (r.pruned ?? []).filter((p) => p.removedWith === x.kustomization).map((p) => withCluster(p, cluster)),
    file: name,
  }));
  let parts: Report[];
  let notes: string[] = [];
  if (!r.kustomizations?.length) {
    // A single Kustomization's report is its own part, less what belongs to removed Kustomizations.
    const pruned = (r.pruned ?? []).filter((p) => !ofRemoved(p));
    const { kustomizations: _k, removed: _r, pruned: _p, drift: _d, ...rest } = r;
    parts = [settled({ ...withCluster(rest, cluster), ...(pruned.length > 0 ? { pruned } : {}) })];
  } else {
    parts = r.kustomizations.map((k) => {
      if (k.cluster !== undefined && k.cluster !== cluster) {
        errors.push(`its Kustomization ${k.kustomization} names cluster ${k.cluster}, its report ${cluster || 'none'}`);
      }
      return settled(withCluster(k, k.cluster ?? cluster));
    });
    // combine() gave the job's report its Kustomizations' notes, each prefixed with its name.
    const theirs = new Set(r.kustomizations.flatMap((k) => k.notes.map((n) => `[${k.kustomization}] ${n}`)));
    notes = r.notes.filter((n) => !theirs.has(n));
    const extra = unlisted(r, r.kustomizations, removals);
    if (extra !== undefined) errors.push(extra);
    const rest = unexplained(r, r.kustomizations);
    if (rest !== undefined) errors.push(rest);
  }
  const failedRemovals = removals.filter(
    (x) => x.r.action === 'failed' || x.r.action === 'refused' || x.pruned.some((p) => p.action === 'failed'),
  );
  if (failedRemovals.length > 0 && errors.length === 0 && parts.every((k) => k.ok) && r.ok) {
    const list = failedRemovals.map((x) => `${x.r.kustomization} (${x.r.action}: ${x.r.reason})`).join(', ');
    errors.push(`removing Kustomizations failed, yet its report says it succeeded: ${list}`);
  }
  return {
    name,
    cluster,
    parts,
    removals,
    notes,
    errors,
    ...(errors.length > 0 && r.failure ? { failure: r.failure } : {}),
    ...(r.mode === 'drift' ? { drift: driftOf(r, parts, removals) } : {}),
  };
}

/**
 * The part of a combined report's error its Kustomizations do not explain: what src/reconcile adds
 * after combine() (looking for removed Kustomizations failed), or all of it when none failed.
 */
function unexplained(r: Report, parts: readonly Report[]): string | undefined {
  if (r.ok && r.error === undefined) return undefined;
  const failed = failedFirst(parts);
  if (failed.length === 0) return r.error ?? 'failed (its report gives no error)';
  const known = combinedError(failed);
  const error = r.error ?? '';
  const rest = error.startsWith(known) ? error.slice(known.length).trim() : '';
  return rest === '' ? undefined : rest;
}

/** Multiset difference: the items of `all` left when each of `known` takes one of its kind. */
function leftOver<T>(all: readonly T[], known: readonly T[], key: (x: T) => string): T[] {
  const counts = new Map<string, number>();
  for (const k of known) counts.set(key(k), (counts.get(key(k)) ?? 0) + 1);
  return all.filter((x) => {
    const n = counts.get(key(x)) ?? 0;
    if (n > 0) counts.set(key(x), n - 1);
    return n === 0;
  });
}

/**
 * The objects a combined report lists that none of its Kustomizations (nor its removed ones) does:
 * no row of the merge would show them, so the file fails, naming them.
 */
function unlisted(r: Report, parts: readonly Report[], removals: readonly Removal[]): string | undefined {
  const change = (e: { subject: string; action: string }) => `${e.subject}\u0000${e.action}`;
  const prune = (p: PrunedObject) => `${p.subject}\u0000${p.action}\u0000${p.removedWith ?? ''}`;
  const deletions = leftOver(
    r.pruned ?? [],
    [...parts.flatMap((k) => k.pruned ?? []), ...removals.flatMap((x) => x.pruned)],
    prune,
  );
  const changes = leftOver(
    r.changeset,
    parts.flatMap((k) => k.changeset),
    change,
  );
  const all = [
    ...deletions.map((p) => `${p.subject} (${p.action === 'deleted' ? 'deleted' : `deletion ${p.action}`})`),
    ...changes.map((e) => `${e.subject} (${e.action})`),
  ];
  if (all.length === 0) return undefined;
  const shown = all.slice(0, 20).join(', ') + (all.length > 20 ? ` and ${all.length - 20} more` : '');
  return `its report lists ${all.length} object${all.length === 1 ? '' : 's'} that none of its Kustomizations does: ${shown}`;
}

/**
 * A drift job's drift from its lists: found when it says so or it has anything to create,
 * configure or delete; corrected only when it says it found and corrected it.
 */
function driftOf(r: Report, parts: readonly Report[], removals: readonly Removal[]): NonNullable<Report['drift']> {
  const changeset = parts.flatMap((k) => k.changeset);
  const pruned = [...parts.flatMap((k) => k.pruned ?? []), ...removals.flatMap((x) => x.pruned)];
  const said = r.drift;
  return {
    detected: said?.detected === true || hasChanges({ counts: countReport(changeset, pruned) }),
    corrected: said?.detected === true && said.corrected,
  };
}

/** The clusters in merge order: the single-cluster '' first, then as they first appear. */
function clusterOrder(parts: readonly Report[], removals: readonly Removal[]): string[] {
  const all = [...parts.map(clusterNameOf), ...removals.map((x) => clusterNameOf(x.r))];
  const names = [...new Set(all)];
  return names.includes('') ? ['', ...names.filter((c) => c !== '')] : names;
}

/** A note when the files reconciled different commits: a merged comment should speak of one. */
function revisionNotes(files: readonly NamedReportFile[]): string[] {
  const byRevision = new Map<string, string[]>();
  for (const f of files) {
    if (f.file.revision) byRevision.set(f.file.revision, [...(byRevision.get(f.file.revision) ?? []), f.name]);
  }
  if (byRevision.size <= 1) return [];
  const list = [...byRevision].map(([rev, names]) => `${rev.slice(0, 12)} (${names.join(', ')})`).join('; ');
  return [`The report files are of different commits: ${list}`];
}

/** Drift over the jobs: found when any job found it, corrected when every job that found it corrected it. */
function mergedDrift(shares: readonly Share[]): Report['drift'] {
  const drifts = shares.flatMap((s) => (s.drift ? [s.drift] : []));
  if (drifts.length === 0) return undefined;
  const found = drifts.filter((d) => d.detected);
  return { detected: found.length > 0, corrected: found.length > 0 && found.every((d) => d.corrected) };
}

/**
 * From the first job's start to the last one's end, where every file says when its job ended
 * (dependent jobs run one after the other); else the longest job's own time.
 */
function wallTime(files: readonly NamedReportFile[]): number {
  const ends = files.map((f) => (f.file.finishedAt === undefined ? NaN : Date.parse(f.file.finishedAt)));
  if (ends.some((e) => Number.isNaN(e))) return Math.max(...files.map((f) => f.file.report.durationMs));
  const starts = files.map((f, i) => ends[i]! - f.file.report.durationMs);
  return Math.max(...ends) - Math.min(...starts);
}
