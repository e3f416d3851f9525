import { constants, readdirSync } from 'node:fs';
import { copyFile, mkdir, readlink, symlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { mapLimit } from '../util/concurrency.js';

export interface CopyOptions {
  /** Entry names (files or directories, at any depth) left out of the copy and not looked into. */
  skip: (name: string) => boolean;
  /**
   * Entries left out by their path (components from the top) after the walk: a directory left
   * out is still looked into, and made in the copy only when something below it is copied
   * (source-controller's archive does the same with `.sourceignore`).
   */
  ignore?: (path: readonly string[], isDir: boolean) => boolean;
  /** Absolute paths left out of the copy (the copy's own directory, when it lies inside the source). */
  exclude?: ReadonlySet<string>;
  /** File copies in flight at once. */
  concurrency?: number;
}

/** An entry of a walked tree: its path components from the top and what it is. */
export interface TreeEntry {
  path: string[];
  type: 'dir' | 'file' | 'symlink';
}

/**
 * The entries below `from` (directories before what they hold), leaving out names `skip` refuses
 * and the absolute paths in `exclude`, neither of which is looked into. Symlinks are listed, never
 * followed; sockets, FIFOs and devices are left out.
 */
export function listTree(
  from: string,
  skip: (name: string) => boolean,
  exclude: ReadonlySet<string> = new Set(),
): Promise<TreeEntry[]> {
  const excluded = new Set([...exclude].map((p) => resolve(p)));
  const found: TreeEntry[] = [];
  // Synchronous: one readdir per directory with the entries' types, no stat, no round trip
  // through the thread pool per directory (at 1,000 files, several times faster than the promises).
  const walk = (dir: string, at: string[]): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (skip(entry.name)) continue;
      const s = join(dir, entry.name);
      if (excluded.size > 0 && excluded.has(resolve(s))) continue;
      const path = [...at, entry.name];
      if (entry.isDirectory()) {
        found.push({ path, type: 'dir' });
        walk(s, path);
      } else if (entry.isSymbolicLink()) found.push({ path, type: 'symlink' });
      else if (entry.isFile()) found.push({ path, type: 'file' });
    }
  };
  walk(from, []);
  return Promise.resolve(found);
}

/**
 * Copies a directory tree: directories, regular files (mode kept; a copy-on-write clone where the
 * file system offers one) and symlinks as they are (never followed; checked by the caller). Other
 * entries (sockets, FIFOs, devices) are left out. Unlike fs.cp, which copies one entry at a time
 * with a stat of each side, the files are copied concurrently: at 1,000 files, 3 to 4 times faster.
 * Returns the entries walked (before `ignore`), for callers that look for files in the tree.
 */
export async function copyTree(from: string, to: string, opts: CopyOptions): Promise<TreeEntry[]> {
  const all = await listTree(from, opts.skip, opts.exclude);
  await copyEntries(from, to, all, opts);
  return all;
}

/** Copies the `entries` of a {@link listTree} of `from` to `to`, as {@link copyTree} does. */
export async function copyEntries(
  from: string,
  to: string,
  all: readonly TreeEntry[],
  opts: Pick<CopyOptions, 'ignore' | 'concurrency'>,
): Promise<void> {
  const ignore = opts.ignore ?? (() => false);
  const dirs = new Set<string>(['']);
  const copies: (() => Promise<void>)[] = [];
  for (const { path, type } of all) {
    if (ignore(path, type === 'dir')) continue;
    // A kept entry needs its directory, even one that is itself ignored.
    for (let i = 1; i < path.length; i++) dirs.add(path.slice(0, i).join('/'));
    if (type === 'dir') {
      dirs.add(path.join('/'));
      continue;
    }
    const s = join(from, ...path);
    const d = join(to, ...path);
    copies.push(
      type === 'symlink' ? async () => symlink(await readlink(s), d) : () => copyFile(s, d, constants.COPYFILE_FICLONE),
    );
  }
  const concurrency = Math.max(1, opts.concurrency ?? 32);
  // `recursive` makes each one independent of the order they are made in.
  await mapLimit([...dirs], concurrency, (dir) =>
    mkdir(join(to, ...(dir === '' ? [] : dir.split('/'))), { recursive: true }),
  );
  await mapLimit(copies, concurrency, (copy) => copy());
}
