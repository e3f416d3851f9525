// The Markdown bench/run.ts prints for one size: a table per metric (ours beside each peer, with the
// ratio where it means something), our requests against the floor of one per object touched, the
// action's start-up, the load averages, every run's requests by method, and the profile if any.
import { profileTables } from '../profile.ts';
import { OURS, PROFILED, SCENARIOS, type Row, type SizeResult } from './model.ts';
import { MONOREPO_UNITS, type Shape } from './tree.ts';

const SHAPE_TITLES: Record<Shape, string> = {
  plain: 'Plain directory',
  overlay: 'Overlay over a base (kustomization.yaml: namespace, labels, two JSON patches)',
  monorepo: `Flux monorepo (${String(MONOREPO_UNITS)} Kustomizations in 3 dependsOn levels, each an overlay over a shared base)`,
};

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
function floorTable(res: SizeResult): string {
  const lines = SCENARIOS.map((s) => {
    const r = res.rows.find((x) => x.tool === OURS && x.scenario === s);
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

export function sizeTables(res: SizeResult, peerNames: string[]): string {
  const row = (t: string, s: string) => res.rows.find((r) => r.tool === t && r.scenario === s);
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
      `${title}:`,
      '',
      `| scenario | ours | ${peerNames.join(' | ')} |`,
      `|---|${'---:|'.repeat(1 + peerNames.length)}`,
      ...lines,
      '',
    ].join('\n');
  });
  const detail = [
    '| tool | scenario | exit | wall ms | apiserver / etcd / tool CPU ms | requests by method | by target | outcome |',
    '|---|---|---:|---:|---|---|---|---|',
    ...res.rows.map(
      (r) =>
        `| ${r.tool} | ${r.scenario} | ${r.exitCode}${r.ok ? '' : ' ✗'} | ${r.wallMs} | ${fmt(r.apiserverCpuMs)} / ${fmt(r.etcdCpuMs)} / ${fmt(r.toolCpuMs)} | ${countsText(r.requestsByKind)} | ${countsText(r.requestsByTarget)} | ${(r.note ?? '').replaceAll('|', '\\|')} |`,
    ),
  ];
  return [
    `### ${SHAPE_TITLES[res.shape]}, ${res.objects} objects`,
    '',
    ...tables,
    floorTable(res),
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
