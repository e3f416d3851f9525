// The runs bench/fanout.ts compares: one job (every Kustomization in one process) and the fan-out (the
// plan, a pool of N processes each reconciling one matrix entry with --select, then the merge of
// their reports), each measured through the counting proxy with its critical path, and compared
// with the one job of the same pass.
import { mkdir, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { cpuMsOf, type Cluster, type CountingProxy } from '../common.ts';
import { CLI, KUSTOMIZE, NODE } from '../paths.ts';
import { lastLine, run } from './proc.ts';
import { git, GLOB, type Graph } from './repo.ts';
import { differences, verdicts, type ClusterState, type Plan, type Report } from './report.ts';

export interface JobRun {
  id: string;
  kustomization: string;
  level: number;
  code: number;
  /** ms from the scenario's start. */
  startMs: number;
  endMs: number;
  wallMs: number;
  /** From the "waiting for" line to the last "is ready" line (0 without dependencies in other jobs). */
  waitMs: number;
  /** wallMs - waitMs: node start-up, reading the files, building, applying, recording. */
  workMs: number;
  cpuMs: number | undefined;
  peakRssKiB: number | undefined;
  /** It read a dependency's inventory (another job's); it slept at least one poll for one. */
  checked?: boolean;
  slept?: boolean;
  lastLine?: string;
}

export interface ScenarioResult {
  name: string;
  runners: number | 'one job';
  pass: 'first apply' | 'no-op re-run';
  namespace: string;
  commit: string;
  wallMs: number;
  ok: boolean;
  failedJobs: number;
  requests: number;
  requestsByKind: Record<string, number>;
  requestsByTarget: Record<string, number>;
  apiserverCpuMs: number | undefined;
  etcdCpuMs: number | undefined;
  cliCpuMs: number | undefined;
  /** The fan-out's merge (`report --reports`), or the one job's own report: wall ms and exit code. */
  reportMs?: number;
  reportCode?: number;
  /** The report's durationMs (merged: the longest job's). */
  reportDurationMs?: number;
  /** Per job (fan-out) or per Kustomization from the report's durationMs (one job). */
  jobs: JobRun[];
  /** Sum of work ms along the first-column chain, and the longest weighted dependsOn chain. */
  chainMs: number;
  criticalPathMs: number;
  criticalPath: string[];
  /** Jobs with a dependency in another job (they read its inventory before they start). */
  jobsThatChecked: number;
  /** Jobs that found a dependency not ready at the first read and slept ("still waiting"). */
  jobsThatWaited: number;
  loadBefore: number[];
  loadAfter: number[];
  /** Compared with the one job of the same pass. */
  same?: { verdicts: boolean; objects: boolean; inventories: boolean; differences: string[] };
  report?: Report;
  state?: ClusterState;
}

export interface Ctx {
  proxy: CountingProxy;
  cluster: Cluster;
  kubeconfig: string;
  work: string;
  graph: Graph;
  objects: number;
}

const countsOf = (m: Map<string, number>) => Object.fromEntries([...m].sort(([a], [b]) => a.localeCompare(b)));

/** The longest dependsOn chain weighted by `ms` (per Kustomization name), and its names. */
function longestChain(graph: Graph, ms: Map<string, number>): { ms: number; path: string[] } {
  const best = new Map<string, { ms: number; path: string[] }>();
  for (const name of graph.names) {
    let prev: { ms: number; path: string[] } = { ms: 0, path: [] };
    for (const d of graph.deps.get(name)!) {
      const b = best.get(d);
      if (b && b.ms > prev.ms) prev = b;
    }
    best.set(name, { ms: prev.ms + (ms.get(name) ?? 0), path: [...prev.path, name] });
  }
  return [...best.values()].reduce((a, b) => (b.ms > a.ms ? b : a), { ms: 0, path: [] as string[] });
}

async function measure<T>(
  ctx: Ctx,
  body: () => Promise<T>,
): Promise<{
  value: T;
  wallMs: number;
  requests: number;
  byKind: Record<string, number>;
  byTarget: Record<string, number>;
  apiserverCpuMs: number | undefined;
  etcdCpuMs: number | undefined;
  loadBefore: number[];
  loadAfter: number[];
}> {
  const loadBefore = os.loadavg();
  const [a0, e0] = await Promise.all([cpuMsOf(ctx.cluster.pids.apiserver), cpuMsOf(ctx.cluster.pids.etcd)]);
  ctx.proxy.reset();
  const t0 = performance.now();
  const value = await body();
  const wallMs = performance.now() - t0;
  const requests = ctx.proxy.total();
  const byKind = countsOf(ctx.proxy.counts);
  const byTarget = countsOf(ctx.proxy.targets);
  const [a1, e1] = await Promise.all([cpuMsOf(ctx.cluster.pids.apiserver), cpuMsOf(ctx.cluster.pids.etcd)]);
  const diff = (x: number | undefined, y: number | undefined) =>
    x === undefined || y === undefined ? undefined : y - x;
  return {
    value,
    wallMs,
    requests,
    byKind,
    byTarget,
    apiserverCpuMs: diff(a0, a1),
    etcdCpuMs: diff(e0, e1),
    loadBefore,
    loadAfter: os.loadavg(),
  };
}

function cliArgs(ctx: Ctx, extra: string[]): string[] {
  return [
    CLI,
    'apply',
    '--kustomizations',
    GLOB,
    '--kubeconfig',
    ctx.kubeconfig,
    '--kustomize-path',
    KUSTOMIZE,
    ...extra,
  ];
}

/** One job: every Kustomization in one process (four at once, in dependsOn order). */
export async function oneJob(
  ctx: Ctx,
  name: string,
  repo: string,
  namespace: string,
  pass: ScenarioResult['pass'],
): Promise<ScenarioResult> {
  process.stderr.write(`${name}: one job, ${pass} ...\n`);
  const commit = git(repo, 'rev-parse', 'HEAD');
  const m = await measure(ctx, () =>
    run(NODE, cliArgs(ctx, ['--output', 'json']), repo, join(ctx.work, `${name}.rss`)),
  );
  const p = m.value;
  let report: Report | undefined;
  try {
    report = JSON.parse(p.stdout) as Report;
  } catch {
    report = undefined;
  }
  const durations = new Map((report?.kustomizations ?? []).map((r) => [r.kustomization.split('/')[1]!, r.durationMs]));
  const levelOf = (k: string) => Math.floor(ctx.graph.names.indexOf(k) / ctx.graph.width);
  const longest = longestChain(ctx.graph, durations);
  const ok = p.code === 0 && report?.ok === true;
  process.stderr.write(
    `${name}: ${ok ? 'ok' : `failed (exit ${p.code}): ${lastLine(p)}`} in ${(m.wallMs / 1000).toFixed(1)} s, ${m.requests} requests\n`,
  );
  return {
    name,
    runners: 'one job',
    pass,
    namespace,
    commit,
    wallMs: m.wallMs,
    ok,
    failedJobs: ok ? 0 : 1,
    requests: m.requests,
    requestsByKind: m.byKind,
    requestsByTarget: m.byTarget,
    apiserverCpuMs: m.apiserverCpuMs,
    etcdCpuMs: m.etcdCpuMs,
    cliCpuMs: p.cpuMs,
    jobs: [...durations].map(([k, ms]) => ({
      id: `${namespace}.${k}`,
      kustomization: `${namespace}/${k}`,
      level: levelOf(k),
      code: p.code,
      startMs: 0,
      endMs: ms,
      wallMs: ms,
      waitMs: 0,
      workMs: ms,
      cpuMs: undefined,
      peakRssKiB: undefined,
    })),
    chainMs: ctx.graph.chain.reduce((s, k) => s + (durations.get(k) ?? 0), 0),
    criticalPathMs: longest.ms,
    criticalPath: longest.path,
    jobsThatChecked: 0,
    jobsThatWaited: 0,
    loadBefore: m.loadBefore,
    loadAfter: m.loadAfter,
    ...(report ? { report, reportDurationMs: report.durationMs } : {}),
  };
}

const WAITING = / \(reconciled by other jobs\) to be ready/;
const READY = /dependency \S+ is ready/;
const STILL = /still waiting \(/;

/** The fan-out: plan, then a pool of N processes taking the matrix entries in order, then the merge. */
export async function fanOut(
  ctx: Ctx,
  name: string,
  repo: string,
  namespace: string,
  runners: number,
  pass: ScenarioResult['pass'],
  plan: Plan,
): Promise<ScenarioResult> {
  process.stderr.write(`${name}: ${runners} processes, ${pass} ...\n`);
  const commit = git(repo, 'rev-parse', 'HEAD');
  const dir = join(ctx.work, name);
  const reports = join(dir, 'reports');
  await rm(reports, { recursive: true, force: true });
  await mkdir(reports, { recursive: true });
  const entries = plan.matrix.include;
  const jobs: JobRun[] = [];
  let t0 = 0;
  let failures = 0;
  const m = await measure(ctx, async () => {
    t0 = performance.now();
    let next = 0;
    const worker = async (w: number) => {
      for (let i = next++; i < entries.length; i = next++) {
        const e = entries[i]!;
        const p = await run(
          NODE,
          cliArgs(ctx, [
            '--select',
            e.kustomization,
            '--report-file',
            join(reports, `${e.id}.json`),
            '--dependency-timeout',
            '30m',
          ]),
          repo,
          join(dir, `worker-${String(w)}.rss`),
        );
        const waiting = p.lines.find((l) => WAITING.test(l.text));
        const ready = p.lines.filter((l) => READY.test(l.text)).pop();
        const waitMs = waiting ? (ready ?? { t: p.endedAt - p.startedAt }).t - waiting.t : 0;
        const wallMs = p.endedAt - p.startedAt;
        if (p.code !== 0) {
          failures++;
          process.stderr.write(`  ${e.id} failed (exit ${p.code}): ${lastLine(p)}\n`);
        }
        jobs.push({
          id: e.id,
          kustomization: e.kustomization,
          level: e.level,
          code: p.code,
          startMs: p.startedAt - t0,
          endMs: p.endedAt - t0,
          wallMs,
          waitMs,
          workMs: wallMs - waitMs,
          cpuMs: p.cpuMs,
          peakRssKiB: p.peakRssKiB,
          checked: waiting !== undefined,
          slept: p.lines.some((l) => STILL.test(l.text)),
          ...(p.code !== 0 ? { lastLine: lastLine(p) } : {}),
        });
      }
    };
    await Promise.all(Array.from({ length: runners }, (_, w) => worker(w)));
  });
  const merge = await run(
    NODE,
    [CLI, 'report', '--reports', 'reports/*.json', '--output', 'json'],
    dir,
    join(dir, 'report.rss'),
  );
  let report: Report | undefined;
  try {
    report = JSON.parse(merge.stdout) as Report;
  } catch {
    process.stderr.write(`${name}: the merged report is not JSON (exit ${merge.code}): ${lastLine(merge)}\n`);
  }
  jobs.sort((a, b) => entries.findIndex((e) => e.id === a.id) - entries.findIndex((e) => e.id === b.id));
  const work = new Map(jobs.map((j) => [j.kustomization.split('/')[1]!, j.workMs]));
  const longest = longestChain(ctx.graph, work);
  const cpu = jobs.every((j) => j.cpuMs !== undefined) ? jobs.reduce((s, j) => s + j.cpuMs!, 0) : undefined;
  const ok = failures === 0 && merge.code === 0 && report?.ok === true;
  process.stderr.write(
    `${name}: ${ok ? 'ok' : `${failures} jobs failed, merge exit ${merge.code}`} in ${(m.wallMs / 1000).toFixed(1)} s, ${m.requests} requests\n`,
  );
  return {
    name,
    runners,
    pass,
    namespace,
    commit,
    wallMs: m.wallMs,
    ok,
    failedJobs: failures,
    requests: m.requests,
    requestsByKind: m.byKind,
    requestsByTarget: m.byTarget,
    apiserverCpuMs: m.apiserverCpuMs,
    etcdCpuMs: m.etcdCpuMs,
    cliCpuMs: cpu,
    reportMs: merge.endedAt - merge.startedAt,
    reportCode: merge.code,
    ...(report ? { reportDurationMs: report.durationMs } : {}),
    jobs,
    chainMs: ctx.graph.chain.reduce((s, k) => s + (work.get(k) ?? 0), 0),
    criticalPathMs: longest.ms,
    criticalPath: longest.path,
    jobsThatChecked: jobs.filter((j) => j.checked).length,
    jobsThatWaited: jobs.filter((j) => j.slept).length,
    loadBefore: m.loadBefore,
    loadAfter: m.loadAfter,
    ...(report ? { report } : {}),
  };
}

export async function planOf(repo: string, work: string, extra: string[] = []): Promise<{ plan: Plan; ms: number }> {
  const p = await run(
    NODE,
    [CLI, 'plan', '--kustomizations', GLOB, ...extra, '--output', 'json'],
    repo,
    join(work, 'plan.rss'),
  );
  if (p.code !== 0) throw new Error(`plan failed (exit ${p.code}): ${lastLine(p)}`);
  return { plan: JSON.parse(p.stdout) as Plan, ms: p.endedAt - p.startedAt };
}

/** Compares a scenario with the one job of the same pass; records the verdict on `s`. */
export function compare(one: ScenarioResult, s: ScenarioResult): void {
  const differencesFound: string[] = [];
  const v =
    one.report && s.report
      ? differences('verdict', verdicts(one.report, one.namespace), verdicts(s.report, s.namespace))
      : ['a report is missing'];
  const o = differences('object', one.state!.objects, s.state!.objects);
  const i = differences('inventory', one.state!.inventories, s.state!.inventories);
  differencesFound.push(...v, ...o, ...i);
  s.same = {
    verdicts: v.length === 0,
    objects: o.length === 0,
    inventories: i.length === 0,
    differences: differencesFound,
  };
}
