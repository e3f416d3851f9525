// Benchmarks the fan-out (plan → one process per Kustomization with --select → report) against one
// job that reconciles every Kustomization, on a tier-a test cluster that it starts and stops itself,
// and models wall time against runner count for many clusters. Prints figures; asserts nothing about
// time, but exits 1 when the fan-out's results differ from the one job's (a correctness check).
//   node_modules/.bin/node bench/fanout.ts [--kustomizations 100] [--objects 50] [--runners 2,4,8] [--overhead 20]
// See bench/README.md.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parse } from 'yaml';
import { cpuMsOf, startCluster, startProxy, type Cluster, type CountingProxy } from './common.ts';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(REPO, 'dist', 'cli.js');
const KUSTOMIZE = join(REPO, 'test', 'cluster', 'bin', 'kustomize');
const TIME = '/usr/bin/time';
const NODE = process.execPath;
/** The CLI's poll interval for dependencies in other jobs (src/reconcile/await-deps.ts POLL_MS). */
const POLL_MS = 2_000;
/** No single process may take longer than this (a fan-out job may wait for its dependencies). */
const PROC_TIMEOUT_MS = 20 * 60_000;
const GLOB = 'ks/*.yaml';

// ---------------------------------------------------------------- the tree

interface Graph {
  /** Kustomization names in file order (level by level). */
  names: string[];
  /** Each name's dependsOn (names, same namespace). */
  deps: Map<string, string[]>;
  /** The chain along the first column: the known critical path (one dependency each). */
  chain: string[];
  width: number;
  levels: number;
}

/**
 * n Kustomizations in levels of `width` (⌈√n⌉: 10 levels of 10 for 100). Level L > 0, column j
 * depends on column j of level L-1, and odd columns also on column j+1 (mod width): one or two
 * dependencies each. Column 0 is a chain of one dependency each, as long as any: the known critical
 * path.
 */
function graphFor(n: number): Graph {
  const width = Math.max(1, Math.ceil(Math.sqrt(n)));
  const digits = Math.max(2, String(n - 1).length);
  const name = (i: number) => `k${String(i).padStart(digits, '0')}`;
  const names = Array.from({ length: n }, (_, i) => name(i));
  const deps = new Map<string, string[]>();
  for (let i = 0; i < n; i++) {
    const level = Math.floor(i / width);
    const j = i % width;
    const base = (level - 1) * width;
    const d = level === 0 ? [] : [name(base + j)];
    if (level > 0 && j % 2 === 1 && width > 1) d.push(name(base + ((j + 1) % width)));
    deps.set(name(i), d);
  }
  const chain = names.filter((_, i) => i % width === 0);
  return { names, deps, chain, width, levels: Math.ceil(n / width) };
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

/** The objects of one Kustomization: every fifth a Secret, the rest ConfigMaps, in `namespace`. */
function objectsFor(ks: string, m: number, namespace: string): { file: string; text: string }[] {
  return Array.from({ length: m }, (_, i) => {
    const n = String(i).padStart(3, '0');
    const payload = `${ks}/${n} `.repeat(6).trim();
    const secret = i % 5 === 4;
    const text = secret
      ? [
          'apiVersion: v1',
          'kind: Secret',
          'metadata:',
          `  name: ${ks}-secret-${n}`,
          `  namespace: ${namespace}`,
          '  labels:',
          `    app.kubernetes.io/part-of: ${ks}`,
          'type: Opaque',
          'data:',
          `  token: ${b64(`token-${ks}-${n}`)}`,
          `  payload: ${b64(payload)}`,
          '',
        ].join('\n')
      : [
          'apiVersion: v1',
          'kind: ConfigMap',
          'metadata:',
          `  name: ${ks}-cm-${n}`,
          `  namespace: ${namespace}`,
          '  labels:',
          `    app.kubernetes.io/part-of: ${ks}`,
          'data:',
          `  index: "${n}"`,
          `  kustomization: ${ks}`,
          `  payload: ${payload}`,
          '',
        ].join('\n');
    return { file: `${secret ? 'secret' : 'cm'}-${n}.yaml`, text };
  });
}

function kustomizationFile(name: string, namespace: string, deps: readonly string[]): string {
  return [
    'apiVersion: kustomize.toolkit.fluxcd.io/v1',
    'kind: Kustomization',
    'metadata:',
    `  name: ${name}`,
    `  namespace: ${namespace}`,
    'spec:',
    '  interval: 10m',
    '  prune: true',
    `  path: ./apps/${name}`,
    '  sourceRef:',
    '    kind: GitRepository',
    '    name: flux-system',
    ...(deps.length > 0 ? ['  dependsOn:', ...deps.map((d) => `    - name: ${d}`)] : []),
    '',
  ].join('\n');
}

function git(dir: string, ...args: string[]): string {
  const r = spawnSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@example.com', ...args], {
    cwd: dir,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} in ${dir}: ${r.stderr}`);
  return r.stdout.trim();
}

/**
 * A git repository (one commit) with the Kustomization files under `ksDirs` (each gets every
 * Kustomization; `ks` for one cluster, `clusters/<name>` for several) and their plain directories of
 * m objects under apps/. The Kustomizations and their objects live in `namespace`.
 */
async function writeRepo(dir: string, graph: Graph, m: number, namespace: string, ksDirs = ['ks']): Promise<string> {
  await mkdir(dir, { recursive: true });
  const files: [string, string][] = [];
  for (const name of graph.names) {
    for (const k of ksDirs)
      files.push([join(k, `${name}.yaml`), kustomizationFile(name, namespace, graph.deps.get(name)!)]);
    for (const o of objectsFor(name, m, namespace)) files.push([join('apps', name, o.file), o.text]);
  }
  for (const d of new Set(files.map(([f]) => join(dir, f, '..')))) await mkdir(d, { recursive: true });
  for (let i = 0; i < files.length; i += 256) {
    await Promise.all(files.slice(i, i + 256).map(([f, text]) => writeFile(join(dir, f), text)));
  }
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'bench tree');
  return git(dir, 'rev-parse', 'HEAD');
}

// ---------------------------------------------------------------- processes

interface Proc {
  code: number;
  /** ms, on the scenario's clock (performance.now()). */
  startedAt: number;
  endedAt: number;
  /** Lines of stdout and stderr with the ms since the start they arrived at. */
  lines: { t: number; text: string }[];
  stdout: string;
  cpuMs: number | undefined;
  peakRssKiB: number | undefined;
}

const children = new Set<ChildProcess>();

/** The environment of the CLI: no GitHub Actions variables (a local run), no ambient kubeconfig. */
function cliEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('GITHUB_') && k !== 'KUBECONFIG'),
  );
}

async function run(cmd: string, args: string[], cwd: string, rssFile: string): Promise<Proc> {
  const useTime = existsSync(TIME);
  const startedAt = performance.now();
  const child = useTime
    ? spawn(TIME, ['-f', '%M %U %S', '-o', rssFile, cmd, ...args], {
        cwd,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: cliEnv(),
      })
    : spawn(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: cliEnv() });
  children.add(child);
  const lines: { t: number; text: string }[] = [];
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (text) => lines.push({ t: performance.now() - startedAt, text }));
  }
  const timer = setTimeout(() => child.kill('SIGKILL'), PROC_TIMEOUT_MS);
  const code = await new Promise<number>((resolve) =>
    child.once('close', (c) => {
      resolve(c ?? 1);
    }),
  );
  clearTimeout(timer);
  children.delete(child);
  const endedAt = performance.now();
  const [rss, user, sys] = ((await readFile(rssFile, 'utf8').catch(() => '')).trim().split('\n').pop() ?? '')
    .split(' ')
    .map(Number);
  await rm(rssFile, { force: true });
  return {
    code,
    startedAt,
    endedAt,
    lines,
    stdout,
    cpuMs: user !== undefined && sys !== undefined && Number.isFinite(user + sys) ? (user + sys) * 1000 : undefined,
    peakRssKiB: rss !== undefined && Number.isFinite(rss) && rss > 0 ? rss : undefined,
  };
}

const lastLine = (p: Proc) =>
  p.lines
    .map((l) => l.text)
    .filter((l) => l.trim() !== '')
    .pop() ?? '';

// ---------------------------------------------------------------- reports and the cluster's state

interface ChangeSetEntry {
  subject: string;
  action: string;
}
interface Report {
  kustomization: string;
  ok: boolean;
  changeset: ChangeSetEntry[];
  counts: Record<string, number>;
  durationMs: number;
  error?: string;
  failure?: { stage: string; reason: string };
  pruned?: { subject: string; action: string }[];
  kustomizations?: Report[];
}
interface PlanEntry {
  id: string;
  cluster: string;
  kustomization: string;
  level: number;
  dependsOn: string;
}
interface Plan {
  matrix: { include: PlanEntry[] };
  levels: string[][];
  count: number;
}

/** Each Kustomization's verdict and changeset, the scenario's namespace and repository replaced. */
function verdicts(report: Report, namespace: string): Map<string, string> {
  const norm = (s: string) => s.split(namespace).join('NS');
  const out = new Map<string, string>();
  for (const r of report.kustomizations ?? [report]) {
    const changes = r.changeset.map((e) => `${e.action} ${norm(e.subject)}`).sort();
    const pruned = (r.pruned ?? []).map((p) => `pruned:${p.action} ${norm(p.subject)}`).sort();
    out.set(
      norm(r.kustomization),
      JSON.stringify({
        ok: r.ok,
        failure: r.failure ? `${r.failure.stage}/${r.failure.reason}` : undefined,
        counts: r.counts,
        changes: [...changes, ...pruned],
      }),
    );
  }
  return out;
}

interface ClusterState {
  /** ConfigMaps and Secrets other than inventories: kind/name → labels and data. */
  objects: Map<string, string>;
  /** Inventories: Kustomization → entries, count and the status fields that do not vary by run. */
  inventories: Map<string, string>;
}

async function clusterState(proxy: CountingProxy, namespace: string, repo: string): Promise<ClusterState> {
  const norm = (s: string) => s.split(repo).join('REPO').split(namespace).join('NS');
  const objects = new Map<string, string>();
  const inventories = new Map<string, string>();
  for (const kind of ['configmaps', 'secrets']) {
    const r = await proxy.upstream('GET', `/api/v1/namespaces/${namespace}/${kind}`);
    if (r.status !== 200) throw new Error(`listing ${kind} in ${namespace}: ${r.status} ${r.body.slice(0, 200)}`);
    const items = (
      JSON.parse(r.body) as {
        items: { metadata: { name: string; labels?: Record<string, string> }; data?: Record<string, string> }[];
      }
    ).items;
    for (const o of items) {
      const { name, labels = {} } = o.metadata;
      if (labels['kustomize-reconcile/inventory'] === 'true') {
        const status = parse(o.data?.['status.yaml'] ?? '') as Record<string, unknown> | null;
        inventories.set(
          norm(name),
          norm(
            JSON.stringify({
              count: o.data?.count,
              entries: o.data?.['entries.yaml'],
              result: status?.result,
              set: status?.set,
              origin: status?.origin,
              prune: status?.prune,
            }),
          ),
        );
      } else if (!name.startsWith('kustomize-reconcile.') && name !== 'kube-root-ca.crt') {
        objects.set(`${kind}/${name}`, norm(JSON.stringify({ labels, data: o.data ?? {} })));
      }
    }
  }
  return { objects, inventories };
}

/** The differences between two maps, at most `max` of them, as lines. */
function differences(what: string, a: Map<string, string>, b: Map<string, string>, max = 5): string[] {
  const out: string[] = [];
  for (const k of new Set([...a.keys(), ...b.keys()])) {
    const x = a.get(k);
    const y = b.get(k);
    if (x !== y)
      out.push(`${what} ${k}: one job ${x?.slice(0, 300) ?? 'missing'}; fan-out ${y?.slice(0, 300) ?? 'missing'}`);
  }
  return out.length > max ? [...out.slice(0, max), `... and ${out.length - max} more ${what} differences`] : out;
}

// ---------------------------------------------------------------- scenarios

interface JobRun {
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

interface ScenarioResult {
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

interface Ctx {
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
async function oneJob(
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
async function fanOut(
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

async function planOf(repo: string, work: string, extra: string[] = []): Promise<{ plan: Plan; ms: number }> {
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
function compare(one: ScenarioResult, s: ScenarioResult): void {
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

// ---------------------------------------------------------------- the model

interface SimJob {
  deps: number[];
  durationMs: number;
}

/**
 * List scheduling: jobs in order, each to the runner that frees first; a job holds its runner from
 * its start, through the start-up overhead and any wait for its dependencies (polled every POLL_MS
 * from the end of the overhead), to its end. Returns the wall time and the runner time used.
 */
function simulate(
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
function simJobs(entries: readonly PlanEntry[], durationMs: (e: PlanEntry, i: number) => number): SimJob[] {
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
function levelMajor(entries: readonly PlanEntry[]): PlanEntry[] {
  return [...entries].sort((a, b) => a.level - b.level);
}

// ---------------------------------------------------------------- output

const s1 = (ms: number | undefined) => (ms === undefined ? 'n/a' : (ms / 1000).toFixed(1));
const s2 = (ms: number | undefined) => (ms === undefined ? 'n/a' : (ms / 1000).toFixed(2));
const int = (n: number | undefined) => (n === undefined ? 'n/a' : Math.round(n).toLocaleString('en-US'));
const mmss = (ms: number) => {
  const s = Math.round(ms / 1000);
  return `${String(Math.floor(s / 60))}:${String(s % 60).padStart(2, '0')}`;
};

function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return 0;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

function table(head: string[], align: ('l' | 'r')[], rows: string[][]): string {
  return [
    `| ${head.join(' | ')} |`,
    `| ${align.map((a) => (a === 'r' ? '---:' : '---')).join(' | ')} |`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}

const label = (s: ScenarioResult) => (s.runners === 'one job' ? 'one job' : `${String(s.runners)} processes`);
const sameCell = (s: ScenarioResult) =>
  s.same === undefined ? '(reference)' : s.same.verdicts && s.same.objects && s.same.inventories ? 'yes' : '**no**';

function scenarioTable(rows: ScenarioResult[], n: number): string {
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

function jobTable(rows: ScenarioResult[]): string {
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

function requestTable(rows: ScenarioResult[]): string {
  const keys = [...new Set(rows.flatMap((s) => Object.keys(s.requestsByTarget)))].sort();
  return table(
    ['request', ...rows.map((s) => `${label(s)}, ${s.pass}`)],
    ['l', ...rows.map(() => 'r' as const)],
    keys.map((k) => [k, ...rows.map((s) => int(s.requestsByTarget[k] ?? 0))]),
  );
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      kustomizations: { type: 'string', default: '100' },
      objects: { type: 'string', default: '50' },
      runners: { type: 'string', default: '2,4,8' },
      overhead: { type: 'string', default: '20' },
      clusters: { type: 'string', default: '20' },
      'model-runners': { type: 'string', default: '1,2,4,8,16,20,40,64' },
      'model-from': { type: 'string' },
      rerun: { type: 'boolean', default: true },
      'no-rerun': { type: 'boolean', default: false },
    },
  });
  const n = Number(values.kustomizations);
  const m = Number(values.objects);
  const runnerList = values.runners.split(',').map((x) => Number(x.trim()));
  const overheadMs = Number(values.overhead) * 1000;
  const clusters = Number(values.clusters);
  const modelRunners = values['model-runners'].split(',').map((x) => Number(x.trim()));
  const rerun = values.rerun && !values['no-rerun'];
  if (!Number.isInteger(n) || n < 2 || n > 1000)
    throw new Error('--kustomizations takes a whole number from 2 to 1000');
  if (!Number.isInteger(m) || m < 1 || m > 2000) throw new Error('--objects takes a whole number from 1 to 2000');
  if (runnerList.some((r) => !Number.isInteger(r) || r < 1 || r > 64))
    throw new Error('--runners takes whole numbers from 1 to 64, comma-separated');
  if (!Number.isFinite(overheadMs) || overheadMs < 0) throw new Error('--overhead takes seconds, 0 or more');
  if (!Number.isInteger(clusters) || clusters < 1 || clusters > 200)
    throw new Error('--clusters takes a whole number from 1 to 200');
  if (modelRunners.some((r) => !Number.isInteger(r) || r < 1))
    throw new Error('--model-runners takes whole numbers of at least 1');
  const modelFrom = values['model-from'] === undefined ? Math.min(...runnerList) : Number(values['model-from']);
  if (!runnerList.includes(modelFrom)) throw new Error('--model-from must be one of --runners');
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npm run bundle" first`);
  const help = spawnSync(NODE, [CLI, '--help'], { encoding: 'utf8' }).stdout;
  if (!help.includes('--select')) throw new Error(`${CLI} has no --select (plan, report): run "npm run bundle" first`);

  const state = { stopping: false };
  const stopping = () => state.stopping;
  const onSignal = (sig: NodeJS.Signals) => {
    if (state.stopping) process.exit(130);
    state.stopping = true;
    process.stderr.write(`\n${sig}: stopping the running processes and the cluster (again to exit now)\n`);
    process.exitCode = 130;
    for (const c of children) c.kill('SIGTERM');
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const graph = graphFor(n);
  const work = await mkdtemp(join(os.tmpdir(), 'kr-fanout-'));
  let cluster: Cluster | undefined;
  let proxy: CountingProxy | undefined;
  const results: ScenarioResult[] = [];
  let planMs = 0;
  const info = { modelPlanMs: 0, kubeApiserver: 'unknown' };
  let modelPlan: Plan | undefined;
  const plans = new Map<string, Plan>();
  const loadStart = os.loadavg();
  try {
    process.stderr.write(`starting the test cluster ...\n`);
    cluster = await startCluster();
    proxy = await startProxy(cluster);
    const version = await proxy.upstream('GET', '/version');
    info.kubeApiserver = (JSON.parse(version.body) as { gitVersion?: string }).gitVersion ?? 'unknown';
    const ctx: Ctx = {
      proxy,
      cluster,
      kubeconfig: await proxy.kubeconfig(join(work, 'kubeconfig')),
      work,
      graph,
      objects: m,
    };

    // The model's tree first (no cluster needed): clusters × n Kustomization files, planned by the CLI.
    const modelRepo = join(work, 'model');
    await writeRepo(
      modelRepo,
      graph,
      1,
      'flux-system',
      Array.from({ length: clusters }, (_, c) => `clusters/c${String(c + 1).padStart(2, '0')}`),
    );
    const mp = await run(
      NODE,
      [CLI, 'plan', '--kustomizations', 'clusters/*/*.yaml', '--output', 'json'],
      modelRepo,
      join(work, 'plan.rss'),
    );
    if (mp.code !== 0)
      throw new Error(`plan of the ${String(clusters)}-cluster tree failed (exit ${mp.code}): ${lastLine(mp)}`);
    modelPlan = JSON.parse(mp.stdout) as Plan;
    info.modelPlanMs = mp.endedAt - mp.startedAt;

    const scenarios: { name: string; runners: number | 'one job' }[] = [
      { name: 'one', runners: 'one job' },
      ...runnerList.map((r) => ({ name: `r${String(r)}`, runners: r })),
    ];
    const repos = new Map<string, { repo: string; namespace: string; plan?: Plan }>();
    for (const sc of scenarios) {
      if (stopping()) break;
      const namespace = `fo-${sc.name}`;
      const repo = join(work, sc.name, 'repo');
      await writeRepo(repo, graph, m, namespace);
      let plan: Plan | undefined;
      if (sc.runners !== 'one job') {
        const p = await planOf(repo, work);
        plan = p.plan;
        planMs = p.ms;
        plans.set(sc.name, plan);
        if (plan.count !== n) throw new Error(`the plan has ${String(plan.count)} entries, not ${String(n)}`);
      }
      repos.set(sc.name, { repo, namespace, ...(plan ? { plan } : {}) });
      const res =
        sc.runners === 'one job'
          ? await oneJob(ctx, sc.name, repo, namespace, 'first apply')
          : await fanOut(ctx, sc.name, repo, namespace, sc.runners, 'first apply', plan!);
      res.state = await clusterState(proxy, namespace, repo);
      results.push(res);
    }
    if (rerun && !stopping()) {
      // A no-op re-run at a new commit (an empty one), so that the fan-out's jobs wait for their
      // dependencies' runs of this commit rather than take the first run's as ready.
      const maxN = Math.max(...runnerList);
      for (const name of ['one', `r${String(maxN)}`]) {
        if (stopping()) break;
        const r = repos.get(name)!;
        git(r.repo, 'commit', '-q', '--allow-empty', '-m', 'no-op');
        const res =
          name === 'one'
            ? await oneJob(ctx, `${name}-rerun`, r.repo, r.namespace, 'no-op re-run')
            : await fanOut(ctx, `${name}-rerun`, r.repo, r.namespace, maxN, 'no-op re-run', r.plan!);
        res.state = await clusterState(proxy, r.namespace, r.repo);
        results.push(res);
      }
    }
  } finally {
    for (const c of children) c.kill('SIGKILL');
    await proxy?.close();
    await cluster?.stop();
    await rm(work, { recursive: true, force: true });
  }
  const loadEnd = os.loadavg();
  if (results.length === 0) throw new Error('no scenario ran');

  // Same results: each fan-out against the one job of its pass.
  for (const pass of ['first apply', 'no-op re-run'] as const) {
    const one = results.find((s) => s.pass === pass && s.runners === 'one job');
    if (!one) continue;
    for (const s of results.filter((x) => x.pass === pass && x.runners !== 'one job')) compare(one, s);
  }
  const firstPass = results.filter((s) => s.pass === 'first apply');
  const rerunPass = results.filter((s) => s.pass === 'no-op re-run');

  // The model.
  const source = firstPass.find((s) => s.runners === modelFrom);
  const oneJobWall = firstPass.find((s) => s.runners === 'one job')?.wallMs ?? 0;
  const works = source?.jobs.map((j) => j.workMs) ?? [];
  const median = quantile(works, 0.5);
  const p90 = quantile(works, 0.9);
  const entries = modelPlan.matrix.include;
  const byLevel = levelMajor(entries);
  const oneCluster = entries.filter((e) => e.cluster === entries[0]?.cluster);
  const modelRows = [...modelRunners, Number.POSITIVE_INFINITY].map((r) => {
    const R = Number.isFinite(r) ? r : entries.length;
    const sim = (list: PlanEntry[], d: number) =>
      simulate(
        simJobs(list, () => d),
        R,
        overheadMs,
      );
    const a = sim(entries, median);
    const b = sim(entries, p90);
    const c = sim(byLevel, median);
    const d = sim(byLevel, p90);
    const single = sim(oneCluster, median);
    const waves = Math.ceil(clusters / Math.min(R, clusters));
    const perCluster = waves * (oneJobWall + overheadMs);
    return {
      runners: Number.isFinite(r) ? r : 'unlimited',
      matrixMedianMs: a.wallMs,
      matrixP90Ms: b.wallMs,
      levelMedianMs: c.wallMs,
      levelP90Ms: d.wallMs,
      oneClusterMedianMs: single.wallMs,
      runnerMinutesMedian: a.billedMin,
      perClusterJobMs: perCluster,
      perClusterRunnerMinutes: clusters * Math.ceil((oneJobWall + overheadMs) / 60_000),
    };
  });
  // The model against the measurements: each run's own per-job work, its N, no overhead.
  const modelCheck = firstPass.flatMap((s) => {
    const plan = plans.get(s.name);
    if (s.runners === 'one job' || !plan) return [];
    const work = new Map(s.jobs.map((j) => [j.id, j.workMs]));
    const sim = simulate(
      simJobs(plan.matrix.include, (e) => work.get(e.id) ?? 0),
      s.runners,
      0,
    );
    return [{ runners: s.runners, measuredMs: s.wallMs, modelledMs: sim.wallMs }];
  });

  const cpus = os.cpus();
  const machine = {
    cpuModel: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    memoryMiB: Math.round(os.totalmem() / 1024 / 1024),
    os: `${os.platform()} ${os.release()} ${os.arch()}`,
    node: process.version,
    kubeApiserver: info.kubeApiserver,
    git: spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO, encoding: 'utf8' }).stdout.trim(),
  };
  const la = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
  const matched = results.every(
    (s) => s.same === undefined || (s.same.verdicts && s.same.objects && s.same.inventories),
  );
  const allOk = results.every((s) => s.ok);

  const out = [
    `## Fan-out: one job against N processes standing in for runners`,
    '',
    `${String(machine.cores)} cores (${machine.cpuModel}), ${String(machine.memoryMiB)} MiB, Node ${machine.node}, kube-apiserver ${info.kubeApiserver} (tier a: etcd + apiserver, no controllers), dist/cli.js at commit ${machine.git} (plus any uncommitted changes bundled). Load average (1, 5, 15 min) at the start ${la(loadStart)}, at the end ${la(loadEnd)}.`,
    '',
    `Tree: ${String(n)} Kustomizations (\`kustomize.toolkit.fluxcd.io/v1\`, prune: true, each a plain directory of ${String(m)} objects: ${String(m - Math.floor((m + 1) / 5))} ConfigMaps and ${String(Math.floor((m + 1) / 5))} Secrets), ${String(graph.levels)} dependsOn levels of ${String(graph.width)}; each Kustomization of level L > 0 depends on one (even columns) or two (odd columns) of level L − 1. The known critical path is column 0 (${graph.chain[0] ?? ''} → … → ${graph.chain.at(-1) ?? ''}, ${String(graph.chain.length)} Kustomizations). Each run has its own namespace (Kustomizations, inventories and objects) and its own git repository with one commit.`,
    '',
    `- **one job**: \`node dist/cli.js apply --kustomizations '${GLOB}' --output json\` (four Kustomizations at once, in dependsOn order); per-Kustomization figures are its report's \`durationMs\`.`,
    `- **N processes**: \`plan --output json\` (${s2(planMs)} s), then a pool of N workers taking the matrix entries in matrix order (level order), each entry one \`node dist/cli.js apply --kustomizations '${GLOB}' --select NS/NAME --report-file reports/ID.json --dependency-timeout 30m\`; a job whose dependency another process reconciles polls its inventory every 2 s and holds its worker meanwhile, as a job holds its runner under \`max-parallel: N\`. Then \`report --reports 'reports/*.json' --output json\` merges them. "Wall" is the first job's start to the last job's end (the merge is apart).`,
    `- **requests**: every request the processes made to the apiserver, through the counting proxy (the dependency polls included). **CLI CPU**: user + system of every process (\`/usr/bin/time\`). **work**: a job's wall time less its wait for dependencies (from its "waiting for" line to its last "is ready" line): Node start-up, reading the ${String(n)} Kustomization files, discovery, build, apply, inventory. **checked / slept**: the jobs that read a dependency's inventory (one that another job reconciles) / that found one not ready at the first read and slept at least one 2 s poll.`,
    `- **critical path**: the sum of the work of the Kustomizations along column 0 / along the dependsOn chain with the largest sum. **same results**: each Kustomization's verdict, counts and changeset (subject and action) from the merged report against the one job's report, the ConfigMaps and Secrets in the namespace (names, labels, data) and every inventory (entries, result, the recorded set and origin), the namespace and repository path normalised.`,
    '',
    `### First apply`,
    '',
    scenarioTable(firstPass, n),
    '',
    jobTable(firstPass),
    '',
    ...(rerunPass.length > 0
      ? [
          `### No-op re-run (a new, empty commit; the same objects)`,
          '',
          scenarioTable(rerunPass, n),
          '',
          jobTable(rerunPass),
          '',
        ]
      : []),
    `### Requests by method and target`,
    '',
    requestTable(results),
    '',
    ...results
      .filter((s) => s.same && s.same.differences.length > 0)
      .flatMap((s) => [`**${label(s)}, ${s.pass}: differences**`, '', ...s.same!.differences.map((d) => `- ${d}`), '']),
    `### Model: wall time against runners, ${String(clusters)} clusters × ${String(n)} Kustomizations`,
    '',
    `The matrix is the CLI's own plan of a \`clusters/<name>/\` tree of ${String(clusters)} clusters with the graph above (${String(entries.length)} entries, planned in ${s2(info.modelPlanMs)} s). Per-job work: the ${String(modelFrom)}-process run's, median ${s2(median)} s, p90 ${s2(p90)} s; start-up overhead ${s1(overheadMs)} s per job (\`--overhead\`). One job per cluster: ${String(clusters)} jobs of the one-job run's wall time (${s1(oneJobWall)} s) plus the overhead. Times are m:ss; runner-minutes are the sum over jobs of each job's minutes rounded up (GitHub bills per started minute).`,
    '',
    table(
      [
        'runners',
        'matrix order, median',
        'matrix order, p90',
        'level order, median',
        'level order, p90',
        'runner-minutes (matrix, median)',
        'one job per cluster',
        'runner-minutes (one per cluster)',
        '1 cluster, median',
      ],
      ['r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
      modelRows.map((r) => [
        String(r.runners),
        mmss(r.matrixMedianMs),
        mmss(r.matrixP90Ms),
        mmss(r.levelMedianMs),
        mmss(r.levelP90Ms),
        int(r.runnerMinutesMedian),
        mmss(r.perClusterJobMs),
        int(r.perClusterRunnerMinutes),
        mmss(r.oneClusterMedianMs),
      ]),
    ),
    '',
    `Model check (one cluster, each run's own per-job work, overhead 0, against its measured wall): ${modelCheck.map((c) => `${String(c.runners)} processes ${s1(c.modelledMs)} s modelled / ${s1(c.measuredMs)} s measured`).join('; ')}.`,
    '',
    `Assumptions of the model:`,
    '',
    `- list scheduling: GitHub starts matrix jobs in matrix order as runners free up (\`max-parallel\` or a pool of self-hosted runners); "matrix order" is the plan's (cluster by cluster, each in level order), "level order" the same entries sorted by level across clusters (the plan's \`levels\` output), which the plan does not write;`,
    `- a job holds its runner from its start, through the start-up overhead and any wait for its dependencies, to its end; it starts polling its dependencies' inventories when the overhead ends and sees a dependency done at the first 2 s poll at or after that dependency's end;`,
    `- every job's work takes the same time (the median, or the p90 as a pessimistic case), whatever else runs: each runner has its own CPUs and each cluster its own apiserver, which the jobs of ${String(clusters)} clusters do not saturate. Measured here, the N processes share 2 cores with the cluster, which is why the model takes its per-job time from the ${String(modelFrom)}-process run (the least contended) — the larger N's work times are inflated by CPU contention (see the job table);`,
    `- the work includes Node start-up and reading every Kustomization file of the cluster, which a job does before it waits; the model puts it after the wait;`,
    `- the overhead (runner start-up, checkout, setup-node, the action's download) is the same for every job and is not spent waiting on anything else; the plan job before and the report job after the matrix are not counted; nothing fails.`,
    '',
    `Correctness: ${matched ? 'the fan-out runs matched the one job (verdicts, objects, inventories).' : '**the fan-out runs did not match the one job** (see the differences above).'}${allOk ? '' : ' **Some runs failed** (✗).'}`,
    '',
  ].join('\n');
  process.stdout.write(out + '\n');

  const resultsDir = join(REPO, 'bench', 'results');
  const stamp = new Date()
    .toISOString()
    .replace(/:\d\d\.\d+Z$/, 'Z')
    .replace(':', '');
  await mkdir(resultsDir, { recursive: true });
  const base = join(resultsDir, `fanout-${stamp}`);
  await writeFile(`${base}.md`, out);
  await writeFile(
    `${base}.json`,
    JSON.stringify(
      {
        date: new Date().toISOString(),
        parameters: {
          kustomizations: n,
          objects: m,
          runners: runnerList,
          overheadS: overheadMs / 1000,
          clusters,
          modelRunners,
          modelFrom,
        },
        machine,
        load: { start: loadStart, end: loadEnd },
        graph: { width: graph.width, levels: graph.levels, chain: graph.chain, deps: Object.fromEntries(graph.deps) },
        planMs,
        modelPlanMs: info.modelPlanMs,
        results: results.map(({ report: _report, state: _state, ...rest }) => rest),
        model: {
          perJobMedianMs: median,
          perJobP90Ms: p90,
          oneJobWallMs: oneJobWall,
          rows: modelRows,
          check: modelCheck,
        },
        matched,
        allOk,
      },
      null,
      2,
    ) + '\n',
  );
  process.stderr.write(`results written to ${base}.md and .json\n`);
  if (!matched || !allOk) process.exitCode = 1;
}

main().catch((err: unknown) => {
  process.stderr.write(`fanout: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
