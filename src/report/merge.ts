/**
 * The merge of a fan-out's reports (mode: report, CLI `report`). Each matrix job wrote its report as
 * a file (file.ts); here they become one report, as if one run had reconciled every Kustomization,
 * each carrying its cluster, so that one PR comment and one check run tell the whole change. Pure:
 * the edge (merge-files.ts) reads the files.
 */
import { byCluster, clusterLabel, clusterNameOf, type InCluster } from './clusters.js';
import { combinedError, failedFirst } from './combine.js';
import type { ReportFile } from './file.js';
import { countReport, type Failure, type PrunedObject, type RemovedKustomization, type Report } from './model.js';

export interface NamedReportFile {
  /** Where the file was read from (relative to the workspace): named in errors and notes. */
  name: string;
  file: ReportFile;
}

/** A removed Kustomization with the prune results of its objects, which go wherever it goes. */
interface Removal {
  r: InCluster<RemovedKustomization>;
  pruned: InCluster<PrunedObject>[];
}

/** One file's share of the merge: its Kustomizations, and what its report holds besides them. */
interface Share {
  name: string;
  cluster: string;
  parts: Report[];
  removals: Removal[];
  /** Notes of the job's report that belong to none of its Kustomizations. */
  notes: string[];
  /** The job's error that none of its Kustomizations explains (looking for removed ones failed, say). */
  error?: string;
  failure?: Failure;
}

/**
 * One report of the files' reports: every Kustomization once (a re-run job's later file wins, with
 * a note), ordered by cluster (single-cluster first, then as clusters first appear in the files
 * sorted by name) and then as the files list them; totals recounted; failed when any job failed,
 * its error naming the failed Kustomizations, root causes first. Throws when there are no files or
 * their modes differ: one PR comment cannot say both what was applied and what would be.
 */
export function mergeReports(files: readonly NamedReportFile[]): Report {
  if (files.length === 0) throw new Error('no report files to merge');
  const sorted = [...files].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const mode = sameMode(sorted);
  const notes: string[] = [];
  const shares = sorted.map(shareOf);
  const { parts, removals, superseded } = dedupe(shares, notes);
  const clusters = clusterOrder(parts, removals);
  // Stable sorts: by dependsOn level where the jobs said it, then by cluster.
  const ordered = byCluster(
    [...parts].sort((a, b) => (a.level ?? 0) - (b.level ?? 0)),
    clusters,
  );
  const removed = byCluster(
    removals.map((x) => ({ ...x, cluster: clusterNameOf(x.r) })),
    clusters,
  );
  const live = shares.filter((s) => !superseded.has(s));
  notes.push(...revisionNotes(sorted));
  notes.push(...ordered.flatMap((k) => k.notes.map((n) => `[${nameOf(k)}] ${n}`)));
  notes.push(...live.flatMap((s) => s.notes.map((n) => (s.cluster ? `[${s.cluster}] ${n}` : n))));
  const changeset = ordered.flatMap((k) => k.changeset);
  const pruned = [...ordered.flatMap((k) => k.pruned ?? []), ...removed.flatMap((x) => x.pruned)];
  const health = ordered.flatMap((k) => k.health ?? []);
  const problems = ordered.flatMap((k) => k.problems ?? []);
  const failed = failedFirst(ordered);
  const jobErrors = live.filter((s) => s.error !== undefined);
  const errors = [
    ...(failed.length > 0 ? [combinedError(failed, nameOf)] : []),
    ...jobErrors.map((s) => `${jobOf(s)}: ${s.error!}`),
  ];
  const error = errors.length > 0 ? errors.join('\n') : undefined;
  const first = failed[0]?.failure ?? jobErrors[0]?.failure;
  const drift = mergedDrift(sorted);
  return {
    mode,
    kustomization: ordered.map(nameOf).join(', '),
    path: ordered.map((k) => k.path).join(', '),
    server: [...new Set(sorted.map((f) => f.file.report.server).filter((s) => s !== ''))].join(', '),
    ok: error === undefined,
    changeset,
    counts: countReport(changeset, pruned),
    // From the first job's start to the last one's end: dependent jobs run one after the other.
    durationMs: wallTime(sorted),
    notes,
    ...(health.length > 0 ? { health } : {}),
    ...(pruned.length > 0 ? { pruned } : {}),
    ...(removed.length > 0 ? { removed: removed.map((x) => x.r) } : {}),
    ...(problems.length > 0 ? { problems } : {}),
    ...(drift ? { drift } : {}),
    ...(error !== undefined ? { error } : {}),
    ...(error !== undefined && first ? { failure: { ...first, message: error } } : {}),
    kustomizations: ordered,
  };
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

/** Splits a file's report into its Kustomizations' reports and the rest. */
function shareOf({ name, file }: NamedReportFile): Share {
  const r = file.report;
  const cluster = r.cluster ?? '';
  const removedNames = new Set((r.removed ?? []).map((x) => x.kustomization));
  const ofRemoved = (p: PrunedObject) => p.removedWith !== undefined && removedNames.has(p.removedWith);
  const removals = (r.removed ?? []).map((x) => ({
    r: withCluster(x, cluster),
    pruned: (r.pruned ?? []).filter((p) => p.removedWith === x.kustomization).map((p) => withCluster(p, cluster)),
  }));
  if (!r.kustomizations?.length) {
    // A single Kustomization's report is its own part, less what belongs to removed Kustomizations.
    const pruned = (r.pruned ?? []).filter((p) => !ofRemoved(p));
    const { kustomizations: _k, removed: _r, pruned: _p, drift: _d, ...rest } = r;
    const part: Report = {
      ...withCluster(rest, cluster),
      counts: countReport(r.changeset, pruned),
      ...(pruned.length > 0 ? { pruned } : {}),
    };
    return { name, cluster, parts: [part], removals, notes: [] };
  }
  const parts = r.kustomizations.map((k) => {
    const { kustomizations: _k, ...rest } = k;
    return withCluster(rest, k.cluster ?? cluster);
  });
  // combine() gave the job's report its Kustomizations' notes, each prefixed with its name.
  const theirs = new Set(r.kustomizations.flatMap((k) => k.notes.map((n) => `[${k.kustomization}] ${n}`)));
  const error = unexplained(r, r.kustomizations);
  return {
    name,
    cluster,
    parts,
    removals,
    notes: r.notes.filter((n) => !theirs.has(n)),
    ...(error !== undefined ? { error, ...(r.failure ? { failure: r.failure } : {}) } : {}),
  };
}

/**
 * The part of a combined report's error its Kustomizations do not explain: what src/reconcile adds
 * after combine() (looking for removed Kustomizations failed), or all of it when none failed.
 */
function unexplained(r: Report, parts: readonly Report[]): string | undefined {
  if (r.ok) return undefined;
  const failed = failedFirst(parts);
  if (failed.length === 0) return r.error ?? 'failed';
  const known = combinedError(failed);
  const error = r.error ?? '';
  const rest = error.startsWith(known) ? error.slice(known.length).trim() : '';
  return rest === '' ? undefined : rest;
}

/**
 * Every Kustomization and removed Kustomization once: a re-run matrix job uploads its report again,
 * and the later file by name replaces the earlier one in its place. A file all of whose reports were
 * replaced is superseded: its own notes and error are dropped too.
 */
function dedupe(
  shares: readonly Share[],
  notes: string[],
): { parts: Report[]; removals: Removal[]; superseded: Set<Share> } {
  const parts: Report[] = [];
  const removals: Removal[] = [];
  const seen = new Map<string, { index: number; share: Share }>();
  const replaced = new Map<Share, number>();
  /** Adds `item` to `list`, or puts it in the place of the one with the same key (named by `label`). */
  const place = <T>(list: T[], key: string | undefined, label: string, item: T, share: Share): void => {
    const before = key === undefined ? undefined : seen.get(key);
    if (key !== undefined) seen.set(key, { index: before?.index ?? list.length, share });
    if (before === undefined) {
      list.push(item);
      return;
    }
    list[before.index] = item;
    replaced.set(before.share, (replaced.get(before.share) ?? 0) + 1);
    notes.push(`${label} is in ${before.share.name} and ${share.name} (a re-run job?): ${share.name} is shown`);
  };
  for (const s of shares) {
    for (const k of s.parts) {
      const key = k.kustomization ? `k\u0000${clusterNameOf(k)}\u0000${k.kustomization}` : undefined;
      place(parts, key, `Kustomization ${nameOf(k)}`, k, s);
    }
    for (const x of s.removals) {
      const key = `r\u0000${clusterNameOf(x.r)}\u0000${x.r.kustomization}`;
      const label = `Removed Kustomization ${clusterLabel(clusterNameOf(x.r), x.r.kustomization)}`;
      place(removals, key, label, x, s);
    }
  }
  const size = (s: Share) => s.parts.length + s.removals.length;
  const superseded = new Set(shares.filter((s) => size(s) > 0 && replaced.get(s) === size(s)));
  return { parts, removals, superseded };
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
function mergedDrift(files: readonly NamedReportFile[]): Report['drift'] {
  const drifts = files.flatMap((f) => (f.file.report.drift ? [f.file.report.drift] : []));
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
