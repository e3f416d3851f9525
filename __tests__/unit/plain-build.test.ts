// The plain build (src/kustomize/plain.ts) against the real kustomize: wherever it gives an answer,
// that answer must be the build's with kustomize, object by object (values, key order, order of the
// objects) and origin by origin; wherever kustomize fails, it must give none (the build then runs
// kustomize, which fails). On the benchmark's tree, every directory of the parity corpus, and random
// trees from a seed (odd scalars, comments, nested directories, multi-document files, kinds of every
// scope, documents kustomize refuses or reads specially).
import { symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { build } from '../../src/kustomize/build.js';
import { readPlain, v2KeyLess } from '../../src/kustomize/plain-yaml.js';
import { buildPlain, specIsPlain } from '../../src/kustomize/plain.js';
import { mapLimit } from '../../src/util/concurrency.js';
import { benchTree, corpusDirs, randomTree, tempTree } from '../helpers/plain-trees.js';
import { expectKustomizesAnswer } from '../helpers/differential.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

const tree = (files: Record<string, string>) => tempTree('kr-plain-', files);

/**
 * Builds `path` of `root` both ways; checks that the plain build, when it answers, gives what the
 * build with kustomize gives. Returns which way the plain build went.
 */
async function differential(root: string, path: string, what: string): Promise<'plain' | 'kustomize'> {
  const plain = await buildPlain(root, path);
  if (plain === undefined) return 'kustomize';
  await expectKustomizesAnswer(plain, root, path, what);
  return 'plain';
}

describe('plain build, differential against kustomize', () => {
  it('the benchmark tree (1,000 objects) gives kustomize’s objects, order and origins', async () => {
    const root = await tree(benchTree(1000));
    expect(await differential(root, '.', 'bench tree')).toBe('plain');
    // The build takes it: a kustomize that always fails is never run.
    const built = await build({ root, path: '.', kustomizeBin: '/bin/false' });
    expect(built.objects).toHaveLength(1000);
    expect(built.generated).toBe(true);
  });

  it('every directory of the parity corpus that qualifies', async () => {
    const dirs = await corpusDirs();
    const ways = await mapLimit(dirs, 2, (d) => differential(d.root, d.path, `${d.root} ${d.path}`));
    // plain-dir, plain-multidoc, plain-nested, plain-values and more take the plain build.
    expect(ways.filter((w) => w === 'plain').length).toBeGreaterThanOrEqual(8);
  });

  // KR_PLAIN_FUZZ=<n> runs n times as many seeds (a longer search than CI's, by hand).
  const scale = Math.max(1, Number(process.env['KR_PLAIN_FUZZ'] ?? 1));
  it.each([
    { hostile: 0, from: 1, count: 120, share: 0.5 },
    { hostile: 0.1, from: 100_000, count: 100, share: 0.1 },
  ])(
    'random trees (hostile $hostile, from seed $from)',
    async ({ hostile, from, count, share }) => {
      const cases = Array.from({ length: count * scale }, (_, i) => from + i);
      const ways = await mapLimit(cases, 2, async (seed) => {
        const root = await tree(randomTree(seed, hostile));
        return differential(root, '.', `seed ${seed} (hostile ${hostile}): ${root}`);
      });
      // The fuzzer must reach the plain build, not only its refusals.
      expect(ways.filter((w) => w === 'plain').length).toBeGreaterThan(cases.length * share);
    },
    60_000 * scale,
  );
});

describe('plain build leaves to kustomize', () => {
  const cm = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n`;

  it.each<[string, Record<string, string>]>([
    ['a kustomization file in a sub-directory', { 'a.yaml': cm('a'), 'sub/kustomization.yaml': 'resources: []\n' }],
    ['a directory without YAML files', { 'notes.txt': 'x\n' }],
    ['a duplicate id', { 'a.yaml': cm('a'), 'b.yaml': cm('a') }],
    [
      'one name in the default namespace, given and not',
      { 'a.yaml': cm('a'), 'b.yaml': `${cm('a')}  namespace: default\n` },
    ],
    ['a document that is not an object', { 'a.yaml': cm('a'), 'values.yaml': 'replicas: 1\n' }],
    ['a List', { 'a.yaml': 'apiVersion: v1\nkind: List\nitems: []\n' }],
  ])('%s', async (_why, files) => {
    const root = await tree(files);
    expect(await buildPlain(root, '.')).toBeUndefined();
  });

  it('a symlink below the directory', async () => {
    const root = await tree({ 'a.yaml': cm('a') });
    await symlink(join(root, 'a.yaml'), join(root, 'b.yaml'));
    expect(await buildPlain(root, '.')).toBeUndefined();
  });

  it('reads the tree as Flux’s artifact holds it: .sourceignore and default exclusions', async () => {
    const root = await tree({
      'app/a.yaml': cm('a'),
      'app/skip.yaml': 'not: [valid\n',
      'app/.sourceignore': 'skip.yaml\n',
      'other/b.yaml': cm('b'),
    });
    expect(await differential(root, 'app', 'sourceignore')).toBe('plain');
    expect((await buildPlain(root, 'app'))?.origins).toEqual(new Map([['/ConfigMap//a', 'app/a.yaml']]));
  });

  it('any spec field that Flux merges into the kustomization', () => {
    expect(specIsPlain({})).toBe(true);
    expect(specIsPlain({ targetNamespace: '', patches: [], images: [], components: [], buildMetadata: [] })).toBe(true);
    for (const field of [
      { targetNamespace: 'x' },
      { namePrefix: 'p-' },
      { nameSuffix: '-s' },
      { patches: [{ patch: 'x' }] },
      { images: [{ name: 'x' }] },
      { components: ['c'] },
      { buildMetadata: ['originAnnotations'] },
    ]) {
      expect(specIsPlain(field)).toBe(false);
    }
  });
});

describe("yaml.v2's key order", () => {
  const cm = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n`;
  const doc = (keys: string[]) => `${cm('keys')}data:\n${keys.map((k) => `  ${JSON.stringify(k)}: v`).join('\n')}\n`;
  const keys = ['a10', 'a9', 'a01', 'a1', 'a0', 'a00', '1a', '9', 'ab', 'aB', 'A', 'Z', '_x', 'x-y', 'x.y', 'x_y'];
  keys.push('x/y', 'x9y', 'x10y', '-', '~', 'a', 'b', 'key with space', 'a-1', 'a1-', 'a1-b', 'a-b', 'a.b');

  it('is what kustomize prints', async () => {
    expect(v2KeyLess('a1-', 'a10')).toBe(true);
    expect(v2KeyLess('a10', 'a1b')).toBe(true);
    const root = await tree({ 'a.yaml': doc(keys) });
    expect(await differential(root, '.', 'keys')).toBe('plain');
  });

  it('is left to kustomize where it is not a total order (02 < 10 < 1a < 02)', () => {
    expect(v2KeyLess('02', '10') && v2KeyLess('10', '1a') && v2KeyLess('1a', '02')).toBe(true);
    expect(readPlain(doc([...keys, '02', '10']))).toBe('keys whose order is not certain');
  });
});
