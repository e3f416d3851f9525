import { execFileSync } from 'node:child_process';
import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readFile,
  readlink,
  readdir,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { copyTree } from '../../src/kustomize/copy.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

async function listTree(dir: string, base = dir): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    const rel = relative(base, p);
    if (e.isDirectory()) out.push(`${rel}/`, ...(await listTree(p, base)));
    else if (e.isSymbolicLink()) out.push(`${rel} -> ${await readlink(p)}`);
    else out.push(rel);
  }
  return out.sort();
}

describe('copyTree', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'kr-copy-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('copies directories, files and symlinks as they are, leaving out skipped and excluded entries', async () => {
    const src = join(root, 'src');
    await mkdir(join(src, 'apps', 'web', 'deep'), { recursive: true });
    await mkdir(join(src, 'node_modules', 'x'), { recursive: true });
    await mkdir(join(src, 'apps', '.git'), { recursive: true });
    await writeFile(join(src, 'apps', 'web', 'deploy.yaml'), 'kind: Deployment\n');
    await writeFile(join(src, 'apps', 'web', 'deep', 'cm.yaml'), 'kind: ConfigMap\n');
    await writeFile(join(src, 'apps', 'logo.png'), 'png');
    await writeFile(join(src, 'node_modules', 'x', 'index.js'), '');
    await writeFile(join(src, 'apps', '.git', 'HEAD'), 'ref');
    await writeFile(join(src, 'run.sh'), '#!/bin/sh\n');
    await chmod(join(src, 'run.sh'), 0o755);
    await symlink('../outside.yaml', join(src, 'apps', 'link.yaml'));
    await symlink('missing-target', join(src, 'dangling'));
    execFileSync('mkfifo', [join(src, 'pipe')]);
    // The copy's own directory inside the source (RUNNER_TEMP in the workspace).
    await mkdir(join(src, 'tmp', 'kr-build-1'), { recursive: true });
    await writeFile(join(src, 'tmp', 'kr-build-1', 'old.yaml'), '');

    const dst = join(src, 'tmp', 'kr-build-1', 'src');
    await copyTree(src, dst, {
      skip: (name) => name === 'node_modules' || name === '.git' || name.endsWith('.png'),
      exclude: new Set([join(src, 'tmp', 'kr-build-1')]),
      concurrency: 2,
    });

    expect(await listTree(dst)).toEqual([
      'apps/',
      'apps/link.yaml -> ../outside.yaml',
      'apps/web/',
      'apps/web/deep/',
      'apps/web/deep/cm.yaml',
      'apps/web/deploy.yaml',
      'dangling -> missing-target',
      'run.sh',
      'tmp/',
    ]);
    expect(await readFile(join(dst, 'apps', 'web', 'deep', 'cm.yaml'), 'utf8')).toBe('kind: ConfigMap\n');
    expect((await stat(join(dst, 'run.sh'))).mode & 0o777).toBe(0o755);
    expect((await lstat(join(dst, 'apps', 'link.yaml'))).isSymbolicLink()).toBe(true);
  });

  it('leaves out ignored entries by path, making an ignored directory only for what is kept below it', async () => {
    const src = join(root, 'src');
    for (const f of ['kept/a.yaml', 'gone/a.yaml', 'gone/keep.yaml', 'gone/deeper/x.yaml', 'emptied/x.yaml'])
      await mkdir(join(src, f, '..'), { recursive: true }).then(() => writeFile(join(src, f), f));
    await mkdir(join(src, 'empty'));
    const dst = join(root, 'copy');
    const walked = await copyTree(src, dst, {
      skip: () => false,
      ignore: (path) => path[0] !== 'kept' && path.join('/') !== 'gone/keep.yaml' && path[0] !== 'empty',
    });
    expect(await listTree(dst)).toEqual(['empty/', 'gone/', 'gone/keep.yaml', 'kept/', 'kept/a.yaml']);
    expect(walked.map((e) => e.path.join('/'))).toContain('gone/deeper/x.yaml');
  });

  it.each([1, 4, 64])('copies 300 files with %i in flight', async (concurrency) => {
    const src = join(root, 'many');
    await mkdir(join(src, 'a', 'b'), { recursive: true });
    await Promise.all(
      Array.from({ length: 300 }, (_, i) =>
        writeFile(join(src, i % 2 ? 'a' : join('a', 'b'), `f${i}.yaml`), `n: ${i}\n`),
      ),
    );
    const dst = join(root, 'copy');
    await copyTree(src, dst, { skip: () => false, concurrency });
    const files = (await listTree(dst)).filter((f) => !f.endsWith('/'));
    expect(files).toHaveLength(300);
    expect(await readFile(join(dst, 'a', 'b', 'f298.yaml'), 'utf8')).toBe('n: 298\n');
  });

  it('fails on a source that does not exist, naming it', async () => {
    await expect(copyTree(join(root, 'nope'), join(root, 'out'), { skip: () => false })).rejects.toThrow(/nope/);
  });
});
