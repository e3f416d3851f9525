// `bench/run.ts --profile`: our CLI run again, scenario by scenario, under `node --cpu-prof`, with the CLI's
// wall-time marks (KR_TIMINGS, src/util/timings.ts) and kustomize behind a wrapper that records its start,
// end and CPU; then the breakdown of each run (bench/breakdown.ts). The profiled bundle is built from src/
// with a source map into a temporary directory (scripts/bundle.mjs --sourcemap): the same code as a plain
// bundle, so that each sample can be put down to the source file it ran. See bench/README.md.
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { dirname, join, relative, resolve as resolvePath } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { TimingsFile } from '../src/util/timings.ts';
import {
  breakdownTable,
  cpuBreakdown,
  CPU_ORDER,
  wallSpans,
  WALL_ORDER,
  type Column,
  type CpuProfile,
  type Resolve,
} from './breakdown.ts';

/** One profiled run: its wall time and CPU by row, and where its CPU profile was written. */
export interface ScenarioProfile {
  scenario: string;
  wallMs: number;
  wall: Record<string, number>;
  /** Main-thread busy time by category (sampled), then the rest of the process tree's CPU. */
  cpu: Record<string, number>;
  cpuTotalMs: number;
  /** The main thread idle (waiting), ms, from the profile. */
  idleMs: number;
  /** The 15 source files with the most self time, ms. */
  topFiles: [string, number][];
  profile: string;
}

export interface Profiler {
  /** The bundled CLI with its source map. */
  cli: string;
  /** The kustomize wrapper to pass as --kustomize-path. */
  kustomize: string;
  /** Node's flags and the environment for the run of `scenario`. */
  run: (scenario: string) => { nodeArgs: string[]; env: NodeJS.ProcessEnv };
  /** Reads what the run of `scenario` left: `run` is the process as the benchmark measured it. */
  collect: (
    scenario: string,
    run: { spawnedAt: number; exitedAt: number; toolCpuMs: number | undefined },
  ) => Promise<ScenarioProfile>;
}

const slug = (s: string) => s.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '');

/**
 * Bundles the CLI with a source map into `dir`, writes the kustomize wrapper there, and returns the
 * profiler; each run's profile is moved to `profilesDir`.
 */
export async function startProfiler(
  repo: string,
  dir: string,
  kustomize: string,
  profilesDir: string,
): Promise<Profiler> {
  const dist = join(dir, 'dist');
  const built = spawnSync(process.execPath, [join(repo, 'scripts', 'bundle.mjs'), dist, '--sourcemap'], {
    cwd: repo,
    encoding: 'utf8',
  });
  if (built.status !== 0) throw new Error(`bundling with a source map failed: ${built.stderr}`);
  const cli = join(dist, 'cli.js');
  const resolve = resolver(repo, dist);
  // kustomize gets a reduced environment (src/kustomize/invoke.ts), so the wrapper has its file built in.
  // `times` in the shell itself (not a pipe or subshell) gives the CPU of the children it waited for.
  const log = join(dir, 'kustomize.log');
  const wrapper = join(dir, 'kustomize');
  await writeFile(
    wrapper,
    [
      '#!/bin/bash',
      's=$(date +%s%N)',
      `${JSON.stringify(kustomize)} "$@"`,
      'rc=$?',
      'e=$(date +%s%N)',
      `times > ${JSON.stringify(log)}.$$`,
      `{ read -r _; read -r cu cs; } < ${JSON.stringify(log)}.$$`,
      `rm -f ${JSON.stringify(log)}.$$`,
      `echo "$s $e $cu $cs" >> ${JSON.stringify(log)}`,
      'exit $rc',
      '',
    ].join('\n'),
  );
  await chmod(wrapper, 0o755);
  await mkdir(profilesDir, { recursive: true });
  const runDir = (s: string) => join(dir, 'runs', slug(s));
  return {
    cli,
    kustomize: wrapper,
    run: (s) => {
      mkdirSync(runDir(s), { recursive: true });
      rmSync(log, { force: true });
      return {
        nodeArgs: ['--cpu-prof', '--cpu-prof-dir', runDir(s)],
        env: { KR_TIMINGS: join(runDir(s), 'timings.json') },
      };
    },
    collect: async (s, run) => {
      const files = (await readdir(runDir(s))).filter((f) => f.endsWith('.cpuprofile'));
      if (files.length !== 1) throw new Error(`${runDir(s)}: expected one CPU profile, found ${files.length}`);
      const profileFile = join(profilesDir, `${slug(s)}.cpuprofile`);
      await rename(join(runDir(s), files[0]!), profileFile);
      const timings = JSON.parse(await readFile(join(runDir(s), 'timings.json'), 'utf8')) as TimingsFile;
      const kustomizeRuns = (await readFile(log, 'utf8').catch(() => ''))
        .trim()
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => {
          const [start = '0', end = '0', user = '', system = ''] = l.split(' ');
          return {
            start: Number(start) / 1e6,
            end: Number(end) / 1e6,
            cpuMs: shellSeconds(user) + shellSeconds(system),
          };
        });
      await rm(log, { force: true });
      const profile = JSON.parse(await readFile(profileFile, 'utf8')) as CpuProfile;
      return summarise(s, run, timings, kustomizeRuns, profile, resolve, relative(repo, profileFile));
    },
  };
}

/** `0m1.250s` (bash's `times`) in ms. */
function shellSeconds(text: string): number {
  const m = /^(\d+)m([\d.]+)s$/.exec(text);
  return m ? (Number(m[1]) * 60 + Number(m[2])) * 1000 : 0;
}

/**
 * Frames of the bundle (dist/cli.js and its chunks) through their source maps; others by URL; paths
 * relative to the repository.
 */
function resolver(repo: string, dist: string): Resolve {
  const prefix = pathToFileURL(dist).href + '/';
  const maps = new Map<string, SourceMap | undefined>();
  const mapOf = (file: string): SourceMap | undefined => {
    if (!maps.has(file)) {
      let map: SourceMap | undefined;
      try {
        map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')) as never);
      } catch {
        map = undefined;
      }
      maps.set(file, map);
    }
    return maps.get(file);
  };
  const tidy = (path: string) => {
    const rel = relative(repo, path);
    // node_modules may be a link to another checkout's.
    const i = rel.lastIndexOf('node_modules/');
    return i >= 0 ? rel.slice(i) : rel;
  };
  return (url, line, column) => {
    if (!url.startsWith('file://')) return url;
    const file = fileURLToPath(url);
    const map = url.startsWith(prefix) ? mapOf(file) : undefined;
    if (map === undefined) return tidy(file);
    const source = (map.findEntry(line, column) as { originalSource?: string }).originalSource;
    if (source === undefined) return undefined;
    return tidy(source.startsWith('file://') ? fileURLToPath(source) : resolvePath(dirname(file), source));
  };
}

function summarise(
  scenario: string,
  run: { spawnedAt: number; exitedAt: number; toolCpuMs: number | undefined },
  timings: TimingsFile,
  kustomize: { start: number; end: number; cpuMs: number }[],
  profile: CpuProfile,
  resolve: Resolve,
  profileFile: string,
): ScenarioProfile {
  // Only this run's kustomize processes.
  kustomize = kustomize.filter((k) => k.start >= run.spawnedAt && k.end <= run.exitedAt);
  const wall = wallSpans({ ...run, marks: timings.marks, kustomize });
  const toUs = (epochMs: number | undefined) =>
    epochMs === undefined ? undefined : timings.anchor.monotonicUs + (epochMs - timings.anchor.epochMs) * 1000;
  const at = (name: string) => timings.marks.find((m) => m.name === name)?.at;
  const mainUs = toUs(at('main'));
  const reconciledUs = toUs(at('reconciled'));
  // From each render phase's start to the first kustomize start after it.
  const beforeKustomize = timings.marks
    .filter((m) => m.name.endsWith('Render>'))
    .map((m): [number, number] => [m.at, kustomize.find((k) => k.start >= m.at)?.start ?? m.at])
    .map(([from, to]): [number, number] => [toUs(from)!, toUs(to)!]);
  const b = cpuBreakdown(profile, resolve, {
    ...(mainUs !== undefined ? { mainUs } : {}),
    ...(reconciledUs !== undefined ? { reconciledUs } : {}),
    beforeKustomize,
  });
  const sampled = [...b.byCategory.values()].reduce((a, c) => a + c, 0);
  const processCpu = timings.cpuMs.user + timings.cpuMs.system;
  const kustomizeCpu = kustomize.reduce((a, k) => a + k.cpuMs, 0);
  const cpu = new Map(b.byCategory);
  cpu.set(NOT_SAMPLED, processCpu - sampled);
  cpu.set(KUSTOMIZE_CPU, kustomizeCpu);
  const total = run.toolCpuMs ?? processCpu + kustomizeCpu;
  if (run.toolCpuMs !== undefined) cpu.set(OTHER_CHILDREN, run.toolCpuMs - processCpu - kustomizeCpu);
  return {
    scenario,
    wallMs: run.exitedAt - run.spawnedAt,
    wall: rounded(wall),
    cpu: rounded(cpu),
    cpuTotalMs: total,
    idleMs: b.idleMs,
    topFiles: [...b.bySelfFile]
      .sort((x, y) => y[1] - x[1])
      .slice(0, 15)
      .map(([f, ms]) => [f, Math.round(ms)]),
    profile: profileFile,
  };
}

const rounded = (m: Map<string, number>) => Object.fromEntries([...m].map(([k, v]) => [k, Math.round(v * 10) / 10]));

const NOT_SAMPLED = "our process's CPU minus the main thread's busy samples (other threads, kernel; < 0: busy off-CPU)";
const KUSTOMIZE_CPU = 'kustomize (child process)';
const OTHER_CHILDREN = 'other child processes (git, the wrapper)';

/** The two breakdown tables (wall time, CPU) over the scenarios, and each run's busiest source files. */
export function profileTables(profiles: readonly ScenarioProfile[]): string {
  const wall: Column[] = profiles.map((p) => ({
    title: p.scenario,
    values: new Map(Object.entries(p.wall)),
    total: p.wallMs,
  }));
  const cpu: Column[] = profiles.map((p) => ({
    title: p.scenario,
    values: new Map(Object.entries(p.cpu)),
    total: p.cpuTotalMs,
  }));
  return [
    "Wall time, ms (% of the run), process start to exit, cut at the CLI's marks and kustomize's start and end:",
    '',
    breakdownTable('span', WALL_ORDER, wall),
    '',
    "CPU, ms (% of the process tree's CPU, `/usr/bin/time`): our main thread's busy time from its CPU profile by what ran (the innermost frame of ours in the stack), then the rest of our process and its children:",
    '',
    breakdownTable('category', [...CPU_ORDER, NOT_SAMPLED, KUSTOMIZE_CPU, OTHER_CHILDREN], cpu),
    '',
    '<details><summary>busiest source files (self time, ms), per run</summary>',
    '',
    ...profiles.flatMap((p) => [
      `- ${p.scenario} (\`${p.profile}\`; main thread idle ${Math.round(p.idleMs)} ms): ${p.topFiles.map(([f, ms]) => `${f} ${ms}`).join(', ')}`,
    ]),
    '',
    '</details>',
    '',
  ].join('\n');
}
