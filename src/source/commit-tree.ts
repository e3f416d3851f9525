/**
 * A commit's tree taken out of git into a scratch directory (`git archive`), for what must be read
 * as that commit has it: the base commit's Kustomizations as their parents build them (the base rule,
 * reconcile/base-built.ts) and a parent's build on the base of a plan's change (plan/parent-builds.ts).
 * The edge: git and tar.
 */
import { execFile } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { trackChild } from '../util/lifecycle.js';
import { gitBytes, isCommitName } from './base-sources.js';
import { scratchDir } from '../util/scratch.js';

/** A tree larger than this (the sum of its blobs) is not taken out. */
const MAX_TREE_BYTES = 256 * 1024 * 1024;

/** tar, extracting `archive` into `dir`; a failure says tar's last words. */
function untar(archive: string, dir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'tar',
      ['-xf', archive, '-C', dir, '--no-same-owner', '--no-same-permissions'],
      { timeout: 120_000 },
      (err, _stdout, stderr) => {
        if (err) reject(new Error(`tar: ${stderr.trim() || err.message}`));
        else resolve();
      },
    );
    trackChild(child, false);
  });
}

/**
 * `commit`'s tree under a new scratch directory (`tree`), removed by `remove`; throws, saying why, when
 * the commit is unknown or its tree larger than MAX_TREE_BYTES.
 */
export async function commitTree(root: string, commit: string): Promise<{ tree: string; remove: () => Promise<void> }> {
  if (!isCommitName(commit)) throw new Error(`${commit} is no commit name`);
  const listing = (await gitBytes(root, ['ls-tree', '-r', '-l', '-z', '--end-of-options', commit])).toString('utf8');
  let bytes = 0;
  for (const entry of listing.split('\0')) {
    const size = /^\d+ blob [0-9a-f]+ +(\d+)\t/.exec(entry)?.[1];
    if (size !== undefined) bytes += Number(size);
  }
  if (bytes > MAX_TREE_BYTES) throw new Error(`the tree of ${commit} is larger than ${MAX_TREE_BYTES >> 20} MiB`);
  const scratch = await scratchDir('kr-commit-');
  try {
    const tar = join(scratch.dir, 'tree.tar');
    const tree = join(scratch.dir, 'tree');
    await gitBytes(root, ['archive', '--format=tar', `--output=${tar}`, '--end-of-options', commit]);
    await mkdir(tree);
    await untar(tar, tree);
    return { tree, remove: scratch.remove };
  } catch (err) {
    await scratch.remove();
    throw err;
  }
}
