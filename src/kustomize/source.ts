/**
 * The temporary copy a build runs on: the source root as source-controller would put it in Flux's
 * artifact, so that the user's files are never touched and what Flux would leave out is left out.
 */
import { readFile, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { copyEntries, listTree, type TreeEntry } from './copy.js';
import { readsFile, type Reads } from './reads.js';
import { isIgnored, readPatterns, sourcePatterns, SOURCEIGNORE_FILE, type IgnorePattern } from './sourceignore.js';

/**
 * Directories never copied nor looked into: `.git` (source-controller's archive leaves it out
 * whatever `.sourceignore` says) and node_modules, which a workspace may hold after `npm ci` and
 * which would make the copy slow (manifests never live there).
 */
const PRUNED = new Set(['.git', 'node_modules']);

/**
 * Copies `realRoot` to `copyRoot` inside `work` (the build's temporary directory), leaving out what
 * `.sourceignore` files' patterns and source-controller's default exclusions leave out. `reads`, when
 * given, limits the copy to what a build reads (reads.ts): those files, the YAML files of the
 * directories it reads whole, and every symlink; other directories are made only on the way to them.
 */
export async function copySource(
  realRoot: string,
  work: string,
  copyRoot: string,
  artifact = false,
  reads?: Reads,
): Promise<void> {
  // RUNNER_TEMP may lie inside the workspace: the copy must not copy itself.
  const { entries, ignore } = await listSource(realRoot, new Set([work, await realpath(work)]), artifact);
  const kept = reads === undefined ? entries : entries.filter((e) => readBy(reads, e));
  await copyEntries(realRoot, copyRoot, kept, { ignore });
}

/**
 * Whether a build that reads `reads` needs `entry` in its copy: a file it reads, a directory it walks
 * (copyEntries makes the others on the way to what it copies), any symlink.
 */
function readBy(reads: Reads, entry: TreeEntry): boolean {
  const rel = entry.path.join('/');
  if (entry.type === 'symlink') return true;
  return entry.type === 'dir' ? reads.dirs.has(rel) : readsFile(reads, rel);
}

/** The entries of a source root, and which of them Flux's artifact leaves out. */
export interface SourceListing {
  /** Every entry walked (directories before what they hold), ignored ones included. */
  entries: TreeEntry[];
  /** True for an entry left out of the artifact (and so out of the copy). */
  ignore: (path: readonly string[], isDir: boolean) => boolean;
}

/**
 * The entries of `realRoot` as {@link copySource} copies them: PRUNED names and `exclude` never
 * walked, `.sourceignore` patterns and source-controller's default exclusions in `ignore` (none for
 * an `artifact`, a tree that already is what Flux stores).
 */
export async function listSource(
  realRoot: string,
  exclude: ReadonlySet<string> = new Set(),
  artifact = false,
): Promise<SourceListing> {
  const entries = await listTree(realRoot, (name) => PRUNED.has(name), exclude);
  // An artifact already is what Flux stores: nothing more is left out of it.
  if (artifact) return { entries, ignore: () => false };
  const patterns = sourcePatterns(await readSourceIgnores(realRoot, entries));
  return { entries, ignore: (path, isDir) => isIgnored(patterns, path, isDir) };
}

/**
 * The patterns of every `.sourceignore` file (a regular file) among `entries`, each scoped to its
 * directory, shallower files first: the order source-controller loads them in, as far as it
 * matters (only a file's ancestors' patterns can match the same paths as its own).
 */
async function readSourceIgnores(root: string, entries: readonly TreeEntry[]): Promise<IgnorePattern[]> {
  const files = entries
    .filter((e) => e.type === 'file' && e.path[e.path.length - 1] === SOURCEIGNORE_FILE)
    .sort((a, b) => a.path.length - b.path.length);
  const texts = await Promise.all(files.map((f) => readFile(join(root, ...f.path), 'utf8')));
  return files.flatMap((f, i) => readPatterns(texts[i]!, f.path.slice(0, -1)));
}
