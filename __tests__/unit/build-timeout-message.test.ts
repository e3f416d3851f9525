// A build stopped by build-timeout says what to set when a big tree needs longer: the action's
// input and the CLI's flag, with a value that is longer (src/kustomize/invoke.ts timeoutAdvice).
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatMs, runKustomize, timeoutAdvice } from '../../src/kustomize/invoke.js';
import { UserError } from '../../src/util/user-error.js';

describe('formatMs', () => {
  it.each<[number, string]>([
    [200, '200ms'],
    [0.2, '1ms'],
    [1000, '1s'],
    [90_000, '1m30s'],
    [300_000, '5m'],
    [600_000, '10m'],
  ])('%d ms is %s', (ms, text) => {
    expect(formatMs(ms)).toBe(text);
  });
});

describe('timeoutAdvice', () => {
  it.each<[number, string, string]>([
    [300_000, '5m', '10m'],
    [1000, '1s', '2s'],
    [90_000, '1m30s', '3m'],
  ])('stopped after %d ms: names the bound and both ways to double it', (ms, bound, longer) => {
    expect(timeoutAdvice(ms)).toBe(
      `did not finish within ${bound} and was stopped; if the tree is big and needs longer, ` +
        `set the action's input build-timeout (build-timeout: ${longer}) or the CLI's flag --build-timeout ${longer}; ` +
        'a build that never finishes (a remote base that does not answer, a plugin that waits) needs its tree fixed instead',
    );
  });
});

describe('runKustomize stopped by the time bound', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kr-timeout-msg-'));
    await writeFile(join(dir, 'kustomize'), '#!/bin/sh\nexec sleep 30\n');
    await chmod(join(dir, 'kustomize'), 0o755);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('is a UserError that says what to set', async () => {
    const run = runKustomize(
      join(dir, 'kustomize'),
      join(dir, 'app'),
      dir,
      { PATH: process.env['PATH'] ?? '' },
      { timeoutMs: 300, memoryBytes: 2 * 1024 ** 3 },
      new Map(),
    );
    await expect(run).rejects.toBeInstanceOf(UserError);
    await expect(run).rejects.toThrow(`kustomize build app ${timeoutAdvice(300)}`);
  });
});
