// The run's kustomize outputs by the hash of their input (src/kustomize/cache.ts BuildMemo,
// outputOf): the same key asked for by several builds, at once or one after another, runs kustomize
// once; a failed build, or an output that names its temporary copy, is not shared.
import { describe, expect, it } from 'vitest';
import { BuildMemo, outputOf } from '../../src/kustomize/cache.js';

type Result = string | Error;

describe('outputOf with a BuildMemo', () => {
  it.each<[string, Result[], { at: 'once' | 'in turn' }, number, Result[]]>([
    ['one key asked three times at once', ['out'], { at: 'once' }, 1, ['out', 'out', 'out']],
    ['one key asked three times in turn', ['out'], { at: 'in turn' }, 1, ['out', 'out', 'out']],
    [
      'a failed build is not shared: each asker runs its own',
      [new Error('bad tree'), new Error('bad tree'), new Error('bad tree')],
      { at: 'in turn' },
      3,
      [new Error('bad tree'), new Error('bad tree'), new Error('bad tree')],
    ],
    [
      'an output naming the copy is not shared',
      ['at /work/copy-1', 'at /work/copy-2'],
      { at: 'in turn' },
      2,
      ['at /work/copy-1', 'at /work/copy-2'],
    ],
  ])('%s', async (_, results, { at }, runs, expected) => {
    const memo = new BuildMemo();
    let ran = 0;
    const ask = (i: number) =>
      outputOf('k'.repeat(64), { memo }, `/work/copy-${i + 1}`, () => {
        const r = results[Math.min(ran++, results.length - 1)]!;
        return r instanceof Error ? Promise.reject(r) : Promise.resolve(r);
      }).then(
        (o) => o.text,
        (e: unknown) => e as Error,
      );
    const got: Result[] = [];
    if (at === 'once') got.push(...(await Promise.all([0, 1, 2].map(ask))));
    else for (let i = 0; i < expected.length; i++) got.push(await ask(i));
    expect(got).toEqual(expected);
    expect(ran).toBe(runs);
  });

  it.each<[string, string | undefined, number]>([
    ['without a key, every build runs', undefined, 2],
    ['with a key, one runs', 'a'.repeat(64), 1],
  ])('%s', async (_, key, runs) => {
    const memo = new BuildMemo();
    let ran = 0;
    const run = () => Promise.resolve(`out ${++ran}`);
    await outputOf(key, { memo }, '/w1', run);
    await outputOf(key, { memo }, '/w2', run);
    expect(ran).toBe(runs);
  });
});
