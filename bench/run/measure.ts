// One run of a tool as bench/run.ts measures it: a CLI spawned in the work directory (under
// /usr/bin/time for its peak RSS and CPU) with the counting proxy reset at its start, its wall time
// and the time to its first API request; a controller's peak RSS read from /proc; the last line of
// an output, for the tools' outcome notes.
import { spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { CountingProxy } from '../common.ts';
import { readTimes, timed } from '../time.ts';

/** No single run may take longer than this (--run-timeout; flux.ts reads it live). */
export let RUN_TIMEOUT_MS = 300_000;

export function setRunTimeout(ms: number): void {
  RUN_TIMEOUT_MS = ms;
}

export interface ProcRun {
  code: number;
  wallMs: number;
  /** From process start to the proxy's first request. */
  firstRequestMs: number | undefined;
  peakRssKiB: number | undefined;
  /** The tool's own CPU time (user + system), ms: the process's, or a controller's during the run. */
  cpuMs: number | undefined;
  stdout: string;
  stderr: string;
  /** ms since the epoch when the process was spawned and seen to exit (a CLI). */
  spawnedAt?: number;
  exitedAt?: number;
}

/** ms since the epoch, on the monotonic clock performance.now() keeps (as src/util/timings.ts stamps). */
const epochNow = () => performance.timeOrigin + performance.now();

export async function runMeasured(
  proxy: CountingProxy,
  workDir: string,
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<ProcRun> {
  const rssFile = join(workDir, 'rss.txt');
  await rm(rssFile, { force: true });
  const [program, argv] = timed(cmd, args, rssFile);
  proxy.reset();
  const started = performance.now();
  const spawnedAt = epochNow();
  const child = spawn(program, argv, {
    cwd: workDir,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
  const code = await new Promise<number>((resolve) => {
    child.once('close', (c) => {
      resolve(c ?? 1);
    });
  });
  clearTimeout(timer);
  const exitedAt = epochNow();
  const wallMs = performance.now() - started;
  const first = proxy.firstRequestAt();
  const times = await readTimes(rssFile);
  return {
    code,
    wallMs,
    firstRequestMs: first === undefined ? undefined : first - started,
    peakRssKiB: times.peakRssKiB,
    cpuMs: times.cpuMs,
    stdout,
    stderr,
    spawnedAt,
    exitedAt,
  };
}

/** Peak resident set of a running process so far (VmHWM), KiB. */
export async function peakRssKiBOf(pid: number): Promise<number | undefined> {
  const status = await readFile(`/proc/${String(pid)}/status`, 'utf8').catch(() => '');
  const kib = Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1]);
  return Number.isFinite(kib) && kib > 0 ? kib : undefined;
}

export function lastLine(text: string): string {
  return (
    text
      .trim()
      .split('\n')
      .filter((l) => l.trim() !== '')
      .pop() ?? ''
  ).slice(0, 200);
}
