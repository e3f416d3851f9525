// The build cache (src/kustomize/cache.ts) with the real kustomize: an unchanged input reuses the
// kept output, byte for byte what kustomize prints; every kind of change to what the build reads
// builds again; nothing decrypted or fetched is kept; the cache may not lie inside the source root.
import { chmod, copyFile, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { build, type BuildOptions } from '../../src/kustomize/build.js';
import { isUserError } from '../../src/util/user-error.js';
import { adminClient, freshNamespace, writeTree } from '../helpers/cluster.js';
import { reconcileTree } from '../helpers/reconcile.js';
import { KUSTOMIZE } from '../helpers/paths.js';

const cm = (name: string, value: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  value: "${value}"\n`;

/**
 * A base of two ConfigMaps and an overlay that patches, labels and moves them (the common shape),
 * with a generator and a replacement, which the build without kustomize (overlay.ts) leaves to
 * kustomize.
 */
const TREE = {
  'base/kustomization.yaml': 'resources: [a.yaml, b.yaml]\n',
  'base/a.yaml': cm('a', '1'),
  'base/b.yaml': cm('b', '2'),
  'overlay/kustomization.yaml': [
    'namespace: team',
    'labels: [{pairs: {tier: gold}}]',
    'resources: [../base]',
    'patches:',
    '- target: {kind: ConfigMap}',
    '  patch: |-',
    '    - {op: add, path: /data/overlay, value: "yes"}',
    'configMapGenerator: [{name: generated, literals: [k=v]}]',
    'replacements:',
    '- source: {kind: ConfigMap, name: a, fieldPath: metadata.name}',
    '  targets: [{select: {kind: ConfigMap, name: b}, fieldPaths: [data.copy], options: {create: true}}]',
    '',
  ].join('\n'),
};

const cacheDir = () => mkdtemp(join(tmpdir(), 'kr-build-cache-'));
const entries = async (dir: string) =>
  (await readdir(dir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).length;

async function both(root: string, cache: string, extra: Partial<BuildOptions> = {}) {
  const opts: BuildOptions = { root, path: 'overlay', kustomizeBin: KUSTOMIZE, ...extra };
  const cached = await build({ ...opts, cache });
  const fresh = await build(opts);
  return { cached, fresh };
}

describe('the build cache', () => {
  it('reuses the output of exactly the same input, equal to what kustomize builds', async () => {
    const root = await writeTree(TREE);
    const cache = await cacheDir();
    const first = await build({ root, path: 'overlay', kustomizeBin: KUSTOMIZE, cache });
    expect(first.cached).toBeUndefined();
    expect(await entries(cache)).toBe(1);
    const { cached, fresh } = await both(root, cache);
    expect(cached.cached).toBe(true);
    expect(cached.objects).toEqual(fresh.objects);
    expect([...cached.origins]).toEqual([...fresh.origins]);
    expect(cached.objects.map((o) => o.metadata.namespace)).toEqual(['team', 'team', 'team']);
  });

  // Each change to what the build reads, made after a first build kept its output: the next build
  // runs kustomize again, and its answer is the new tree's.
  it.each<[string, (root: string) => Promise<void>, Partial<BuildOptions>?]>([
    ['a byte of a base file', (r) => writeFile(join(r, 'base/a.yaml'), cm('a', '9'))],
    ['the overlay kustomization', (r) => writeFile(join(r, 'overlay/kustomization.yaml'), 'resources: [../base]\n')],
    [
      'a file the base comes to list',
      async (r) => {
        await writeFile(join(r, 'base/c.yaml'), cm('c', '3'));
        await writeFile(join(r, 'base/kustomization.yaml'), 'resources: [a.yaml, b.yaml, c.yaml]\n');
      },
    ],
    [
      'a symbolic link pointed elsewhere',
      async (r) => {
        await writeFile(join(r, 'base/real-b.yaml'), cm('b', 'linked'));
        await rm(join(r, 'base/b.yaml'));
        await symlink('real-b.yaml', join(r, 'base/b.yaml'));
      },
    ],
    ['a Flux spec field (namePrefix)', async () => {}, { namePrefix: 'p-' }],
    [
      'a spec patch',
      async () => {},
      { patches: [{ patch: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {x: "1"}\n' }] },
    ],
  ])('builds again after %s', async (_, change, extra = {}) => {
    const root = await writeTree(TREE);
    const cache = await cacheDir();
    await build({ root, path: 'overlay', kustomizeBin: KUSTOMIZE, cache });
    await change(root);
    const { cached, fresh } = await both(root, cache, extra);
    expect(cached.cached).toBeUndefined();
    expect(cached.objects).toEqual(fresh.objects);
  });

  it('builds again with another kustomize binary', async () => {
    const root = await writeTree(TREE);
    const cache = await cacheDir();
    await build({ root, path: 'overlay', kustomizeBin: KUSTOMIZE, cache });
    // Other bytes (a wrapper that runs the same release): another binary as far as the key goes.
    const other = join(await cacheDir(), 'kustomize');
    await writeFile(other, `#!/bin/sh\nexec '${KUSTOMIZE}' "$@"\n`);
    await chmod(other, 0o755);
    const again = await build({ root, path: 'overlay', kustomizeBin: other, cache });
    expect(again.cached).toBeUndefined();
    expect((await build({ root, path: 'overlay', kustomizeBin: other, cache })).cached).toBe(true);
  });

  it('finds the entry with the same binary installed afresh elsewhere (another runner): keyed by its bytes', async () => {
    const root = await writeTree(TREE);
    const cache = await cacheDir();
    await build({ root, path: 'overlay', kustomizeBin: KUSTOMIZE, cache });
    // The same release at another path, with another mtime and inode, as a fresh runner installs it.
    const copy = join(await cacheDir(), 'kustomize');
    await copyFile(KUSTOMIZE, copy);
    await chmod(copy, 0o755);
    expect((await build({ root, path: 'overlay', kustomizeBin: copy, cache })).cached).toBe(true);
  });

  it('keeps nothing of a build whose copy had files decrypted into it', async () => {
    const root = await writeTree(TREE);
    const cache = await cacheDir();
    for (let i = 0; i < 2; i++) {
      const built = await build({
        root,
        path: 'overlay',
        kustomizeBin: KUSTOMIZE,
        cache,
        beforeBuild: async (copyRoot) => {
          // As decryptSources does: a file of the copy rewritten with its plain text.
          await writeFile(join(copyRoot, 'base/a.yaml'), cm('a', 'decrypted-value'));
          return 1;
        },
      });
      expect(built.cached).toBeUndefined();
      expect(JSON.stringify(built.objects)).toContain('decrypted-value');
    }
    expect(await entries(cache)).toBe(0);
  });

  it('builds of one input at the same time each succeed and leave one whole entry', async () => {
    const root = await writeTree(TREE);
    const cache = await cacheDir();
    const opts: BuildOptions = { root, path: 'overlay', kustomizeBin: KUSTOMIZE, cache };
    const results = await Promise.all([build(opts), build(opts), build(opts)]);
    for (const r of results) expect(r.objects).toEqual(results[0].objects);
    expect(await entries(cache)).toBe(1);
    expect((await build(opts)).cached).toBe(true);
  });

  it('a cache that cannot be written costs a build, not the run', async () => {
    const root = await writeTree(TREE);
    const cache = await cacheDir();
    await writeFile(join(cache, 'x'), '');
    // Every shard is a directory: a file where one must go makes the write fail.
    const opts: BuildOptions = { root, path: 'overlay', kustomizeBin: KUSTOMIZE, cache: join(cache, 'x') };
    expect((await build(opts)).objects).toHaveLength(3);
    expect((await build(opts)).cached).toBeUndefined();
  });

  it('keeps nothing with remote bases allowed', async () => {
    const root = await writeTree(TREE);
    const cache = await cacheDir();
    await build({ root, path: 'overlay', kustomizeBin: KUSTOMIZE, cache, allowRemoteBases: true });
    expect(await entries(cache)).toBe(0);
  });

  it.each([
    ['inside the source root', (root: string) => join(root, '.kr-cache')],
    ['the source root itself', (root: string) => root],
    ['relative, so inside the root', () => 'cache'],
  ])('is refused %s: a tree could carry entries', async (_, where) => {
    const root = await writeTree(TREE);
    const err = await build({ root, path: 'overlay', kustomizeBin: KUSTOMIZE, cache: where(root) }).catch(
      (e: unknown) => e,
    );
    expect(isUserError(err)).toBe(true);
    expect((err as Error).message).toMatch(/^build-cache .* is inside the source root/);
  });

  it('an entry planted for an input is what that input builds to: entries are named by the hash of it', async () => {
    // The key is the hash of the whole input, so an entry found is one written for exactly it: the
    // test shows a changed entry is read as written (why the directory must be trusted), and that the
    // file is named by the key, not by anything in the tree.
    const root = await writeTree(TREE);
    const cache = await cacheDir();
    await build({ root, path: 'overlay', kustomizeBin: KUSTOMIZE, cache });
    const [shard] = await readdir(cache);
    const [name] = await readdir(join(cache, shard!));
    expect(name).toMatch(/^[0-9a-f]{64}$/);
    expect(name!.startsWith(shard!)).toBe(true);
    const kept = await readFile(join(cache, shard!, name!), 'utf8');
    expect(kept).toContain('name: a');
    expect(kept).not.toContain(root);
  });

  it('a run says when it used a kept build, and applies the same objects', async () => {
    const client = await adminClient();
    try {
      const ns = await freshNamespace(client);
      const root = await writeTree({
        ...TREE,
        'overlay/kustomization.yaml': TREE['overlay/kustomization.yaml'].replace('team', ns),
      });
      const buildCache = await cacheDir();
      const first = await reconcileTree(root, { path: 'overlay', buildCache });
      expect(first.ok, first.error).toBe(true);
      expect(first.notes.join('\n')).not.toContain('kustomize did not run');
      const again = await reconcileTree(root, { path: 'overlay', buildCache });
      expect(again.ok, again.error).toBe(true);
      expect(again.notes.join('\n')).toContain('kustomize did not run');
      expect(again.changeset.map((c) => `${c.subject} ${c.action}`)).toEqual(
        first.changeset.map((c) => `${c.subject} unchanged`),
      );
    } finally {
      client.close();
    }
  });
});
