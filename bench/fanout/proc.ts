// The processes bench/fanout.ts starts (the CLI's plan, apply and report): run under /usr/bin/time in
// an environment without GitHub Actions variables, each output line timed from the start, and kept
// in a set so that a signal or the end of the benchmark can kill what is still running.
import { spawn, type ChildProcess } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { readTimes, timed } from '../time.ts';

/** No single process may take longer than this (a fan-out job may wait for its dependencies). */
const PROC_TIMEOUT_MS = 20 * 60_000;

export interface Proc {
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

export const children = new Set<ChildProcess>();

/** The environment of the CLI: no GitHub Actions variables (a local run), no ambient kubeconfig. */
function cliEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('GITHUB_') && k !== 'KUBECONFIG'),
  );
}

export async function run(cmd: string, args: string[], cwd: string, rssFile: string): Promise<Proc> {
  const [program, argv] = timed(cmd, args, rssFile);
  const startedAt = performance.now();
  const child = spawn(program, argv, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: cliEnv() });
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
  const times = await readTimes(rssFile);
  await rm(rssFile, { force: true });
  return {
    code,
    startedAt,
    endedAt,
    lines,
    stdout,
    cpuMs: times.cpuMs,
    peakRssKiB: times.peakRssKiB,
  };
}

export const lastLine = (p: Proc) =>
  p.lines
    .map((l) => l.text)
    .filter((l) => l.trim() !== '')
    .pop() ?? '';
