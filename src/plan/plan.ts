/**
 * The fan-out plan (mode: plan, CLI `plan`): the Kustomizations of a repository as a GitHub Actions
 * matrix, one entry per Kustomization (per cluster × Kustomization in Flux's `clusters/<name>/`
 * layout), with their dependsOn levels, and which ones a change affects: those whose build reads a
 * changed file, plus their dependents. Pure: the edge (run.ts) reads the files, git and the builds'
 * reads.
 */
import { dependencyOrder } from '../flux/graph.js';
import type { KustomizationSpec } from '../flux/types.js';
import { kubeconfigSecretName } from '../flux/clusters.js';
import { entryId } from '../fanout/matrix.js';

/** One job of the matrix: what the workflow hands to the reconciling step. */
export interface PlanEntry {
  /**
   * Unique and safe in artifact and file names: `[cluster.]namespace.name-<hash>`, the hash of the
   * exact (cluster, namespace, name) (see entryId in matrix.ts).
   */
  id: string;
  /** The cluster's directory name under clusters/ (`''`: the repository has one cluster). */
  cluster: string;
  /** `namespace/name`, the value for the select input. */
  kustomization: string;
  namespace: string;
  name: string;
  /** The Kustomization file, relative to the root. */
  file: string;
  /** spec.path. */
  path: string;
  /** dependsOn level within its cluster: 0 depends on nothing, n on something of level n-1. */
  level: number;
  /** Its dependencies, `namespace/name`, in the same cluster. */
  dependsOn: string[];
  /** The secret holding the cluster's kubeconfig in the documented workflow (KUBECONFIG_<CLUSTER>). */
  secret: string;
  /**
   * Its dependencies that no entry of this matrix reconciles (an affected-only plan leaves them
   * out), comma-separated, for the input unchanged-dependencies: they are ready by their last run.
   */
  unchanged: string;
  /** Why it is in an affected-only matrix: the first changed file it reads, or the dependency it follows. */
  reason?: string;
}

/** What a change does to one Kustomization: undefined when nothing it reads changed. */
export type Affects = (spec: KustomizationSpec, cluster: string) => string | undefined;

export interface Plan {
  /** Every Kustomization, clusters in name order, each cluster's in dependsOn order. */
  all: PlanEntry[];
  /** The entries to run: all of them, or the affected ones when a change was given. */
  matrix: PlanEntry[];
  /** Each cluster's levels of ids (of `matrix`), level 0 first; clusters side by side per level. */
  levels: string[][];
  /** The ids a change affects (all ids without a change). */
  affected: string[];
  clusters: string[];
}

/** A cluster's entries in dependsOn order. Throws like dependencyOrder, naming the cluster. */
export function clusterEntries(cluster: string, specs: readonly KustomizationSpec[]): PlanEntry[] {
  let levels: KustomizationSpec[][];
  try {
    levels = dependencyOrder(specs);
  } catch (err) {
    throw cluster ? new Error(`cluster ${cluster}: ${(err as Error).message}`, { cause: err }) : err;
  }
  return levels.flatMap((level, n) =>
    level.map((spec) => ({
      id: entryId(cluster, spec.namespace, spec.name),
      cluster,
      kustomization: `${spec.namespace}/${spec.name}`,
      namespace: spec.namespace,
      name: spec.name,
      file: spec.origin.kind === 'file' ? spec.origin.file : '',
      path: spec.path,
      level: n,
      dependsOn: [...new Set(spec.dependsOn.map((d) => `${d.namespace}/${d.name}`))],
      secret: kubeconfigSecretName(cluster),
      unchanged: '',
    })),
  );
}

/**
 * The plan over every cluster's Kustomizations. With `affects` (a change between two commits), the
 * matrix holds the Kustomizations it affects and, in the same cluster, their dependents (Flux
 * reconciles a dependent again when its dependency is, and a dependent may read what it applied);
 * `always` (by cluster) adds entries that must run whatever changed (the job that handles removed
 * Kustomizations when a Kustomization file was deleted).
 */
export function makePlan(
  byCluster: ReadonlyMap<string, readonly KustomizationSpec[]>,
  affects?: Affects,
  always: ReadonlyMap<string, string> = new Map(),
): Plan {
  const clusters = [...byCluster.keys()].sort();
  const all: PlanEntry[] = [];
  const matrix: PlanEntry[] = [];
  for (const cluster of clusters) {
    const specs = byCluster.get(cluster)!;
    const entries = clusterEntries(cluster, specs);
    all.push(...entries);
    if (!affects) {
      matrix.push(...entries);
      continue;
    }
    const reasons = new Map<string, string>();
    for (const spec of specs) {
      const why = affects(spec, cluster);
      if (why !== undefined) reasons.set(`${spec.namespace}/${spec.name}`, why);
    }
    // Dependents follow, in execution order, each naming the dependency it follows.
    for (const e of entries) {
      const after = e.dependsOn.find((d) => reasons.has(d));
      if (!reasons.has(e.kustomization) && after !== undefined) reasons.set(e.kustomization, `depends on ${after}`);
    }
    const first = entries[0];
    const forced = always.get(cluster);
    if (first && forced !== undefined && !reasons.has(first.kustomization)) reasons.set(first.kustomization, forced);
    matrix.push(
      ...entries
        .filter((e) => reasons.has(e.kustomization))
        .map((e) => ({
          ...e,
          reason: reasons.get(e.kustomization)!,
          unchanged: e.dependsOn.filter((d) => !reasons.has(d)).join(','),
        })),
    );
  }
  checkUniqueIds(all);
  const depth = Math.max(0, ...matrix.map((e) => e.level + 1));
  const levels = Array.from({ length: depth }, (_, n) => matrix.filter((e) => e.level === n).map((e) => e.id)).filter(
    (l) => l.length > 0,
  );
  return { all, matrix, levels, affected: matrix.map((e) => e.id), clusters };
}

/**
 * Throws when two entries have one id (ignoring case: artifact names, and the files of a
 * case-insensitive file system, do): their jobs would write one report file and one artifact.
 */
export function checkUniqueIds(entries: readonly PlanEntry[]): void {
  const seen = new Map<string, PlanEntry>();
  const who = (e: PlanEntry) => `${e.cluster ? `cluster ${e.cluster}, ` : ''}${e.kustomization} (${e.file || e.path})`;
  for (const e of entries) {
    const before = seen.get(e.id.toLowerCase());
    if (before) {
      throw new Error(
        `two matrix entries have the id ${e.id}: ${who(before)} and ${who(e)}; their jobs would write one report file and artifact`,
      );
    }
    seen.set(e.id.toLowerCase(), e);
  }
}
