// Scratch directories (src/util/scratch.ts) are removed when the process ends without removing
// them: on exit, and on SIGINT or SIGTERM (a cancelled run), after which the process still ends by
// that signal. Each case runs in a child Node process that imports the module (bundled: it imports
// util/lifecycle.ts, which handles the signals).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
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
  temp = await mkdtemp(join(tmpdir(), 'kr-scratch-test-'));
  MODULE = await bundledModule('util/scratch.ts');
});
afterAll(async () => {
  await rm(temp, { recursive: true, force: true });
});

/**
 * Runs `body` (module code with `scratchDir` in scope) with RUNNER_TEMP at a new directory; once the
 * child prints READY, `signal` is sent to it. Resolves with how it ended and what RUNNER_TEMP holds.
 */
async function child(body: string, signal?: NodeJS.Signals) {
  const runnerTemp = await mkdtemp(join(temp, 'rt-'));
  const script = `const { scratchDir } = await import(${JSON.stringify(MODULE)});\n${body}`;
  const proc = spawn(NODE, ['--input-type=module', '-e', script], {
    env: { ...process.env, RUNNER_TEMP: runnerTemp },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
  proc.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    if (signal !== undefined && out.includes('READY')) proc.kill(signal);
  });
  const [code, sig] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    proc.on('close', (c, s) => {
      resolve([c, s]);
    }),
  );
  return { code, signal: sig, out, err, left: await readdir(runnerTemp) };
}

const MADE = `
const a = await scratchDir('kr-a-');
const b = await scratchDir('kr-b-');
(await import('node:fs')).writeFileSync(a.dir + '/file', 'x');
`;

describe('scratchDir', () => {
  it.each<[NodeJS.Signals]>([['SIGTERM'], ['SIGINT']])(
    'a process killed by %s leaves no scratch directory, and ends by that signal',
    async (sig) => {
      const run = await child(`${MADE}console.log('READY'); setInterval(() => {}, 1000);`, sig);
      expect(run.err).not.toMatch(/Error/);
      expect(run.signal).toBe(sig);
      expect(run.left).toEqual([]);
    },
  );

  it('a process that exits leaves no scratch directory, with its exit code', async () => {
    const run = await child(`${MADE}process.exit(3);`);
    expect([run.code, run.left]).toEqual([3, []]);
  });

  it('a process that ends on its own leaves none either', async () => {
    const run = await child(MADE);
    expect([run.code, run.left]).toEqual([0, []]);
  });

  it('remove() removes the directory and forgets it: what is made there later is left alone', async () => {
    const run = await child(`${MADE}await a.remove(); (await import('node:fs')).mkdirSync(a.dir);`);
    expect(run.code).toBe(0);
    // b was removed at exit; a's path, made again after remove(), was not scratch's to remove.
    expect(run.left).toHaveLength(1);
    expect(run.left[0]).toMatch(/^kr-a-/);
  });

  it('in this process: remove() removes it', async () => {
    const { scratchDir } = await import('../../src/util/scratch.js');
    const s = await scratchDir('kr-here-');
    mkdirSync(join(s.dir, 'sub'));
    expect(existsSync(s.dir)).toBe(true);
    await s.remove();
    expect(existsSync(s.dir)).toBe(false);
  });
});
