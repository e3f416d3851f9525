// Runs the engine from the sources in a child process (see reconcile-child.ts): bundled once per
// test process with esbuild, the way scripts/bundle.mjs bundles the CLI.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import type { Report } from '../../src/report/model.js';
import type { OptionValues } from '../../src/options/settings.js';
import { NODE, REPO } from './paths.js';

let bundled: Promise<string> | undefined;

function bundle(): Promise<string> {
  bundled ??= (async () => {
    const out = join(await mkdtemp(join(tmpdir(), 'kr-child-')), 'reconcile-child.mjs');
    await build({
      entryPoints: [join(REPO, '__tests__', 'helpers', 'reconcile-child.ts')],
      bundle: true,
      platform: 'node',
      target: 'node24',
      format: 'esm',
      outfile: out,
      banner: {
        js: "import { createRequire as __krRequire } from 'node:module'; const require = __krRequire(import.meta.url);",
      },
      external: ['bufferutil', 'utf-8-validate'],
      logLevel: 'warning',
    });
    return out;
  })();
  return bundled;
}

export interface ChildRun {
  process: ChildProcess;
  /** Every line printed so far. */
  lines: string[];
  /** The exit code and the run's report (undefined when it printed none). */
  exited: Promise<{ code: number; report?: Report; stderr: string }>;
}

export async function startReconcileChild(raw: OptionValues): Promise<ChildRun> {
  const script = await bundle();
  const child = spawn(NODE, [script, JSON.stringify(raw)], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let partial = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    const parts = (partial + d.toString()).split('\n');
    partial = parts.pop() ?? '';
    lines.push(...parts);
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<{ code: number; report?: Report; stderr: string }>((resolve) => {
    child.on('close', (code) => {
      if (partial) lines.push(partial);
      const last = lines.find((l) => l.startsWith('REPORT '));
      resolve({
        code: code ?? 1,
        ...(last ? { report: JSON.parse(last.slice('REPORT '.length)) as Report } : {}),
        stderr,
      });
    });
  });
  return { process: child, lines, exited };
}

/** Resolves once the process `pid` is stopped (state T in /proc/PID/stat), as after SIGSTOP. */
export async function stopped(pid: number): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // pid (comm) state ...: the state follows the last ')'.
    if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('T')) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`process ${pid} did not stop after SIGSTOP`);
}
