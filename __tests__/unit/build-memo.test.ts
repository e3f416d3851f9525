// The run's kustomize outputs by the hash of their input (src/kustomize/cache.ts BuildMemo,
// outputOf): the same key asked for by several builds, at once or one after another, runs kustomize
// once; a failed build, or an output that names its temporary copy, is not shared.
import { describe, expect, it } from 'vitest';
import { build } from '../../src/kustomize/build.js';
import { BuildMemo, outputOf } from '../../src/kustomize/cache.js';
import { heavyFile } from '../helpers/heavy.js';
import { KUSTOMIZE } from '../helpers/paths.js';
import { tempTree } from '../helpers/plain-trees.js';

heavyFile();

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

// The build without kustomize (build.ts) shares the memo too: a claim or a child's foresight that
// asks for the same input gets the run's own build, as its own copy.
describe('build with a BuildMemo, without kustomize', () => {
  it('the same input is built once a run; each asker gets its own objects', async () => {
    const root = await tempTree('kr-memo-', {
      'ov/kustomization.yaml': 'namePrefix: p-\nresources:\n- cm.yaml\n',
      'ov/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n',
    });
    const memo = new BuildMemo();
    const ask = () => build({ root, path: 'ov', kustomizeBin: KUSTOMIZE, memo });
    const first = await ask();
    first.objects[0]!.metadata.name = 'changed by its asker';
    const second = await ask();
    expect(memo.inProcessHits).toBe(1);
    expect(memo.hits).toBe(0);
    expect(second.objects.map((o) => o.metadata.name)).toEqual(['p-a']);
    // Another input (a spec field) is built on its own.
    await build({ root, path: 'ov', kustomizeBin: KUSTOMIZE, memo, targetNamespace: 'other' });
    expect(memo.inProcessHits).toBe(1);
  });
});
