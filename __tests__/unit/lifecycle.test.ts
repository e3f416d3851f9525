// What a run starts does not outlive it (src/util/lifecycle.ts): tracked children (a process group
// of their own, or a child with descendants in this process's group) are killed on SIGINT, SIGTERM,
// SIGHUP and on exit; the signal's cleanup hooks run before the process ends by that signal; a
// child that finished is forgotten. Each case runs in a child Node process importing the bundled module.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE } from '../helpers/paths.js';
import { heavyFile } from '../helpers/heavy.js';
import { bundledModule } from '../helpers/module-bundle.js';

heavyFile();

let MODULE: string;
let temp: string;
beforeAll(async () => {
  temp = await mkdtemp(join(tmpdir(), 'kr-lifecycle-test-'));
  MODULE = await bundledModule('util/lifecycle.ts');
});
afterAll(async () => {
  await rm(temp, { recursive: true, force: true });
});

/** Whether `pid` runs (a zombie, killed and not reaped yet, does not). */
const alive = (pid: number) => {
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

/**
 * Starts a child that tracks a detached `sleep` (its own group, with a grandchild) and a
 * `sh -c 'sleep & wait'` in its own group (the grandchild found as a descendant), registers a
 * hook that writes `hooked`, prints the pids, then runs `then`. `signal` is sent once it printed.
 */
async function child(then: string, signal?: NodeJS.Signals) {
  const dir = await mkdtemp(join(temp, 'run-'));
  const script = `
const { trackChild, onSignalCleanup, onExitCleanup, trackedChildren } = await import(${JSON.stringify(MODULE)});
const { spawn } = await import('node:child_process');
const { writeFileSync } = await import('node:fs');
const group = spawn('sh', ['-c', 'sleep 300 & echo $!; wait'], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
trackChild(group, true);
const plain = spawn('sh', ['-c', 'sleep 300 & echo $!; wait'], { stdio: ['ignore', 'pipe', 'ignore'] });
trackChild(plain, false);
const first = (c) => new Promise((r) => c.stdout.once('data', (d) => r(Number(String(d).trim()))));
const grand = [await first(group), await first(plain)];
onSignalCleanup(async () => { await new Promise((r) => setTimeout(r, 50)); writeFileSync(${JSON.stringify(join(dir, 'hooked'))}, 'yes'); });
onExitCleanup(() => writeFileSync(${JSON.stringify(join(dir, 'exited'))}, 'yes'));
console.log('PIDS ' + JSON.stringify([group.pid, plain.pid, ...grand]));
console.log('TRACKED ' + JSON.stringify(trackedChildren()));
${then}`;
  const proc = spawn(NODE, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
  proc.stdout.on('data', (d: Buffer) => {
    const had = out.includes('TRACKED');
    out += d.toString();
    if (signal !== undefined && !had && out.includes('TRACKED')) proc.kill(signal);
  });
  const [code, sig] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    proc.on('close', (c, s) => {
      resolve([c, s]);
    }),
  );
  const pids = JSON.parse(/PIDS (.*)/.exec(out)?.[1] ?? '[]') as number[];
  const tracked = JSON.parse(/TRACKED (.*)/.exec(out)?.[1] ?? '[]') as number[];
  const said = async (f: string) => (await readFile(join(dir, f), 'utf8').catch(() => '')) === 'yes';
  return { code, signal: sig, out, err, pids, tracked, hooked: await said('hooked'), exited: await said('exited') };
}

/** Waits until none of `pids` is alive (killed processes are reaped by init); false if some stay. */
async function allGone(pids: number[]): Promise<boolean> {
  for (let i = 0; i < 200; i++) {
    if (pids.every((p) => !alive(p))) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

const KEEP_RUNNING = 'setInterval(() => {}, 1000);';

describe('lifecycle', () => {
  it.each<[NodeJS.Signals]>([['SIGTERM'], ['SIGINT'], ['SIGHUP']])(
    '%s kills every tracked child with what it started, runs the hooks, and ends the process by that signal',
    async (sig) => {
      const run = await child(KEEP_RUNNING, sig);
      expect(run.err).toBe('');
      expect(run.pids).toHaveLength(4);
      expect(run.tracked.sort()).toEqual(run.pids.slice(0, 2).sort());
      expect([run.signal, run.hooked, run.exited]).toEqual([sig, true, true]);
      expect(await allGone(run.pids)).toBe(true);
    },
  );

  it('process.exit kills every tracked child; the signal hooks do not run', async () => {
    const run = await child('process.exit(3);');
    expect([run.code, run.hooked, run.exited]).toEqual([3, false, true]);
    expect(await allGone(run.pids)).toBe(true);
  });

  it('an uncaught error kills them too', async () => {
    const run = await child("setTimeout(() => { throw new Error('boom'); }, 10);" + KEEP_RUNNING);
    expect(run.code).toBe(1);
    expect(run.err).toContain('boom');
    expect(await allGone(run.pids)).toBe(true);
  });

  it('a child that finished is forgotten: its pid is not killed later', async () => {
    const run = await child(`
const done = spawn('true', [], { detached: true, stdio: 'ignore' });
trackChild(done, true);
await new Promise((r) => done.on('close', r));
console.log('AFTER ' + JSON.stringify(trackedChildren().includes(done.pid)));
process.exit(0);`);
    expect(run.out).toContain('AFTER false');
    expect(await allGone(run.pids)).toBe(true);
  });
});
