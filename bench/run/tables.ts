// The Markdown bench/run.ts prints for one size: a table per metric (ours beside each peer, with the
// ratio where it means something), our requests against the floor of one per object touched, the
// action's start-up, the load averages, every run's requests by method, and the profile if any.
import { profileTables } from '../profile.ts';
import os from 'node:os';
import { medianRows } from './median.ts';
import { OURS, PROFILED, SCENARIOS, type Row, type Scenario, type SizeResult } from './model.ts';
import { REPO80_CHILDREN, REPO80_NAMESPACES } from './repo80.ts';
import { MONOREPO_UNITS, type Shape } from './tree.ts';

const SHAPE_TITLES: Record<Shape, string> = {
  plain: 'Plain directory',
  overlay: 'Overlay over a base (kustomization.yaml: namespace, labels, two JSON patches)',
  monorepo: `Flux monorepo (${String(MONOREPO_UNITS)} Kustomizations in 3 dependsOn levels, each an overlay over a shared base)`,
  real: 'Overlay as repositories write it (a base per app; namespace, namePrefix, commonLabels, commonAnnotations, labels, images, replicas, SMP and JSON 6902 patch files, patchesStrategicMerge, generators, components)',
  realrepo: `Flux monorepo of ${String(MONOREPO_UNITS)} overlays as repositories write them (3 dependsOn levels; the SMP on every Deployment from patches:, patchesStrategicMerge: or a component, team by team)`,
  repo80: `Parent and children: one parent Kustomization (path: the plain directory apps/) whose build is ${String(REPO80_NAMESPACES.length)} namespaces' kustomization.yaml listing ${String(REPO80_CHILDREN)} children's ks.yaml, each an app's kustomization with generators and a shared component`,
};

/** Issue 49's goals, ours/kapp wall time per step (benchmark figures, not timed tests). */
const KAPP_GOALS: [Scenario, number][] = [
  ['first apply', 0.8],
  ['no-op re-run', 0.33],
  ['one object changed', 0.33],
  ['10% removed (prune)', 0.5],
];
const KAPP = 'kapp';
const KUBECTL = 'kubectl ApplySet';
/** Issue 49's goals: peak RSS at 5,000 objects, MiB; repo80's no-op re-run, ms. */
const RSS_GOAL_MIB = 300;
const REPO80_NOOP_GOAL_MS = 10_000;

export function fmt(n: number | undefined, digits = 0): string {
  return n === undefined ? 'n/a' : n.toFixed(digits);
}

function ratio(a: number | undefined, b: number | undefined): string {
  return a === undefined || b === undefined || b === 0 ? 'n/a' : `${(a / b).toFixed(2)}×`;
}

function countsText(counts: Record<string, number>): string {
  return (
    Object.entries(counts)
      .filter(([, v]) => v > 0)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ') || '-'
  );
}

type Metric = 'wall' | 'requests' | 'apiserver' | 'toolCpu' | 'rss' | 'first';

const METRICS: { metric: Metric; title: string; ratio: boolean }[] = [
  { metric: 'wall', title: 'Wall time, ms (ours/peer)', ratio: true },
  { metric: 'requests', title: 'API requests (ours/peer)', ratio: true },
  { metric: 'apiserver', title: 'kube-apiserver CPU during the run, ms (ours/peer)', ratio: true },
  {
    metric: 'toolCpu',
    title: "The tool's own CPU (its process; Flux: the controller during the run), ms",
    ratio: false,
  },
  {
    metric: 'rss',
    title: "Peak RSS, MiB (a CLI: its process's; Flux: the controller's VmHWM since it started)",
    ratio: false,
  },
  { metric: 'first', title: 'Process start to its first API request, ms', ratio: false },
];

function valueOf(r: Row | undefined, metric: Metric): number | undefined {
  if (!r) return undefined;
  switch (metric) {
    case 'wall':
      return r.wallMs;
    case 'requests':
      return r.requests;
    case 'apiserver':
      return r.apiserverCpuMs;
    case 'toolCpu':
      return r.toolCpuMs;
    case 'rss':
      return r.peakRssMiB;
    case 'first':
      return r.firstRequestMs;
  }
}

function cell(r: Row | undefined, metric: Metric): string {
  if (!r) return 'n/a';
  const v = valueOf(r, metric);
  return `${metric === 'rss' ? fmt(v, 1) : fmt(v)}${r.ok ? '' : ' ✗'}`;
}

/**
 * Our requests beside the floor: one request for each object the change touches (a write; in a
 * preview, a dry-run), counted from our own outcome line (created, configured, deleted).
 */
function floorTable(rows: readonly Row[]): string {
  const lines = SCENARIOS.map((s) => {
    const r = rows.find((x) => x.tool === OURS && x.scenario === s);
    if (!r) return `| ${s} | n/a | n/a | n/a | n/a | n/a |`;
    const count = (word: string) => Number(new RegExp(`\\b${word} (\\d+)`).exec(r.note ?? '')?.[1] ?? 0);
    const touched = count('created') + count('configured') + count('deleted');
    const by = r.requestsByKind;
    const dryRuns = by['PATCH (dry-run)'] ?? 0;
    const writes = ['PATCH', 'POST', 'PUT', 'DELETE'].reduce((sum, k) => sum + (by[k] ?? 0), 0);
    const reads = by['GET'] ?? 0;
    const perObject = touched === 0 ? 'n/a' : (r.requests / touched).toFixed(2);
    return `| ${s} | ${touched} | ${writes} / ${dryRuns} / ${reads} | ${r.requests} | ${perObject} | ${r.requests - touched} |`;
  });
  return [
    'Our requests against the floor (one request per object the change touches: created, configured or deleted, by our outcome line; writes include the inventory and the lock):',
    '',
    '| scenario | floor | ours: writes / dry-runs / reads | ours in all | per object touched | above the floor |',
    '|---|---:|---:|---:|---:|---:|',
    ...lines,
    '',
  ].join('\n');
}

/**
 * Ours against kapp (issue 49's goals) and kubectl ApplySet, step by step, then peak RSS: each step's
 * median, the most of any step.
 */
function kappTable(rows: readonly Row[], res: SizeResult): string {
  const row = (t: string, s: string) => rows.find((r) => r.tool === t && r.scenario === s);
  if (!rows.some((r) => r.tool === KAPP || r.tool === KUBECTL)) return '';
  const lines = KAPP_GOALS.map(([s, goal]) => {
    const [o, k, c] = [row(OURS, s), row(KAPP, s), row(KUBECTL, s)];
    return `| ${s} | ${cell(o, 'wall')} | ${cell(k, 'wall')} | ${ratio(o?.wallMs, k?.wallMs)} | ≤ ${goal.toFixed(2)}× | ${cell(c, 'wall')} | ${ratio(o?.wallMs, c?.wallMs)} |`;
  });
  const peak = (t: string) => {
    const xs = rows.filter((r) => r.tool === t && r.peakRssMiB !== undefined).map((r) => r.peakRssMiB!);
    return xs.length === 0 ? undefined : Math.max(...xs);
  };
  const of = res.runs > 1 ? `medians of ${String(res.runs)} rounds, the tools interleaved` : 'one round';
  return [
    `Ours against \`kustomize build | kapp deploy\` and kubectl ApplySet, wall time (${of}; the goals are issue 49's):`,
    '',
    '| step | ours ms | kapp ms | ours/kapp | goal | kubectl ApplySet ms | ours/kubectl |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...lines,
    '',
    `Peak RSS, the most of any step: ours ${fmt(peak(OURS), 1)} MiB, kapp ${fmt(peak(KAPP), 1)} MiB (${ratio(peak(OURS), peak(KAPP))}), kubectl ApplySet ${fmt(peak(KUBECTL), 1)} MiB; the goal is ours ≤ ${String(RSS_GOAL_MIB)} MiB at 5,000 objects.`,
    '',
  ].join('\n');
}

/**
 * Whether our build ran in process or ran kustomize, from the wrapper's log of each run (every round):
 * kustomize builds per run, step by step.
 */
function buildLine(rows: readonly Row[], medians: readonly Row[]): string {
  const ours = rows.filter((r) => r.tool === OURS && r.kustomizeBuilds !== undefined);
  if (ours.length === 0) return '';
  const ran = ours.filter((r) => r.kustomizeBuilds! > 0);
  if (ran.length === 0) {
    return `Our build ran in process: none of our ${String(ours.length)} runs started kustomize.\n`;
  }
  const per = medians
    .filter((r) => r.tool === OURS && r.kustomizeBuilds !== undefined)
    .map((r) => `${r.scenario} ${fmt(r.kustomizeBuilds)}`)
    .join(', ');
  return `Our build ran kustomize: ${String(ran.length)} of our ${String(ours.length)} runs started it; \`kustomize build\` runs per run (median): ${per}.\n`;
}

/** repo80's goal: a no-op reconcile of the 80 Kustomizations in ≤ 10 s on 2 cores. */
function repo80Line(medians: readonly Row[], res: SizeResult): string {
  if (res.shape !== 'repo80') return '';
  const noop = medians.find((r) => r.tool === OURS && r.scenario === 'no-op re-run');
  const of = res.runs > 1 ? `median of ${String(res.runs)}` : 'one run';
  return `No-op reconcile of ${String(REPO80_CHILDREN + 1)} Kustomizations (${String(res.objects)} objects): ${fmt(noop?.wallMs)} ms (${of}) on ${String(os.cpus().length)} cores; the goal is ≤ ${String(REPO80_NOOP_GOAL_MS / 1000)} s on 2 cores.\n`;
}

export function sizeTables(res: SizeResult, peerNames: string[]): string {
  const medians = medianRows(res.rows);
  const row = (t: string, s: string) => medians.find((r) => r.tool === t && r.scenario === s);
  const tables = METRICS.map(({ metric, title, ratio: withRatio }) => {
    const lines = SCENARIOS.map((s) => {
      const o = row(OURS, s);
      const cells = [cell(o, metric)];
      for (const t of peerNames) {
        const q = row(t, s);
        const r = withRatio && o && q ? ratio(valueOf(o, metric), valueOf(q, metric)) : undefined;
        cells.push(r && r !== 'n/a' ? `${cell(q, metric)} (${r})` : cell(q, metric));
      }
      return `| ${s} | ${cells.join(' | ')} |`;
    });
    return [
      `${title}${res.runs > 1 ? `, medians of ${String(res.runs)} rounds` : ''}:`,
      '',
      `| ${['scenario', 'ours', ...peerNames].join(' | ')} |`,
      `|---|${'---:|'.repeat(1 + peerNames.length)}`,
      ...lines,
      '',
    ].join('\n');
  });
  const detail = [
    '| tool | scenario | round | exit | wall ms | apiserver / etcd / tool CPU ms | requests by method | by target | outcome |',
    '|---|---|---:|---:|---:|---|---|---|---|',
    ...res.rows.map(
      (r) =>
        `| ${r.tool} | ${r.scenario} | ${fmt(r.round)} | ${r.exitCode}${r.ok ? '' : ' ✗'} | ${r.wallMs} | ${fmt(r.apiserverCpuMs)} / ${fmt(r.etcdCpuMs)} / ${fmt(r.toolCpuMs)} | ${countsText(r.requestsByKind)} | ${countsText(r.requestsByTarget)} | ${(r.note ?? '').replaceAll('|', '\\|')} |`,
    ),
  ];
  return [
    `### ${SHAPE_TITLES[res.shape]}, ${res.objects} objects`,
    '',
    kappTable(medians, res),
    ...tables,
    buildLine(res.rows, medians),
    repo80Line(medians, res),
    floorTable(medians),
    `Action start-up (\`node dist/index.js\`, preview mode): first API request after ${fmt(res.startup.firstRequestMs)} ms on this tree (discovery starts before the kustomize build; run: exit ${res.startup.exitCode}, ${res.startup.wallMs} ms, ${res.startup.requests} requests), after ${fmt(res.startupTiny.firstRequestMs)} ms on a one-object tree (exit ${res.startupTiny.exitCode}, ${res.startupTiny.wallMs} ms).`,
    '',
    `Load average (1, 5, 15 min) when this size started: ${res.loadBefore.map((x) => x.toFixed(2)).join(', ')}; when it ended: ${res.loadAfter.map((x) => x.toFixed(2)).join(', ')}.`,
    '',
    '<details><summary>every run, requests by method</summary>',
    '',
    ...detail,
    '',
    '</details>',
    '',
    ...(res.profiles
      ? [
          `#### Profile of ${PROFILED} (\`--profile\`), ${res.shape}, ${res.objects} objects`,
          '',
          'The same scenarios on a tree of its own; the profiled process runs slower than the plain one above (compare their rows).',
          '',
          profileTables(res.profiles),
        ]
      : []),
  ].join('\n');
}
