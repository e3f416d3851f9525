// The one confinement (src/util/confine.ts) over real temporary trees with symlinks: every route out of
// the root (absolute links, relative links climbing out, chains, loops, `..` after a link) is refused
// naming the file, the field, the entry and the link; links that stay inside resolve as the kernel would.
import { existsSync, readFileSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkReferences, dropEscapingLinks } from '../../src/kustomize/confine.js';
import { addInclude } from '../../src/source/fetched.js';
import { ConfinementError, confinedPath, escapingLink } from '../../src/util/confine.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

/** A tree: path → file text, or `{ link }` for a symlink; `@OUT` in a link stands for the outside directory. */
type Tree = Record<string, string | { to: string }>;

let base: string;
let n = 0;

beforeAll(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), 'kr-confine-')));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

/** Writes `tree` under a new `<case>/a/b/root` (so that `../../..` from the root is still a real place) and a file outside. */
async function plant(tree: Tree): Promise<{ root: string; outside: string }> {
  const top = join(base, String(n++));
  const root = join(top, 'a', 'b', 'root');
  const outside = join(top, 'outside');
  await mkdir(root, { recursive: true });
  await mkdir(outside, { recursive: true });
  await writeFile(join(outside, 'secret.txt'), 'canary');
  for (const [rel, v] of Object.entries(tree)) {
    const p = join(root, rel);
    await mkdir(dirname(p), { recursive: true });
    if (typeof v === 'string') await writeFile(p, v);
    else await symlink(v.to.replace('@OUT', outside).replace('@ROOT', root), p);
  }
  return { root, outside };
}

const ref = { file: 'clusters/app.yaml', field: 'spec.include[0].fromPath' };

describe('confinedPath: links inside the root resolve', () => {
  it.each<[string, Tree, string, string | undefined, string]>([
    ['a plain file', { 'x/f.yaml': 'a' }, 'x/f.yaml', undefined, 'x/f.yaml'],
    [
      'a link to a file beside it',
      { 'x/f.yaml': 'a', 'x/l.yaml': { to: 'f.yaml' } },
      'x/l.yaml',
      undefined,
      'x/f.yaml',
    ],
    [
      'a link to a directory, then a file in it',
      { 'base/f.yaml': 'a', l: { to: 'base' } },
      'l/f.yaml',
      undefined,
      'base/f.yaml',
    ],
    [
      'a chain of links inside',
      { 'base/f.yaml': 'a', l1: { to: 'l2' }, l2: { to: './base' } },
      'l1/f.yaml',
      undefined,
      'base/f.yaml',
    ],
    [
      '`..` after a link goes up from its target',
      { 'p/q/f.yaml': 'a', 'p/g.yaml': 'b', l: { to: 'p/q' } },
      'l/../g.yaml',
      undefined,
      'p/g.yaml',
    ],
    [
      'a link climbing to a sibling inside',
      { 'x/y/l': { to: '../../z' }, 'z/f.yaml': 'a' },
      'x/y/l/f.yaml',
      undefined,
      'z/f.yaml',
    ],
    [
      'an absolute link to a place inside the root',
      { 'z/f.yaml': 'a', l: { to: '@ROOT/z' } },
      'l/f.yaml',
      undefined,
      'z/f.yaml',
    ],
    [
      'relative to a directory (`from`)',
      { 'apps/base/f.yaml': 'a', 'apps/dev/k': 'k' },
      '../base/f.yaml',
      'apps/dev',
      'apps/base/f.yaml',
    ],
    ['a missing tail is joined as written', { 'x/f.yaml': 'a' }, 'x/new/dir', undefined, 'x/new/dir'],
    ['an absolute path inside the root', { 'x/f.yaml': 'a' }, '@ROOT/x/f.yaml', undefined, 'x/f.yaml'],
    ['the root itself', {}, '.', undefined, ''],
  ])('%s', async (_why, tree, path, from, want) => {
    const { root } = await plant(tree);
    const got = await confinedPath(root, path.replace('@ROOT', root), ref, from ? { from: join(root, from) } : {});
    expect(got).toBe(want === '' ? root : join(root, want));
  });
});

describe('confinedPath: every way out is refused, naming the file, field, entry and link', () => {
  it.each<[string, Tree, string, string | undefined, string, string | undefined]>([
    [
      'an absolute link to /',
      { l: { to: '/' } },
      'l/etc/passwd',
      undefined,
      'leaves the source root through a symlink: "l" -> "/"',
      'l',
    ],
    [
      'an absolute link to a file outside',
      { 'x/s.txt': { to: '@OUT/secret.txt' } },
      'x/s.txt',
      undefined,
      'leaves the source root through a symlink: "x/s.txt"',
      'x/s.txt',
    ],
    [
      'a relative link climbing out',
      { l: { to: '../../..' } },
      'l/outside/secret.txt',
      undefined,
      '"l" -> "../../.."',
      'l',
    ],
    [
      'a link climbing out from deeper down',
      { 'x/y/l': { to: '../../../../outside' } },
      'x/y/l/secret.txt',
      undefined,
      '"x/y/l" -> "../../../../outside"',
      'x/y/l',
    ],
    [
      'a chain whose last link leaves',
      { l1: { to: 'l2' }, l2: { to: 'd/l3' }, 'd/l3': { to: '/etc' } },
      'l1/passwd',
      undefined,
      '"d/l3" -> "/etc"',
      'd/l3',
    ],
    [
      'a chain whose first link leaves and comes back',
      { l1: { to: '../root2' } },
      'l1',
      undefined,
      '"l1" -> "../root2"',
      'l1',
    ],
    [
      '`..` after a link to the root climbs out',
      { l: { to: '.' } },
      'l/../x',
      undefined,
      'leaves the source root',
      undefined,
    ],
    [
      '`..` after a link inside, written by the entry',
      { 'p/f': 'a', l: { to: 'p' } },
      'l/../../x',
      undefined,
      'leaves the source root',
      undefined,
    ],
    ['a loop', { l1: { to: 'l2' }, l2: { to: 'l1' } }, 'l1/f', undefined, 'goes through more than 40 symlinks', 'l'],
    ['a self loop', { l: { to: 'l' } }, 'l', undefined, 'goes through more than 40 symlinks', 'l'],
    ['a plain `..` out', {}, '../../../outside/secret.txt', undefined, 'leaves the source root', undefined],
    [
      'an absolute path outside',
      {},
      '/etc/passwd',
      undefined,
      'leaves the source root (an absolute path outside it)',
      undefined,
    ],
    [
      'a link in the directory named from',
      { 'apps/l': { to: '/' } },
      'etc/passwd',
      'apps/l',
      '"apps/l" -> "/"',
      'apps/l',
    ],
    [
      'a dangling link outside (a place to write)',
      { 'inc/t': { to: '@OUT/new-dir' } },
      'inc/t/x',
      undefined,
      '"inc/t" ->',
      'inc/t',
    ],
  ])('%s', async (_why, tree, path, from, message, link) => {
    const { root } = await plant(tree);
    const err = await confinedPath(root, path, ref, from ? { from: join(root, from) } : {}).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfinementError);
    const e = err as ConfinementError;
    expect(e.message).toContain(`clusters/app.yaml: spec.include[0].fromPath ${JSON.stringify(path)} `);
    expect(e.message).toContain(message);
    if (link === undefined) expect(e.through).toBeUndefined();
    else expect(e.through?.link.startsWith(link)).toBe(true);
    expect(e.name).toBe('ConfinementError');
  });
});

describe('escapingLink', () => {
  it.each<[string, Tree, string[], boolean]>([
    ['a link inside', { 'x/f': 'a', l: { to: 'x/f' } }, ['l'], false],
    ['a dangling link inside', { l: { to: 'nothing-here' } }, ['l'], false],
    ['a link to /', { l: { to: '/' } }, ['l'], true],
    ['a link climbing out', { 'd/l': { to: '../../x' } }, ['d', 'l'], true],
    ['a link to a link outside', { l: { to: 'm' }, m: { to: '@OUT/secret.txt' } }, ['l'], true],
    ['a plain file', { f: 'a' }, ['f'], false],
  ])('%s', async (_why, tree, rel, escapes) => {
    const { root } = await plant(tree);
    expect((await escapingLink(root, rel)) !== undefined).toBe(escapes);
  });
});

describe('addInclude through symlinks (spec.include)', () => {
  const inc = (fromPath: string, toPath: string) => ({ fromPath, toPath });
  it.each<[string, Tree, Tree, { fromPath: string; toPath: string }, string]>([
    ['fromPath through `l -> /`', { l: { to: '/' } }, {}, inc('l@OUT', 'vendor'), '"l" -> "/"'],
    [
      'fromPath through a climbing link',
      { r: { to: '../../../..' } },
      {},
      inc('r/outside', 'vendor'),
      '"r" -> "../../../.."',
    ],
    [
      'fromPath naming a file link out',
      { 's.txt': { to: '@OUT/secret.txt' } },
      {},
      inc('s.txt', 'vendor/s.txt'),
      '"s.txt" ->',
    ],
    [
      'toPath through an absolute link out',
      { 'd/f': 'x' },
      { out: { to: '@OUT' } },
      inc('d', 'out/written'),
      '"out" ->',
    ],
    [
      'toPath through a climbing link',
      { 'd/f': 'x' },
      { up: { to: '../../..' } },
      inc('d', 'up/written'),
      '"up" -> "../../.."',
    ],
    [
      'a link copied that leaves the including tree',
      { 'd/l': { to: '../../../../../../../../etc' } },
      {},
      inc('d', 'v'),
      'holds the symlink "d/l"',
    ],
  ])('refuses %s', async (_why, included, including, entry, message) => {
    const from = await plant(included);
    const to = await plant(including);
    const fixed = { fromPath: entry.fromPath.replace('@OUT', from.outside), toPath: entry.toPath };
    const err = await addInclude(from.root, fixed, to.root, { file: 'clusters/sync.yaml', index: 2 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfinementError);
    expect((err as Error).message).toMatch(/^clusters\/sync\.yaml: spec\.include\[2\]\.(fromPath|toPath) /);
    expect((err as Error).message).toContain(message);
    // Nothing was written outside the including tree.
    expect(existsSync(join(to.outside, 'written'))).toBe(false);
  });

  it('follows links that stay inside both trees', async () => {
    const from = await plant({ 'deploy/cm.yaml': 'a', linked: { to: 'deploy' }, 'deploy/l': { to: 'cm.yaml' } });
    const to = await plant({ vendor: { to: 'real-vendor' }, 'real-vendor/.keep': '' });
    await addInclude(from.root, { fromPath: 'linked', toPath: 'vendor/x' }, to.root);
    expect(readFileSync(join(to.root, 'real-vendor/x/cm.yaml'), 'utf8')).toBe('a');
    expect(readFileSync(join(to.root, 'real-vendor/x/l'), 'utf8')).toBe('a');
  });
});

describe("kustomize's entries through symlinks (checkReferences on the build copy)", () => {
  it.each<[string, Tree, string]>([
    [
      'a resource behind a chain of links',
      {
        'app/kustomization.yaml': 'resources: [a/cm.yaml]\n',
        'app/a': { to: 'b' },
        'app/b': { to: '../c' },
        c: { to: '@OUT' },
      },
      'app/kustomization.yaml: resources entry "a/cm.yaml" leaves the source root through a symlink: "c" ->',
    ],
    [
      'a generator file `key=link` to a file out',
      {
        'app/kustomization.yaml': 'configMapGenerator: [{name: x, files: [k=cfg]}]\n',
        'app/cfg': { to: '@OUT/secret.txt' },
      },
      'app/kustomization.yaml: configMapGenerator[].files entry "cfg" leaves the source root through a symlink: "app/cfg"',
    ],
    [
      'an env file behind a climbing link',
      { 'app/kustomization.yaml': 'secretGenerator: [{name: x, envs: [e/s.env]}]\n', 'app/e': { to: '../../../..' } },
      'secretGenerator[].envs entry "e/s.env" leaves the source root through a symlink: "app/e" -> "../../../.."',
    ],
    [
      'a patch in a linked directory',
      { 'app/kustomization.yaml': 'patches: [{path: p/x.yaml}]\n', 'app/p': { to: '/etc' } },
      'patches[].path entry "p/x.yaml" leaves the source root through a symlink: "app/p" -> "/etc"',
    ],
    [
      'openapi.path linked out',
      { 'app/kustomization.yaml': 'openapi: {path: s.json}\n', 'app/s.json': { to: '@OUT/secret.txt' } },
      'openapi.path entry "s.json" leaves the source root',
    ],
    [
      'a component directory linked out',
      { 'app/kustomization.yaml': 'components: [c]\n', 'app/c': { to: '@OUT' } },
      'components entry "c" leaves the source root through a symlink',
    ],
    [
      '`deep/..` where deep is a link out (lexically inside)',
      {
        'app/kustomization.yaml': 'resources: [deep/../secret.txt]\n',
        'app/deep': { to: '@OUT/sub' },
        'app/secret.txt': 'x',
      },
      'resources entry "deep/../secret.txt" leaves the source root through a symlink: "app/deep"',
    ],
    [
      'a dangling link out',
      { 'app/kustomization.yaml': 'resources: [gone.yaml]\n', 'app/gone.yaml': { to: '/nonexistent/x.yaml' } },
      'resources entry "gone.yaml" leaves the source root through a symlink: "app/gone.yaml" -> "/nonexistent/x.yaml"',
    ],
    [
      'a kustomization file linked out',
      { 'app/kustomization.yaml': { to: '@OUT/k.yaml' } },
      'app/kustomization.yaml is a symlink that leaves the source root; it is not read ("app/kustomization.yaml" ->',
    ],
  ])('refuses %s', async (_why, tree, message) => {
    const { root, outside } = await plant(tree);
    await mkdir(join(outside, 'sub'), { recursive: true });
    await writeFile(join(outside, 'k.yaml'), 'resources: []\n');
    await expect(checkReferences(root, root, join(root, 'app'), false, new Set())).rejects.toThrow(message);
  });

  it('lets links inside the root through, and dropEscapingLinks removes only the links that leave', async () => {
    const { root } = await plant({
      'app/kustomization.yaml': 'resources: [cm.yaml, base]\nconfigMapGenerator: [{name: x, files: [d.txt]}]\n',
      'app/cm.yaml': { to: '../shared/cm.yaml' },
      'app/base': { to: '../shared/base' },
      'app/d.txt': { to: '../shared/d.txt' },
      'shared/cm.yaml': 'kind: ConfigMap\napiVersion: v1\nmetadata: {name: a}\n',
      'shared/d.txt': 'd',
      'shared/base/kustomization.yaml': 'resources: []\n',
      'unused/out': { to: '/etc' },
      'unused/up': { to: '../../../../x' },
    });
    await checkReferences(root, root, join(root, 'app'), false, new Set());
    await dropEscapingLinks(root);
    expect(existsSync(join(root, 'app/cm.yaml'))).toBe(true);
    expect(existsSync(join(root, 'app/base'))).toBe(true);
    await expect(lstat(join(root, 'unused/out'))).rejects.toThrow();
    await expect(lstat(join(root, 'unused/up'))).rejects.toThrow();
  });
});
