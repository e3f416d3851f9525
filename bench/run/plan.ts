// `plan` on repo80 (bench/run/repo80.ts), no cluster: the CLI's `plan` of the whole tree, then
// `plan --base` for three changes, each its own commit of a git repository made from the tree (an app's
// image, the parent's patch, the shared component): wall time, CPU, peak RSS (medians of --runs) and
// how many Kustomizations the plan marks affected, beside how many a build that follows what
// kustomize reads would mark. bench/run.ts runs it with repo80; it asserts nothing.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { CLI, KUSTOMIZE, NODE, REPO } from '../paths.ts';
import { readTimes, timed } from '../time.ts';
import { lastLine } from './measure.ts';
import { median } from './median.ts';
import { REPO80_CHILDREN, REPO80_KUSTOMIZATIONS, repo80PlanChanges, writeRepo80 } from './repo80.ts';
import { fmt } from './tables.ts';

/** One run of `plan`. */
export interface PlanRun {
  exitCode: number;
  wallMs: number;
  cpuMs: number | undefined;
  peakRssMiB: number | undefined;
  /** The matrix's entries (`count`) of all the plan read; undefined when it printed no plan. */
  affected: number | undefined;
  of: number | undefined;
  /** The plan's reason for marking everything, if it gave one; the error's last line if it failed. */
  note?: string;
  /** The affected ids (the first run of each step keeps them). */
  ids?: string[];
}

/** One step: the whole plan, or a change planned with --base; the figures are medians of its runs. */
export interface PlanStep {
  step: string;
  command: string;
  /** The change's file and commit range (a change only). */
  file?: string;
  range?: string;
  /** What a build that follows what kustomize reads would mark, and why (a change only). */
  expected?: number;
  why?: string;
  runs: PlanRun[];
  wallMs: number | undefined;
  cpuMs: number | undefined;
  peakRssMiB: number | undefined;
}

export interface PlanResult {
  kustomizations: number;
  objects: number;
  rounds: number;
  steps: PlanStep[];
  loadBefore: number[];
  loadAfter: number[];
}

function git(dir: string, ...args: string[]): string {
  const r = spawnSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@example.com', ...args], {
    cwd: dir,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

async function planOnce(dir: string, extra: string[], rssFile: string): Promise<PlanRun> {
  await rm(rssFile, { force: true });
  // The pinned kustomize, as a runner has one on PATH: a parent's build at the base and the head needs it.
  const args = [
    CLI,
    'plan',
    '--root',
    dir,
    '--kustomizations',
    REPO80_KUSTOMIZATIONS,
    '--kustomize-path',
    KUSTOMIZE,
    '--output',
    'json',
    ...extra,
  ];
  const [program, argv] = timed(NODE, args, rssFile);
  const started = performance.now();
  const child = spawn(program, argv, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exitCode = await new Promise<number>((resolve) =>
    child.once('close', (c) => {
      resolve(c ?? 1);
    }),
  );
  const wallMs = Math.round(performance.now() - started);
  const times = await readTimes(rssFile);
  const run: PlanRun = {
    exitCode,
    wallMs,
    cpuMs: times.cpuMs === undefined ? undefined : Math.round(times.cpuMs),
    peakRssMiB: times.peakRssKiB === undefined ? undefined : Math.round((times.peakRssKiB / 1024) * 10) / 10,
    affected: undefined,
    of: undefined,
  };
  try {
    const plan = JSON.parse(stdout) as {
      count: number;
      all: string[];
      affected: string[];
      allAffectedBecause?: string;
    };
    return {
      ...run,
      affected: plan.count,
      of: plan.all.length,
      ids: plan.affected,
      ...(plan.allAffectedBecause ? { note: plan.allAffectedBecause } : {}),
    };
  } catch {
    return { ...run, note: `error: ${lastLine(stderr || stdout)}` };
  }
}

function step(base: Omit<PlanStep, 'wallMs' | 'cpuMs' | 'peakRssMiB'>): PlanStep {
  const runs = base.runs.map((r, i) => (i === 0 ? r : { ...r, ids: undefined }));
  return {
    ...base,
    runs,
    wallMs: median(runs.map((r) => r.wallMs)),
    cpuMs: median(runs.map((r) => r.cpuMs)),
    peakRssMiB: median(runs.map((r) => r.peakRssMiB)),
  };
}

/** The plan steps on a fresh repo80 tree, each run `rounds` times. */
export async function benchPlan(rounds: number): Promise<PlanResult> {
  const work = await mkdtemp(join(os.tmpdir(), 'kr-bench-plan-'));
  const loadBefore = os.loadavg();
  try {
    const dir = join(work, 'repo');
    const tree = await writeRepo80(dir, 'kr', 40);
    git(dir, 'init', '-q', '-b', 'main');
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'repo80');
    const rss = join(work, 'rss.txt');
    const runs = async (extra: string[]) => {
      const out: PlanRun[] = [];
      for (let i = 0; i < rounds; i++) out.push(await planOnce(dir, extra, rss));
      return out;
    };
    process.stderr.write(
      `\n== plan of repo80 (${String(REPO80_CHILDREN + 1)} Kustomizations), ${String(rounds)} runs a step\n`,
    );
    const steps: PlanStep[] = [
      step({ step: 'plan (no base): every Kustomization', command: 'plan', runs: await runs([]) }),
    ];
    for (const change of repo80PlanChanges()) {
      await change.edit(dir);
      git(dir, 'add', '-A');
      git(dir, 'commit', '-q', '-m', change.name);
      const [base, head] = [git(dir, 'rev-parse', '--short', 'HEAD~1'), git(dir, 'rev-parse', '--short', 'HEAD')];
      steps.push(
        step({
          step: change.name,
          command: `plan --base ${base} --head ${head}`,
          file: change.file,
          range: `${base}...${head}`,
          expected: change.expected,
          why: change.why,
          runs: await runs(['--base', base, '--head', head]),
        }),
      );
    }
    for (const s of steps) {
      const r = s.runs[0]!;
      process.stderr.write(
        `${s.step}: ${fmt(s.wallMs)} ms, ${fmt(r.affected)} of ${fmt(r.of)} affected${s.expected === undefined ? '' : ` (expected ${String(s.expected)})`}${r.note ? `; ${r.note}` : ''}\n`,
      );
    }
    return {
      kustomizations: REPO80_CHILDREN + 1,
      objects: tree.objects,
      rounds,
      steps,
      loadBefore,
      loadAfter: os.loadavg(),
    };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** The Markdown of the plan figures. */
export function planTables(res: PlanResult): string {
  const cell = (s: PlanStep) => {
    const counts = [
      ...new Set(s.runs.map((r) => (r.affected === undefined ? 'n/a' : `${String(r.affected)} of ${fmt(r.of)}`))),
    ];
    return counts.join(' / ');
  };
  const failed = (s: PlanStep) => s.runs.some((r) => r.exitCode !== 0);
  return [
    `### \`plan\` of the parent and its ${String(REPO80_CHILDREN)} children (no cluster), ${String(res.objects)} objects`,
    '',
    `\`node ${CLI.replace(REPO, '')} plan --root TREE --kustomizations '${REPO80_KUSTOMIZATIONS}' --output json\`, run in a git repository made from the repo80 tree; each change below is its own commit, planned with \`--base\` its parent commit. Wall time, CPU (user + system, \`/usr/bin/time\`) and peak RSS are medians of ${res.rounds === 1 ? 'one run' : `${String(res.rounds)} runs`}; "affected" is the plan's \`count\` of all its entries (\`all\`), "expected" how many a plan that follows what each build reads would mark (the Kustomizations whose build reads the file, and their dependents).`,
    '',
    '| step | command | wall ms | CPU ms | peak RSS MiB | affected | expected |',
    '|---|---|---:|---:|---:|---|---:|',
    ...res.steps.map(
      (s) =>
        `| ${s.step} | \`${s.command}\` | ${fmt(s.wallMs)}${failed(s) ? ' ✗' : ''} | ${fmt(s.cpuMs)} | ${fmt(s.peakRssMiB, 1)} | ${cell(s)} | ${s.expected === undefined ? '' : `${String(s.expected)}: ${s.why ?? ''}`} |`,
    ),
    '',
    ...res.steps.flatMap((s) => {
      const r = s.runs[0]!;
      return r.note ? [`- ${s.step}: ${r.note.replaceAll('|', '\\|')}`] : [];
    }),
    `Load average (1, 5, 15 min) when the plan steps started: ${res.loadBefore.map((x) => x.toFixed(2)).join(', ')}; when they ended: ${res.loadAfter.map((x) => x.toFixed(2)).join(', ')}.`,
    '',
  ].join('\n');
}
