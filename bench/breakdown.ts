// Where a profiled run of our CLI spends its time (bench/profile.ts collects the inputs): its wall time
// cut into consecutive spans at the CLI's marks (KR_TIMINGS) and kustomize's start and end, and its
// main thread's CPU profile (node --cpu-prof) summed by category of the source file running. Pure: no I/O.
import type { TimingMark } from '../src/util/timings.ts';

// ---------------------------------------------------------------- wall time

/** One run as the benchmark saw it, every time in ms since the epoch. */
export interface RunTimes {
  /** The benchmark spawned the process, and saw it exit. */
  spawnedAt: number;
  exitedAt: number;
  /** The CLI's marks (src/util/timings.ts). */
  marks: TimingMark[];
  /** Each kustomize process: its start and end (from a wrapper script). */
  kustomize: { start: number; end: number }[];
}

/** The span that starts at each mark (a phase's start `Title>`, end `Title<`, or a CLI step). */
const SPAN_AFTER: Record<string, string> = {
  spawn: 'start-up and module load',
  main: 'flags, settings, git',
  reconcile: 'resolve: kubeconfig, Kustomization',
  'Render>': 'render: the build (tree copy and kustomize, or in process)',
  'kustomize>': 'kustomize (child process)',
  'kustomize<': 'render: YAML parse, normalise',
  'Render<': 'discovery, lock, inventory read (after the build)',
  'Plan>': 'plan: prevalidate, inventory pending',
  'Apply>': 'apply: lists, proof/diff, apply requests',
  'Apply (dry run)>': 'apply: lists, proof/diff, apply requests',
  'Health>': 'health',
  'Prune>': 'prune',
  'Prune (dry run)>': 'prune',
  'Record>': 'record: inventory write',
  'Record<': 'removed Kustomizations, close',
  reconciled: 'report rendering and output',
  reported: 'exit: the event loop drains',
  exit: 'exit: teardown (with --cpu-prof, writing the profile)',
};

/** The wall-time spans in the order they first occur. */
export const WALL_ORDER = [...new Set([...Object.values(SPAN_AFTER), 'between phases'])];

/** A phase title without the `[namespace/name] ` prefix of a run with several Kustomizations. */
const bare = (name: string) => name.replace(/^\[[^\]]*\] /, '');

function spanAfter(mark: string): string {
  const name = bare(mark);
  return SPAN_AFTER[name] ?? (name.endsWith('<') ? 'between phases' : name.replace(/>$/, ''));
}

/**
 * The run's wall time cut at every mark into consecutive spans, each named by the mark it starts at
 * (SPAN_AFTER), ms by name; the spans add up to exitedAt - spawnedAt.
 */
export function wallSpans(run: RunTimes): Map<string, number> {
  const events = [
    { name: 'spawn', at: run.spawnedAt },
    ...run.marks,
    ...run.kustomize.flatMap((k) => [
      { name: 'kustomize>', at: k.start },
      { name: 'kustomize<', at: k.end },
    ]),
  ]
    .filter((e) => e.at >= run.spawnedAt && e.at <= run.exitedAt)
    .sort((a, b) => a.at - b.at);
  const out = new Map<string, number>();
  events.forEach((e, i) => {
    const end = events[i + 1]?.at ?? run.exitedAt;
    const label = spanAfter(e.name);
    out.set(label, (out.get(label) ?? 0) + (end - e.at));
  });
  return out;
}

// ---------------------------------------------------------------- CPU

/** The parts of a .cpuprofile (V8's Profiler.Profile) read here. Times are µs on the monotonic clock. */
export interface CpuProfile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
    children?: number[];
  }[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** The source file a frame's code came from (through the bundle's source map), relative to the repository. */
export type Resolve = (url: string, line: number, column: number) => string | undefined;

/** Categories of our own source files, by path prefix: the first that matches wins. */
const SOURCE_CATEGORIES: [string, string][] = [
  ['src/kustomize/copy.ts', 'tree copy'],
  ['src/kustomize/source.ts', 'tree copy'],
  ['src/kustomize/sourceignore.ts', 'tree copy'],
  ['src/kustomize/metadata.ts', 'render: normalise, labels, substitute'],
  ['src/kustomize/plain', 'build in process (plain.ts, overlay.ts)'],
  ['src/kustomize/overlay', 'build in process (plain.ts, overlay.ts)'],
  ['src/kustomize/legacy-order.ts', 'build in process (plain.ts, overlay.ts)'],
  ['src/kustomize/', 'kustomize: prepare, start, wait'],
  ['src/objects/kube.ts', 'YAML parse: kustomize output'],
  ['src/objects/yaml.ts', 'YAML parse: kustomize output'],
  ['src/ssa/normalize.ts', 'render: normalise, labels, substitute'],
  ['src/ssa/policy.ts', 'render: normalise, labels, substitute'],
  ['src/substitute/', 'render: normalise, labels, substitute'],
  ['src/sops/', 'render: normalise, labels, substitute'],
  ['src/reconcile/render.ts', 'render: normalise, labels, substitute'],
  ['src/cluster/discovery.ts', 'discovery and lists'],
  ['src/ssa/live.ts', 'discovery and lists'],
  ['src/ssa/prevalidate.ts', 'discovery and lists'],
  ['src/ssa/noop.ts', 'proof/diff'],
  ['src/ssa/diff.ts', 'proof/diff'],
  ['src/ssa/ignore.ts', 'proof/diff'],
  ['src/ssa/json.ts', 'proof/diff'],
  ['src/ssa/delete.ts', 'prune'],
  ['src/inventory/contents.ts', 'prune'],
  ['src/reconcile/removed.ts', 'prune'],
  ['src/ssa/', 'apply requests'],
  ['src/cluster/', 'API client, HTTP, TLS, JSON'],
  ['src/inventory/', 'inventory read and write'],
  ['src/inventory/session.ts', 'inventory read and write'],
  ['src/reconcile/record.ts', 'inventory read and write'],
  ['src/report/', 'report rendering and output'],
  ['src/cli.ts', 'flags, settings, kubeconfig'],
  ['src/settings.ts', 'flags, settings, kubeconfig'],
  ['src/options/', 'flags, settings, kubeconfig'],
  ['src/flux/', 'flags, settings, kubeconfig'],
  ['src/reconcile/resolve.ts', 'flags, settings, kubeconfig'],
  ['src/', 'other (our code)'],
];

/**
 * A category that an outer frame narrows: the YAML parser runs on the source files too, when a
 * kustomization is generated over them (each must be a manifest), not only on kustomize's output.
 */
const REFINED: [string, string, string][] = [
  ['YAML parse: kustomize output', 'src/kustomize/generate.ts', 'YAML parse: source files (generated kustomization)'],
];

/** Node's file system code resumed from its own queue: the caller of ours that awaits it is not in the stack. */
const FILE_SYSTEM = 'file system, caller not in the stack';

/** Libraries and Node internals, for a stack with none of our frames. */
const LIBRARY_CATEGORIES: [RegExp, string][] = [
  [/^node_modules\/yaml\//, 'YAML parse: kustomize output'],
  [/^node_modules\/@kubernetes\//, 'API client, HTTP, TLS, JSON'],
  [
    /^node:(internal\/)?(_?tls|_?http|https|net|stream|dns|internal\/streams|internal\/http|internal\/tls)/,
    'API client, HTTP, TLS, JSON',
  ],
  [/^node:(internal\/)?(fs|internal\/fs)/, FILE_SYSTEM],
  [/^node:(internal\/)?(child_process|internal\/child_process)/, 'kustomize: prepare, start, wait'],
];

/** The CPU categories in the order shown. */
export const CPU_ORDER = [
  'start-up and module load',
  'flags, settings, kubeconfig',
  'tree copy',
  'build in process (plain.ts, overlay.ts)',
  'kustomize: prepare, start, wait',
  'YAML parse: source files (generated kustomization)',
  'YAML parse: kustomize output',
  'render: normalise, labels, substitute',
  'discovery and lists',
  'proof/diff',
  'apply requests',
  'API client, HTTP, TLS, JSON',
  'inventory read and write',
  'prune',
  'report rendering and output',
  `${FILE_SYSTEM}: render before kustomize (copy, checks)`,
  `${FILE_SYSTEM}: elsewhere`,
  'other (our code)',
  'garbage collection',
  'V8 and native (program)',
  'other (Node internals)',
];

/** Moments of the run on the profile's clock (µs): samples before main are start-up, after reconciled the report. */
export interface CpuWindows {
  mainUs?: number;
  reconciledUs?: number;
  /** From the render phase's start to kustomize's (file reads then are the copy's and the checks'). */
  beforeKustomize?: [number, number][];
}

export interface CpuBreakdown {
  /** Main-thread busy time by category, ms. */
  byCategory: Map<string, number>;
  /** Main-thread busy time by the source file of the function running (self time), ms. */
  bySelfFile: Map<string, number>;
  /** Samples with the thread idle (waiting on I/O, timers or kustomize), ms. */
  idleMs: number;
}

/**
 * Sums the profile's samples (each lasting until the next) by category: samples before `mainUs` are
 * start-up and module load, after `reconciledUs` report rendering and output; the rest take the
 * category of the innermost frame of our own (src/) in their stack, or with none, of the innermost
 * library or Node internal that has one; V8's pseudo-frames (GC, program) are their own categories.
 */
export function cpuBreakdown(profile: CpuProfile, resolve: Resolve, windows: CpuWindows = {}): CpuBreakdown {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const fileOf = new Map<number, string>();
  const file = (id: number) => {
    let f = fileOf.get(id);
    if (f === undefined) {
      const { url, lineNumber, columnNumber, functionName } = nodes.get(id)!.callFrame;
      f = (url === '' ? `(${functionName.replace(/^\(|\)$/g, '')})` : resolve(url, lineNumber, columnNumber)) ?? url;
      fileOf.set(id, f);
    }
    return f;
  };
  const categoryOf = new Map<number, string>();
  const category = (leaf: number): string => {
    const known = categoryOf.get(leaf);
    if (known !== undefined) return known;
    const leafName = nodes.get(leaf)!.callFrame.functionName;
    let found: string | undefined =
      leafName === '(garbage collector)'
        ? 'garbage collection'
        : leafName === '(program)'
          ? 'V8 and native (program)'
          : undefined;
    let library: string | undefined;
    let id: number | undefined = leaf;
    for (; found === undefined && id !== undefined; id = parent.get(id)) {
      const f = file(id);
      if (f.startsWith('src/')) found = SOURCE_CATEGORIES.find(([prefix]) => f.startsWith(prefix))![1];
      else library ??= LIBRARY_CATEGORIES.find(([re]) => re.test(f))?.[1];
    }
    for (; found !== undefined && id !== undefined; id = parent.get(id)) {
      const f = file(id);
      const narrower = REFINED.find(([c, prefix]) => c === found && f.startsWith(prefix));
      if (narrower) found = narrower[2];
    }
    const c = found ?? library ?? 'other (Node internals)';
    categoryOf.set(leaf, c);
    return c;
  };
  const byCategory = new Map<string, number>();
  const bySelfFile = new Map<string, number>();
  let idleMs = 0;
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0;
    const next = i + 1 < profile.samples.length ? at + (profile.timeDeltas[i + 1] ?? 0) : profile.endTime;
    const ms = Math.max(0, next - at) / 1000;
    const name = nodes.get(id)?.callFrame.functionName;
    if (name === '(idle)') {
      idleMs += ms;
      return;
    }
    let c =
      windows.mainUs !== undefined && at < windows.mainUs
        ? 'start-up and module load'
        : windows.reconciledUs !== undefined && at >= windows.reconciledUs
          ? 'report rendering and output'
          : category(id);
    if (c === FILE_SYSTEM) {
      const rendering = (windows.beforeKustomize ?? []).some(([from, to]) => at >= from && at < to);
      c = `${FILE_SYSTEM}: ${rendering ? 'render before kustomize (copy, checks)' : 'elsewhere'}`;
    }
    byCategory.set(c, (byCategory.get(c) ?? 0) + ms);
    const f = file(id);
    bySelfFile.set(f, (bySelfFile.get(f) ?? 0) + ms);
  });
  return { byCategory, bySelfFile, idleMs };
}

// ---------------------------------------------------------------- tables

/** One column of a breakdown table: a scenario's ms by row label, and the total its percentages are of. */
export interface Column {
  title: string;
  values: ReadonlyMap<string, number>;
  total: number;
}

/** `1,234 (12 %)`; rows under 0.5 ms read `-`. */
function cell(ms: number | undefined, total: number): string {
  if (ms === undefined || Math.abs(ms) < 0.5) return '-';
  const pct = total > 0 ? (100 * ms) / total : 0;
  return `${Math.round(ms).toLocaleString('en-US')} (${pct < 1 && pct > -1 ? pct.toFixed(1) : Math.round(pct)} %)`;
}

/**
 * A markdown table, one row per label (in `order`, then any others in the order met) and one column
 * per scenario, each cell `ms (% of the column's total)`, and a total row.
 */
export function breakdownTable(rowTitle: string, order: readonly string[], columns: readonly Column[]): string {
  const labels = [...new Set([...order, ...columns.flatMap((c) => [...c.values.keys()])])].filter((l) =>
    columns.some((c) => Math.abs(c.values.get(l) ?? 0) >= 0.5),
  );
  return [
    `| ${rowTitle} | ${columns.map((c) => c.title).join(' | ')} |`,
    `|---|${'---:|'.repeat(columns.length)}`,
    ...labels.map((l) => `| ${l} | ${columns.map((c) => cell(c.values.get(l), c.total)).join(' | ')} |`),
    `| **total** | ${columns.map((c) => `**${Math.round(c.total).toLocaleString('en-US')}**`).join(' | ')} |`,
  ].join('\n');
}
