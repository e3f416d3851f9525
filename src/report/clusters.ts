/**
 * Clusters in a merged report (mode: report). A repository in Flux's `clusters/<name>/` layout fans
 * out over one job per cluster and Kustomization; the merged report carries each Kustomization's
 * cluster, and the renderings show a section per cluster. A report without clusters renders as it
 * always did: every function here is a no-op for it. Pure.
 */
import { reportOf, type PrunedObject, type RemovedKustomization, type Report } from './model.js';

/**
 * A removed Kustomization, or a prune result, with the cluster of the job that reported it: the
 * same removed Kustomization name can turn up in two clusters, and its objects must stay with it.
 */
export type InCluster<T> = T & { cluster?: string };

/** The cluster something of a merged report belongs to; '' for none. */
export function clusterNameOf(x: object): string {
  const c = (x as { cluster?: unknown }).cluster;
  return typeof c === 'string' ? c : '';
}

/** How text (errors, notes, the log) names a Kustomization of a merged report: `production · flux-system/apps`. */
export function clusterLabel(cluster: string, name: string): string {
  return cluster === '' ? name : `${cluster} · ${name}`;
}

/**
 * The clusters of a report with several Kustomizations, in the order they first appear (its
 * Kustomizations', then removed ones'); empty when none names a cluster, which is how a report
 * without clusters keeps its rendering.
 */
export function clusterNames(report: Pick<Report, 'kustomizations' | 'removed'>): string[] {
  const all = [...(report.kustomizations ?? []), ...(report.removed ?? [])].map(clusterNameOf);
  return all.some((c) => c !== '') ? [...new Set(all)] : [];
}

/** ` in 2 clusters`, ` in cluster production`, or '' without clusters: appended to `4 Kustomizations`. */
export function inClusters(report: Pick<Report, 'kustomizations' | 'removed'>): string {
  const names = clusterNames(report);
  if (names.length === 0) return '';
  return names.length === 1 ? ` in cluster ${names[0]!}` : ` in ${names.length} clusters`;
}

/** `items` in the order of their clusters in `names` (stable within a cluster). */
export function byCluster<T extends object>(items: readonly T[], names: readonly string[]): T[] {
  const rank = (x: T) => names.indexOf(clusterNameOf(x));
  return [...items].sort((a, b) => rank(a) - rank(b));
}

/** Whether a prune result belongs to a removed Kustomization (src/reconcile/removed.ts sets removedWith). */
export function ofRemoved(p: InCluster<PrunedObject>, r: InCluster<RemovedKustomization>): boolean {
  return p.removedWith === r.kustomization && clusterNameOf(p) === clusterNameOf(r);
}

/**
 * One cluster's share of a merged report, as a report of its own: its Kustomizations, objects,
 * health, removed Kustomizations and their prune results, totals recounted. The job summary's
 * object tables are rendered per cluster from it.
 */
export function clusterShare(report: Report, cluster: string): Report {
  const parts = (report.kustomizations ?? []).filter((k) => clusterNameOf(k) === cluster);
  const removed = (report.removed ?? []).filter((r) => clusterNameOf(r) === cluster);
  const changeset = parts.flatMap((k) => k.changeset);
  const pruned = [
    ...parts.flatMap((k) => k.pruned ?? []),
    ...(report.pruned ?? []).filter((p) => removed.some((r) => ofRemoved(p, r))),
  ];
  const health = parts.flatMap((k) => k.health ?? []);
  const { pruned: _pruned, removed: _removed, health: _health, ...rest } = report;
  return reportOf({
    ...rest,
    changeset,
    kustomizations: parts,
    ...(pruned.length > 0 ? { pruned } : {}),
    ...(removed.length > 0 ? { removed } : {}),
    ...(health.length > 0 ? { health } : {}),
  });
}
