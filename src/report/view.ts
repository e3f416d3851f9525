/**
 * The view of a report that the PR comment and the check run share, computed once: the words for
 * the mode (planned or done), the objects grouped per Kustomization, the removed Kustomizations with
 * their prune results, and the summary table's rows. A merged report whose Kustomizations carry a
 * cluster (clusters.ts) gets a section per cluster: a Cluster column that names each cluster on its
 * first row, and groups that name their cluster.
 */
import type { HealthResult } from '../kstatus/wait.js';
import type { ChangeSetEntry } from '../ssa/changeset.js';
import { byCluster, clusterLabel, clusterNames, clusterNameOf, ofRemoved, type InCluster } from './clusters.js';
import type { PrunedObject, RemovedKustomization, Report } from './model.js';
import { clusterCell, sourceCell } from './render.js';
import { mdCode, mdText } from '../util/markdown.js';
import { cutChars, FIRST_LINE_MAX, fmt } from './text.js';
import { namedInError, resultCell, wordsFor, type Words } from './words.js';
import { inReadingOrder, standingCounts, standingOf, type Standing } from './standing.js';

export type { Words } from './words.js';

/** What one Kustomization did (or would do) to its objects. */
export interface Group {
  /** With several Kustomizations: its `namespace/name`. */
  title?: string;
  /** In a report with clusters: its cluster ('' for none). */
  cluster?: string;
  /** The Kustomization's own report (a single Kustomization's: the report). */
  k: Report;
  /** Where it comes in a report of several (standing.ts); a single Kustomization's is its own. */
  standing: Standing;
  created: ChangeSetEntry[];
  configured: ChangeSetEntry[];
  skipped: ChangeSetEntry[];
  pruned: PrunedObject[];
  /** Objects that left this build for another Kustomization's: not deleted. */
  moved: PrunedObject[];
  unhealthy: HealthResult[];
}

/** A Kustomization removed from the repository, with the prune results of its objects. */
export interface Removed {
  r: InCluster<RemovedKustomization>;
  pruned: PrunedObject[];
}

export interface View {
  report: Report;
  words: Words;
  multi: boolean;
  /** The clusters, in order, of a report with clusters; empty for any other. */
  clusters: string[];
  /** Each Kustomization's objects; with several, in reading order (standing.ts: what changes first). */
  groups: Group[];
  removed: Removed[];
  /**
   * The table's rows: one per Kustomization, then one per removed Kustomization; with several, in
   * reading order and without the unchanged ones, which `unchanged` names.
   */
  rows: string[];
  /** With several Kustomizations: the unchanged ones' names (with their cluster), folded out of the rows. */
  unchanged: string[];
  /** With several Kustomizations: how many have each standing. */
  standings: Record<Standing, number>;
  deletes: number;
  /** Configured objects with a field diff. */
  diffs: number;
}

export function view(report: Report): View {
  const words = wordsFor(report);
  const multi = (report.kustomizations?.length ?? 0) > 0;
  const clusters = multi ? clusterNames(report) : [];
  const removed = byCluster(report.removed ?? [], clusters).map((r) => ({
    r,
    pruned: (report.pruned ?? []).filter((p) => ofRemoved(p, r)),
  }));
  const fromRemoved = new Set(removed.flatMap((x) => x.pruned));
  // Several Kustomizations in reading order: what changes, what fails with the change, what failed before, the rest.
  const all = multi ? byCluster(report.kustomizations!, clusters) : [report];
  const reports = multi ? inReadingOrder(all, standingOf) : all;
  const groups: Group[] = reports.map((k) => ({
    ...(multi ? { title: k.kustomization || k.path } : {}),
    ...(clusters.length > 0 ? { cluster: clusterNameOf(k) } : {}),
    k,
    standing: standingOf(k),
    created: k.changeset.filter((e) => e.action === 'created'),
    configured: k.changeset.filter((e) => e.action === 'configured'),
    skipped: k.changeset.filter((e) => e.action === 'skipped'),
    pruned: (multi ? (k.pruned ?? []) : (k.pruned ?? []).filter((p) => !fromRemoved.has(p))).filter(
      (p) => p.action !== 'moved',
    ),
    moved: (k.pruned ?? []).filter((p) => p.action === 'moved'),
    // An object the error already names (a health check failure lists them) is not listed again.
    unhealthy: (k.health ?? []).filter((h) => h.status !== 'Current' && !namedInError(report.error, h.subject)),
  }));
  const listed = groups.filter((g) => !multi || g.standing !== 'unchanged');
  const rows = listed.map((g) => row(g.k, g, words, multi));
  for (const x of removed) rows.push(removedRow(x, words));
  const unchanged = groups
    .filter((g) => multi && g.standing === 'unchanged')
    .map((g) => clusterLabel(g.cluster ?? '', g.title ?? ''));
  return {
    report,
    words,
    multi,
    clusters,
    groups,
    removed,
    rows:
      clusters.length > 0
        ? clusterRows(
            listed.map((g) => g.k),
            removed,
            rows,
            clusters,
          )
        : rows,
    unchanged,
    standings: standingCounts(multi ? groups.map((g) => g.standing) : []),
    deletes: (report.pruned ?? []).filter((p) => p.action === 'deleted').length,
    diffs: groups.reduce((n, g) => n + g.configured.filter((e) => e.diff?.length).length, 0),
  };
}

/**
 * The rows of a report with clusters, a section per cluster: its Kustomizations, then its removed
 * ones, each row with a Cluster cell that names the cluster on its first row only.
 */
function clusterRows(
  reports: readonly Report[],
  removed: readonly Removed[],
  rows: readonly string[],
  clusters: readonly string[],
): string[] {
  const tagged = [...reports.map(clusterNameOf), ...removed.map((x) => clusterNameOf(x.r))].map((c, i) => ({
    c,
    row: rows[i]!,
  }));
  return clusters.flatMap((c) =>
    tagged.filter((t) => t.c === c).map((t, i) => `${i === 0 ? `| ${clusterCell(c)} ` : '| '}${t.row}`),
  );
}

function row(k: Report, g: Group, words: Words, multi: boolean): string {
  const deletes = g.pruned.filter((p) => p.action === 'deleted').length;
  // With several Kustomizations, each error's telling line: its whole text is in its section.
  const result = resultCell(k, deletes, words, multi);
  const name = mdCode(cutChars(k.kustomization || k.path || '-', FIRST_LINE_MAX).text, 'cell');
  const c = k.counts;
  return `| ${name}${sourceCell(k)} | ${result} | ${fmt(c.created)} | ${fmt(c.configured)} | ${fmt(deletes)} | ${fmt(c.unchanged)} |`;
}

function removedRow({ r, pruned }: Removed, words: Words): string {
  const deletes = pruned.filter((p) => p.action === 'deleted').length;
  const result = {
    orphaned: '⚠️ removed from Git; objects kept (orphaned)',
    released: 'removed from Git; objects released',
    deleted: `🗑️ removed from Git; ${words.deleted} its objects`,
    failed: '❌ removed from Git; deleting failed',
    refused: '⛔ removed from Git; deleting refused',
    renamed: '↪️ renamed; objects handed over',
  }[r.action] as string | undefined;
  const name = mdCode(cutChars(r.kustomization, FIRST_LINE_MAX).text, 'cell');
  return `| ${name} (removed) | ${result ?? mdText(r.action)} | – | – | ${fmt(deletes)} | – |`;
}
