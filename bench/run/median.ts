// bench/run.ts --runs R: each scenario is run R times (rounds, the tools interleaved within each), and
// the tables show one row per tool and scenario whose figures are the medians of its rounds.
import type { Row } from './model.ts';

/** The median of the defined values (the mean of the middle two for an even count), or undefined. */
export function median(values: readonly (number | undefined)[]): number | undefined {
  const xs = values.filter((v): v is number => v !== undefined && Number.isFinite(v)).sort((a, b) => a - b);
  if (xs.length === 0) return undefined;
  const mid = Math.floor(xs.length / 2);
  return xs.length % 2 === 1 ? xs[mid] : (xs[mid - 1]! + xs[mid]!) / 2;
}

/**
 * One row per tool and scenario, in the order they first appear: each figure the median of the
 * rows', `ok` only when every round succeeded, the rest (command, outcome note, requests by method
 * and target) the row whose wall time is nearest the median, and `runs` how many rows it stands for.
 */
export function medianRows(rows: readonly Row[]): Row[] {
  const groups = new Map<string, Row[]>();
  for (const r of rows) {
    const key = `${r.tool}\u0000${r.scenario}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  return [...groups.values()].map((group) => {
    if (group.length === 1) return { ...group[0]!, runs: 1 };
    const wall = median(group.map((r) => r.wallMs))!;
    const typical = group.reduce((a, b) => (Math.abs(b.wallMs - wall) < Math.abs(a.wallMs - wall) ? b : a));
    const of = (f: (r: Row) => number | undefined) => median(group.map(f));
    return {
      ...typical,
      ok: group.every((r) => r.ok),
      exitCode: group.find((r) => !r.ok)?.exitCode ?? typical.exitCode,
      wallMs: wall,
      firstRequestMs: of((r) => r.firstRequestMs),
      requests: of((r) => r.requests)!,
      peakRssMiB: of((r) => r.peakRssMiB),
      toolCpuMs: of((r) => r.toolCpuMs),
      apiserverCpuMs: of((r) => r.apiserverCpuMs),
      etcdCpuMs: of((r) => r.etcdCpuMs),
      kustomizeBuilds: of((r) => r.kustomizeBuilds),
      runs: group.length,
    };
  });
}
