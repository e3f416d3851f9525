// The Markdown bench/fanout.ts prints: number formats (seconds, m:ss), quantiles, and the tables of
// the scenarios (wall time, requests, CPU, critical path, same results), of the fan-out's jobs and of
// the requests by method and target.
import type { ScenarioResult } from './scenarios.ts';

export const s1 = (ms: number | undefined) => (ms === undefined ? 'n/a' : (ms / 1000).toFixed(1));
export const s2 = (ms: number | undefined) => (ms === undefined ? 'n/a' : (ms / 1000).toFixed(2));
export const int = (n: number | undefined) => (n === undefined ? 'n/a' : Math.round(n).toLocaleString('en-US'));
export const mmss = (ms: number) => {
  const s = Math.round(ms / 1000);
  return `${String(Math.floor(s / 60))}:${String(s % 60).padStart(2, '0')}`;
};

export function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return 0;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

export function table(head: string[], align: ('l' | 'r')[], rows: string[][]): string {
  return [
    `| ${head.join(' | ')} |`,
    `| ${align.map((a) => (a === 'r' ? '---:' : '---')).join(' | ')} |`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}

export const label = (s: ScenarioResult) => (s.runners === 'one job' ? 'one job' : `${String(s.runners)} processes`);
const sameCell = (s: ScenarioResult) =>
  s.same === undefined ? '(reference)' : s.same.verdicts && s.same.objects && s.same.inventories ? 'yes' : '**no**';

export function scenarioTable(rows: ScenarioResult[], n: number): string {
  return table(
    [
      'run',
      'wall s',
      'requests',
      'req / Kustomization',
      'apiserver + etcd CPU s',
      'CLI CPU s',
      'job work median / p90 s',
      'jobs that checked / slept',
      'critical path s (chain / longest)',
      'wall − longest s',
      'load avg before → after',
      'same results',
    ],
    ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'l'],
    rows.map((s) => {
      const work = s.jobs.map((j) => j.workMs);
      return [
        `${label(s)}${s.ok ? '' : ' ✗'}`,
        s1(s.wallMs),
        int(s.requests),
        (s.requests / n).toFixed(1),
        s.apiserverCpuMs === undefined || s.etcdCpuMs === undefined ? 'n/a' : s1(s.apiserverCpuMs + s.etcdCpuMs),
        s1(s.cliCpuMs),
        s.runners === 'one job'
          ? `${s2(quantile(work, 0.5))} / ${s2(quantile(work, 0.9))} (in-process)`
          : `${s2(quantile(work, 0.5))} / ${s2(quantile(work, 0.9))}`,
        s.runners === 'one job' ? '–' : `${String(s.jobsThatChecked)} / ${String(s.jobsThatWaited)}`,
        `${s1(s.chainMs)} / ${s1(s.criticalPathMs)}`,
        s1(s.wallMs - s.criticalPathMs),
        `${s.loadBefore[0]!.toFixed(1)} → ${s.loadAfter[0]!.toFixed(1)}`,
        sameCell(s),
      ];
    }),
  );
}

export function jobTable(rows: ScenarioResult[]): string {
  const fan = rows.filter((s) => s.runners !== 'one job');
  return table(
    [
      'run',
      'job wall median / p90 / max s',
      'wait median / max s',
      'work median / p90 / max s',
      'CPU per job median s',
      'peak RSS median MiB',
      'merge (report) s',
      'merged report durationMs s',
    ],
    ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    fan.map((s) => {
      const w = s.jobs.map((j) => j.wallMs);
      const wait = s.jobs.map((j) => j.waitMs);
      const work = s.jobs.map((j) => j.workMs);
      const cpu = s.jobs.flatMap((j) => (j.cpuMs === undefined ? [] : [j.cpuMs]));
      const rss = s.jobs.flatMap((j) => (j.peakRssKiB === undefined ? [] : [j.peakRssKiB / 1024]));
      return [
        label(s),
        `${s2(quantile(w, 0.5))} / ${s2(quantile(w, 0.9))} / ${s2(Math.max(...w))}`,
        `${s2(quantile(wait, 0.5))} / ${s2(Math.max(...wait))}`,
        `${s2(quantile(work, 0.5))} / ${s2(quantile(work, 0.9))} / ${s2(Math.max(...work))}`,
        cpu.length ? s2(quantile(cpu, 0.5)) : 'n/a',
        rss.length ? quantile(rss, 0.5).toFixed(0) : 'n/a',
        s2(s.reportMs),
        s2(s.reportDurationMs),
      ];
    }),
  );
}

export function requestTable(rows: ScenarioResult[]): string {
  const keys = [...new Set(rows.flatMap((s) => Object.keys(s.requestsByTarget)))].sort();
  return table(
    ['request', ...rows.map((s) => `${label(s)}, ${s.pass}`)],
    ['l', ...rows.map(() => 'r' as const)],
    keys.map((k) => [k, ...rows.map((s) => int(s.requestsByTarget[k] ?? 0))]),
  );
}
