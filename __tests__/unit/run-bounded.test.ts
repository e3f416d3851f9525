import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { cutStderr, parseBytes, runBounded } from '../../src/kustomize/run.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

const node = process.execPath;
const env = { PATH: process.env['PATH'] ?? '' };
const limits = { timeoutMs: 60_000, memoryBytes: 2 * 1024 ** 3 };
const alive = async (pid: number) => {
  // A zombie (reaped later by init) is as gone as a missing process.
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  return stat !== undefined && !/^\d+ \(.*\) Z /.test(stat);
};

// A Go runtime dump as kustomize prints it on a stack overflow (shortened from a real one).
const GO_DUMP = [
  'runtime: goroutine stack exceeds 1000000000-byte limit',
  'runtime: sp=0xc0200e0390 stack=[0xc0200e0000, 0xc0400e0000]',
  'fatal error: stack overflow',
  '',
  'runtime stack:',
  'runtime.throw({0x1a2b3c4, 0xe})',
  '\t/usr/local/go/src/runtime/panic.go:1047 +0x5d fp=0x7ffd sp=0x7ffd pc=0x43a5fd',
  '',
  'goroutine 1 [running]:',
  ...Array.from({ length: 250 }, (_, i) => `sigs.k8s.io/kustomize/kyaml/yaml.walk(${i})\n\t/go/pkg/mod/walk.go:${i}`),
].join('\n');

describe('cutStderr', () => {
  it.each([
    {
      why: 'a short message stays',
      text: 'Error: accumulating resources: x\n',
      want: 'Error: accumulating resources: x',
    },
    {
      why: 'a Go runtime dump keeps the cause and counts the rest',
      text: GO_DUMP,
      want: /^runtime: goroutine stack exceeds 1000000000-byte limit\nruntime: sp=.*\nfatal error: stack overflow\n\(\d+ more lines left out\)$/,
    },
    {
      why: 'a panic keeps the panic line',
      text: 'panic: runtime error: index out of range [3] with length 3\n\ngoroutine 1 [running]:\nmain.f()\n\t/x.go:1\n',
      want: /^panic: runtime error: index out of range \[3\] with length 3\n\(4 more lines left out\)$/,
    },
    {
      why: 'many lines are cut to 20 with a count',
      text: Array.from({ length: 100 }, (_, i) => `line ${i}`).join('\n'),
      want: /^line 0\n[\s\S]*line 19\n\(80 more lines left out\)$/,
    },
    {
      why: 'one 4 MB line is cut with a count',
      text: `Error: ${'x'.repeat(4_000_000)}`,
      want: /^Error: x+…\n\(3999507 more characters in long lines left out\)$/,
    },
  ])('$why', ({ text, want }) => {
    const out = cutStderr(text);
    if (typeof want === 'string') expect(out).toBe(want);
    else expect(out).toMatch(want);
    expect(out.length).toBeLessThan(12_000);
    expect(out).not.toMatch(/goroutine \d+ \[/);
  });
});

describe('parseBytes', () => {
  it.each([
    ['2Gi', 2 * 1024 ** 3],
    ['512Mi', 512 * 1024 ** 2],
    ['1.5Gi', 1.5 * 1024 ** 3],
    ['1G', 1e9],
    ['1048576', 1048576],
    ['0', undefined],
    ['lots', undefined],
    ['-1Gi', undefined],
  ])('%s → %s', (text, want) => {
    expect(parseBytes(text)).toBe(want);
  });
});

describe('runBounded', () => {
  it('returns the output of a process that ends', async () => {
    const r = await runBounded(
      node,
      ['-e', 'process.stdout.write("out"); process.stderr.write("err"); process.exit(3)'],
      {
        env,
        limits,
        maxOutputBytes: 1024,
      },
    );
    expect(r).toMatchObject({ stdout: 'out', stderr: 'err', code: 3 });
    expect(r.stopped).toBeUndefined();
  });

  it('stops a process that never ends, and what it started', async () => {
    const script =
      'const c = require("child_process").spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });' +
      'process.stdout.write(String(c.pid) + "\\n"); setInterval(() => {}, 1000);';
    const r = await runBounded(node, ['-e', script], {
      env,
      limits: { ...limits, timeoutMs: 1500 },
      maxOutputBytes: 1024,
    });
    expect(r.stopped).toBe('timeout');
    expect(r.signal).toBe('SIGKILL');
    const grandchild = Number(r.stdout.trim());
    expect(grandchild).toBeGreaterThan(0);
    await expect.poll(() => alive(grandchild), { timeout: 60_000 }).toBe(false);
  });

  it.runIf(process.platform === 'linux')('stops a process whose memory grows past the bound', async () => {
    const script = 'const a = []; setInterval(() => { a.push(Buffer.alloc(32 * 1024 * 1024, 1)); }, 20);';
    const r = await runBounded(node, ['-e', script], {
      env,
      limits: { timeoutMs: 60_000, memoryBytes: 300 * 1024 ** 2 },
      maxOutputBytes: 1024,
    });
    expect(r.stopped).toBe('memory');
    expect(r.peakBytes).toBeGreaterThan(300 * 1024 ** 2);
  });

  it('stops a process that prints more than the output bound', async () => {
    const r = await runBounded(node, ['-e', 'setInterval(() => process.stdout.write("x".repeat(65536)), 1)'], {
      env,
      limits,
      maxOutputBytes: 1024 * 1024,
    });
    expect(r.stopped).toBe('output');
  });

  it('keeps a bounded head of a huge stderr and counts the rest', async () => {
    const r = await runBounded(node, ['-e', 'process.stderr.write("e".repeat(4 * 1024 * 1024))'], {
      env,
      limits,
      maxOutputBytes: 1024,
    });
    expect(r.stderr.length).toBe(256 * 1024);
    expect(r.stderrDropped).toBe(4 * 1024 * 1024 - 256 * 1024);
  });
});
