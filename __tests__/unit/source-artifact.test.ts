// ExternalArtifacts made from local trees with an ArtifactGenerator's copy operations, checked
// against source-watcher's documented cp-like rules, file by file.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { ArtifactGeneratorDef, CopyOperation } from '../../src/flux/source-defs.js';
import { excluded, generateArtifact, globDestination, mergeMaps, selectionRoot } from '../../src/source/artifact.js';
import { writeTree } from '../helpers/cluster.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

const made: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of made) await c();
});

/** Every file below `root`, path → content. */
async function filesOf(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const path = join(e.parentPath, e.name).slice(root.length + 1);
    out[path] = readFileSync(join(root, path), 'utf8');
  }
  return out;
}

const op = (from: string, to: string, extra: Partial<CopyOperation> = {}): CopyOperation => ({
  from,
  to,
  exclude: [],
  strategy: 'Overwrite',
  ...extra,
});

const generator = (
  copy: CopyOperation[],
  extra: Partial<ArtifactGeneratorDef['artifacts'][number]> = {},
): ArtifactGeneratorDef => ({
  kind: 'ArtifactGenerator',
  namespace: 'flux-system',
  name: 'gen',
  file: 'clusters/dev/artifacts.yaml',
  sources: [
    { alias: 'source', kind: 'GitRepository', name: 'a', namespace: 'flux-system' },
    { alias: 'other', kind: 'GitRepository', name: 'b', namespace: 'flux-system' },
  ],
  artifacts: [{ name: 'out', copy, ...extra }],
});

const SOURCE = {
  'config.yaml': 'a: 1\n',
  'README.md': '# readme\n',
  'configs/one.yaml': 'one: 1\n',
  'configs/two.yaml': 'two: 2\n',
  'configs/notes.md': 'notes\n',
  'configs/sub/three.yaml': 'three: 3\n',
  'configs/testdata/t.yaml': 'test: 1\n',
  'values.yaml': 'image: {repository: podinfo, tag: "1.0"}\nreplicas: 1\nports: [80, 443]\n',
  'values-prod.yaml': 'image: {tag: "2.0"}\nports: [8080]\n',
};
const OTHER = { 'config.yaml': 'b: 2\n', 'extra/x.yaml': 'x: 1\n' };

async function make(copy: CopyOperation[], extra: Partial<ArtifactGeneratorDef['artifacts'][number]> = {}) {
  const inputs = {
    source: { root: await writeTree(SOURCE), revision: 'main@sha1:aaaa' },
    other: { root: await writeTree(OTHER), revision: 'v1.0.0@sha1:bbbb' },
  };
  const artifact = await generateArtifact(generator(copy, extra), 'out', inputs);
  made.push(artifact.cleanup);
  return artifact;
}

describe('generateArtifact: copy operations', () => {
  it.each<[string, CopyOperation[], Record<string, string>]>([
    ['a file into the root', [op('@source/config.yaml', '@artifact/')], { 'config.yaml': 'a: 1\n' }],
    ['a file to a new name', [op('@source/config.yaml', '@artifact/apps/app.yaml')], { 'apps/app.yaml': 'a: 1\n' }],
    ['a file into a directory', [op('@source/config.yaml', '@artifact/apps/')], { 'apps/config.yaml': 'a: 1\n' }],
    [
      'a file into a directory made by an earlier operation (no trailing slash)',
      [op('@source/configs/one.yaml', '@artifact/dest/'), op('@source/config.yaml', '@artifact/dest')],
      { 'dest/one.yaml': 'one: 1\n', 'dest/config.yaml': 'a: 1\n' },
    ],
    [
      'a glob keeps the matched path below the destination',
      [op('@source/configs/*.yaml', '@artifact/apps/')],
      { 'apps/configs/one.yaml': 'one: 1\n', 'apps/configs/two.yaml': 'two: 2\n' },
    ],
    [
      'a directory is copied as a subdirectory',
      [op('@source/configs', '@artifact/dest')],
      {
        'dest/configs/one.yaml': 'one: 1\n',
        'dest/configs/two.yaml': 'two: 2\n',
        'dest/configs/notes.md': 'notes\n',
        'dest/configs/sub/three.yaml': 'three: 3\n',
        'dest/configs/testdata/t.yaml': 'test: 1\n',
      },
    ],
    [
      'dir/** copies the directory contents',
      [op('@source/configs/**', '@artifact/')],
      {
        'one.yaml': 'one: 1\n',
        'two.yaml': 'two: 2\n',
        'notes.md': 'notes\n',
        'sub/three.yaml': 'three: 3\n',
        'testdata/t.yaml': 'test: 1\n',
      },
    ],
    [
      'exclude: by file name at any depth, by path from the prefix, by doublestar',
      [op('@source/configs/**', '@artifact/', { exclude: ['*.md', 'sub/**', '**/testdata/**'] })],
      { 'one.yaml': 'one: 1\n', 'two.yaml': 'two: 2\n' },
    ],
    [
      'later operations overwrite earlier ones',
      [op('@source/config.yaml', '@artifact/'), op('@other/config.yaml', '@artifact/')],
      { 'config.yaml': 'b: 2\n' },
    ],
    [
      'an excluded single file is left out',
      [op('@source/config.yaml', '@artifact/'), op('@source/README.md', '@artifact/', { exclude: ['*.md'] })],
      { 'config.yaml': 'a: 1\n' },
    ],
  ])('%s', async (_, copy, want) => {
    const artifact = await make(copy);
    expect(await filesOf(artifact.root)).toEqual(want);
  });

  it('Merge deep-merges YAML maps and replaces lists, as Helm merges values files', async () => {
    const artifact = await make([
      op('@source/values.yaml', '@artifact/chart/values.yaml'),
      op('@source/values-prod.yaml', '@artifact/chart/values.yaml', { strategy: 'Merge' }),
    ]);
    expect(parse(readFileSync(join(artifact.root, 'chart/values.yaml'), 'utf8'))).toEqual({
      image: { repository: 'podinfo', tag: '2.0' },
      replicas: 1,
      ports: [8080],
    });
  });

  it('Merge onto nothing copies the file', async () => {
    const artifact = await make([op('@source/values-prod.yaml', '@artifact/values.yaml', { strategy: 'Merge' })]);
    expect(await filesOf(artifact.root)).toEqual({ 'values.yaml': SOURCE['values-prod.yaml'] });
  });

  it('Extract unpacks tarballs matched by a doublestar glob', async () => {
    const content = await writeTree({
      'chart/Chart.yaml': 'name: podinfo\n',
      'chart/templates/cm.yaml': 'kind: ConfigMap\n',
    });
    const releases = await writeTree({});
    mkdirSync(join(releases, 'releases/v1'), { recursive: true });
    execFileSync('tar', ['-czf', join(releases, 'releases/v1/podinfo-1.0.0.tgz'), '-C', content, 'chart']);
    writeFileSync(join(releases, 'releases/v1/notes.txt'), 'not a tarball\n');
    const gen = generator([op('@source/releases/**/*.tgz', '@artifact/charts/', { strategy: 'Extract' })]);
    const artifact = await generateArtifact(gen, 'out', {
      source: { root: releases, revision: 'r' },
      other: { root: releases, revision: 'r' },
    });
    made.push(artifact.cleanup);
    expect(await filesOf(artifact.root)).toEqual({
      'charts/chart/Chart.yaml': 'name: podinfo\n',
      'charts/chart/templates/cm.yaml': 'kind: ConfigMap\n',
    });
  });

  it.each<[string, CopyOperation, RegExp]>([
    ['an alias not given', op('@nowhere/x.yaml', '@artifact/'), /source alias 'nowhere' not found/],
    ['a missing file', op('@source/missing.yaml', '@artifact/'), /source 'missing.yaml' does not exist/],
    [
      'a glob matching nothing',
      op('@source/*.json', '@artifact/'),
      /no files match pattern '\*.json' in source 'source'/,
    ],
    ['everything excluded', op('@source/configs/*.md', '@artifact/', { exclude: ['*.md'] }), /were excluded/],
    ['a malformed glob', op('@source/[', '@artifact/'), /invalid glob pattern '\['/],
    ['a path leaving the source', op('@source/../etc/passwd', '@artifact/'), /".." is not allowed/],
    ['a destination leaving the artifact', op('@source/config.yaml', '@artifact/../x'), /".." is not allowed/],
    [
      'Extract of a directory',
      op('@source/configs', '@artifact/', { strategy: 'Extract' }),
      /extract strategy is not supported for directories/,
    ],
    [
      'Extract of a plain file',
      op('@source/config.yaml', '@artifact/', { strategy: 'Extract' }),
      /requires tarball file/,
    ],
  ])('fails naming the artifact, generator, file and operation: %s', async (_, copy, reason) => {
    const err = await make([copy]).catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    const message = (err as Error).message;
    expect(message).toContain(
      'making ExternalArtifact flux-system/out (ArtifactGenerator flux-system/gen, clusters/dev/artifacts.yaml) failed',
    );
    expect(message).toContain(`copy from '${copy.from}' to '${copy.to}' failed`);
    expect(message).toMatch(reason);
  });
});

describe('generateArtifact: what Flux leaves out, and the revision', () => {
  it("drops the VCS files and Flux's default exclusions, and the .sourceignore files copied in", async () => {
    const root = await writeTree({
      'app/cm.yaml': 'kind: ConfigMap\n',
      'app/.sops.yaml': 'creation_rules: []\n',
      'app/logo.png': 'png',
      'app/.github/workflows/ci.yaml': 'on: push\n',
      'app/.sourceignore': '*.yaml\n',
      'app/.gitignore': 'x\n',
    });
    const gen = generator([op('@source/app/**', '@artifact/')]);
    const artifact = await generateArtifact(gen, 'out', {
      source: { root, revision: 'r' },
      other: { root, revision: 'r' },
    });
    made.push(artifact.cleanup);
    expect(Object.keys(await filesOf(artifact.root))).toEqual(['cm.yaml']);
  });

  it('is latest@sha256 of the content: the same for the same files, another for other files', async () => {
    const a = await make([op('@source/configs/**', '@artifact/')]);
    const b = await make([op('@source/configs/**', '@artifact/')]);
    const c = await make([op('@source/configs/**', '@artifact/', { exclude: ['*.md'] })]);
    expect(a.revision).toMatch(/^latest@sha256:[0-9a-f]{64}$/);
    expect(b.revision).toBe(a.revision);
    expect(c.revision).not.toBe(a.revision);
    expect(a.originRevision).toBeUndefined();
  });

  it("takes a source's revision with revision: @alias, and records originRevision", async () => {
    const artifact = await make([op('@source/config.yaml', '@artifact/')], {
      revision: '@other',
      originRevision: '@source',
    });
    expect(artifact.revision).toBe('v1.0.0@sha1:bbbb');
    expect(artifact.originRevision).toBe('main@sha1:aaaa');
  });
});

describe('copy rules, pure', () => {
  it.each<[string, string, string, string]>([
    ['configs/**', 'configs/one.yaml', 'apps', 'apps/one.yaml'],
    ['configs/**', 'configs/sub', '', 'sub'],
    ['configs/*.yaml', 'configs/one.yaml', 'apps', 'apps/configs/one.yaml'],
    ['*.yaml', 'one.yaml', '', 'one.yaml'],
  ])('globDestination(%s, %s, %s) = %s', (pattern, match, dest, want) => {
    expect(globDestination(pattern, match, dest)).toBe(want);
  });

  it.each<[string, string]>([
    ['configs/**', 'configs'],
    ['configs/*/x.yaml', 'configs'],
    ['*.yaml', '.'],
    ['a/b/c.yaml', 'a/b/c.yaml'],
  ])('selectionRoot(%s) = %s', (pattern, want) => {
    expect(selectionRoot(pattern)).toBe(want);
  });

  it.each<[string, string, string[], boolean]>([
    ['configs/notes.md', 'configs', ['*.md'], true],
    ['configs/sub/three.yaml', 'configs', ['sub/**'], true],
    ['configs/sub/three.yaml', '.', ['sub/**'], false],
    ['configs/one.yaml', 'configs', ['*.md'], false],
    ['configs/testdata/t.yaml', 'configs', ['**/testdata/**'], true],
  ])('excluded(%s, base %s, %j) = %s', (path, base, patterns, want) => {
    expect(excluded(path, base, patterns)).toBe(want);
  });

  it('mergeMaps', () => {
    expect(mergeMaps({ a: { b: 1, c: [1, 2] }, d: 1 }, { a: { c: [3] }, d: { e: 1 } })).toEqual({
      a: { b: 1, c: [3] },
      d: { e: 1 },
    });
  });
});
