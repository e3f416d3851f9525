// The model of bench/fanout.ts: the plan's matrix entries as jobs list-scheduled onto R runners, each
// holding its runner through a start-up overhead and its polls for dependencies in other jobs, for
// the wall time and the runner time (billed per started minute) against the number of runners.
import type { PlanEntry } from './report.ts';

/** The CLI's poll interval for dependencies in other jobs (src/reconcile/await-deps.ts POLL_MS). */
const POLL_MS = 2_000;

interface SimJob {
  deps: number[];
  durationMs: number;
}

/**
 * List scheduling: jobs in order, each to the runner that frees first; a job holds its runner from
 * its start, through the start-up overhead and any wait for its dependencies (polled every POLL_MS
 * from the end of the overhead), to its end. Returns the wall time and the runner time used.
 */
export function simulate(
  jobs: readonly SimJob[],
  runners: number,
  overheadMs: number,
): { wallMs: number; runnerMs: number; billedMin: number } {
  const free = new Array<number>(Math.max(1, Math.min(runners, jobs.length))).fill(0);
  const ends: number[] = [];
  let runnerMs = 0;
  let billedMin = 0;
  for (const [i, job] of jobs.entries()) {
    let r = 0;
    for (let k = 1; k < free.length; k++) if (free[k]! < free[r]!) r = k;
    const start = free[r]!;
    const up = start + overheadMs;
    let depsEnd = 0;
    for (const d of job.deps) {
      if (d >= i) throw new Error(`job ${String(i)} depends on a later job ${String(d)}: not in dependsOn order`);
      depsEnd = Math.max(depsEnd, ends[d]!);
    }
    const ready = depsEnd <= up ? up : up + Math.ceil((depsEnd - up) / POLL_MS) * POLL_MS;
    const end = ready + job.durationMs;
    ends.push(end);
    free[r] = end;
    runnerMs += end - start;
    billedMin += Math.ceil((end - start) / 60_000);
  }
  return { wallMs: Math.max(0, ...ends), runnerMs, billedMin };
}

/** The plan's entries as simulation jobs (dependsOn resolved within each entry's cluster). */
export function simJobs(entries: readonly PlanEntry[], durationMs: (e: PlanEntry, i: number) => number): SimJob[] {
  const index = new Map(entries.map((e, i) => [`${e.cluster}|${e.kustomization}`, i]));
  return entries.map((e, i) => ({
    deps: e.dependsOn
      .split(',')
      .map((d) => d.trim())
      .filter((d) => d !== '')
      .map((d) => {
        const j = index.get(`${e.cluster}|${d}`);
        if (j === undefined) throw new Error(`${e.id}: dependency ${d} is not in the plan`);
        return j;
      }),
    durationMs: durationMs(e, i),
  }));
}

/** The same entries, level by level across clusters (as the plan's `levels` output lists them). */
export function levelMajor(entries: readonly PlanEntry[]): PlanEntry[] {
  return [...entries].sort((a, b) => a.level - b.level);
}
