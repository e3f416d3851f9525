/**
 * kustomize's output kept between runs (the build-cache input), keyed by everything it depends on:
 * the kustomize binary (the SHA-256 of its bytes, so that the same release installed afresh on
 * another runner keys alike; hashed once a process), the directory built,
 * the environment it runs with, and the bytes of every file, directory and symbolic link of the
 * prepared copy it runs on (what the build reads, with Flux's spec fields merged in). kustomize
 * reads nothing else: its load restrictor keeps it inside the copy, plugins and Helm are off, and
 * no entry is kept for a build with remote bases. So an entry is found again only for exactly the
 * same input, and its output is the one kustomize would print: a stale entry cannot be applied.
 *
 * Never kept: a build whose copy had SOPS files decrypted into it (decrypted values never reach
 * the disk), an output that names the temporary copy, and the whole-tree build the limited copy
 * falls back to. The directory must lie outside the source root (a tree could carry entries) and
 * be writable by trusted jobs only, like the kustomize binary on PATH: on GitHub-hosted runners,
 * the action keeps it with the Actions cache (src/action/build-cache.ts), whose entries a pull
 * request cannot write for other branches. Entries not used for EVICT_AFTER_MS are removed when
 * another entry is written beside them.
 *
 * Within one run the same key is built once (BuildMemo), with or without the directory: a
 * Kustomization rendered for a claim, for its children and for its own reconcile, decrypted or not
 * (when no file was decrypted), runs kustomize once.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  lstat,
  mkdir,
  readdir,
  readFile,
  readlink,
  realpath,
  rename,
  rm,
  stat,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { findExecutable } from '../util/executable.js';
import { byBytes } from '../util/order.js';
import { UserError } from '../util/user-error.js';

const VERSION = 'kustomize-reconcile build cache 2';
const EVICT_AFTER_MS = 7 * 24 * 3600_000;
/** Larger outputs are not kept: the directory travels in the Actions cache, whose space is shared. */
const MAX_ENTRY_CHARS = 64 * 1024 ** 2;

/** The cache directory, refused inside the source root (where a tree could plant entries), or inside `what`. */
export async function cacheDirOf(dir: string, realRoot: string, what = 'the source root'): Promise<string> {
  const wanted = resolve(realRoot, dir);
  // The nearest existing ancestor, symlinks resolved: the directory itself may not exist yet.
  let probe = wanted;
  const rest: string[] = [];
  for (;;) {
    const real = await realpath(probe).catch(() => undefined);
    if (real !== undefined) {
      probe = join(real, ...rest);
      break;
    }
    const parent = dirname(probe);
    if (parent === probe) break;
    rest.unshift(basename(probe));
    probe = parent;
  }
  const inside = relative(realRoot, probe);
  if (inside === '' || (!inside.startsWith('..') && !isAbsolute(inside))) {
    throw new UserError(
      `build-cache ${dir} is inside ${what}: a tree could carry cache entries there; use a directory outside it, such as the action's default, \${{ runner.temp }}/kustomize-reconcile-builds`,
    );
  }
  return probe;
}

/** The content hashes of the binaries met, by real path, size, mtime and inode: each hashed once a process. */
const binaryHashes = new Map<string, Promise<string | undefined>>();

/** The binary kustomize runs as (findExecutable, as spawn finds it): the SHA-256 of its bytes. */
async function binaryId(bin: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const found = await findExecutable(bin, env);
  const real = found === undefined ? undefined : await realpath(found).catch(() => undefined);
  const s = real === undefined ? undefined : await stat(real).catch(() => undefined);
  if (real === undefined || !s?.isFile()) return undefined;
  const id = `${real}\0${s.size}\0${s.mtimeMs}\0${s.ino}`;
  let hash = binaryHashes.get(id);
  if (hash === undefined) {
    hash = readFile(real).then(
      (bytes) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`,
      () => undefined,
    );
    binaryHashes.set(id, hash);
  }
  return hash;
}

/** Every entry under `dir`, in byte order, with its content: files by their bytes, links by their target. */
async function digestTree(dir: string): Promise<string> {
  const hash = createHash('sha256');
  const walk = async (rel: string): Promise<void> => {
    const names = (await readdir(join(dir, rel))).sort(byBytes);
    for (const name of names) {
      const path = rel === '' ? name : `${rel}/${name}`;
      const s = await lstat(join(dir, path));
      if (s.isSymbolicLink()) {
        hash.update(`l\0${path}\0${await readlink(join(dir, path))}\0`);
      } else if (s.isDirectory()) {
        hash.update(`d\0${path}\0`);
        await walk(path);
      } else if (s.isFile()) {
        const bytes = await readFile(join(dir, path));
        hash.update(`f\0${path}\0${bytes.length}\0`);
        hash.update(bytes);
      } else {
        hash.update(`o\0${path}\0`);
      }
    }
  };
  await walk('');
  return hash.digest('hex');
}

/** The key of kustomize building `kdir` in `copyRoot` with `env`; undefined when the binary is not found. */
export async function buildKey(
  bin: string,
  copyRoot: string,
  kdir: string,
  env: NodeJS.ProcessEnv,
): Promise<string | undefined> {
  const binary = await binaryId(bin, env);
  if (binary === undefined) return undefined;
  const vars = Object.entries(env)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v ?? ''}`)
    .join('\0');
  const hash = createHash('sha256');
  hash.update(`${VERSION}\0${binary}\0${relative(copyRoot, kdir)}\0${vars}\0${await digestTree(copyRoot)}`);
  return hash.digest('hex');
}

const entryPath = (dir: string, key: string) => join(dir, key.slice(0, 2), key);

/** The output kept for `key`, if any (marked used, so that eviction keeps it). */
export async function readCached(dir: string, key: string): Promise<string | undefined> {
  const path = entryPath(dir, key);
  const text = await readFile(path, 'utf8').catch(() => undefined);
  if (text !== undefined) {
    const now = new Date();
    await utimes(path, now, now).catch(() => undefined);
  }
  return text;
}

/**
 * Keeps `text` for `key`: written to a name of its own, then renamed, so that a reader (or a build
 * of the same input at the same time) sees the whole entry or none. Entries beside it unused for a
 * week go. A cache that cannot be written only costs the next run a build: no error.
 */
export async function writeCached(dir: string, key: string, text: string): Promise<void> {
  const shard = join(dir, key.slice(0, 2));
  const tmp = `${entryPath(dir, key)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await mkdir(shard, { recursive: true, mode: 0o700 });
    await writeFile(tmp, text, { mode: 0o600, flag: 'wx' });
    await rename(tmp, entryPath(dir, key));
  } catch {
    await rm(tmp, { force: true }).catch(() => undefined);
    return;
  }
  const old = Date.now() - EVICT_AFTER_MS;
  for (const name of await readdir(shard).catch(() => [] as string[])) {
    const s = await stat(join(shard, name)).catch(() => undefined);
    if (s !== undefined && s.mtimeMs < old) await rm(join(shard, name), { force: true }).catch(() => undefined);
  }
}

/** One run's kustomize outputs by key (undefined: that output names its copy, so it is not reusable). */
export class BuildMemo {
  private readonly outputs = new Map<string, Promise<Output | undefined>>();
  /** How many builds were answered here instead of running kustomize. */
  hits = 0;
  /** The builds made without kustomize (build.ts), by their input; opaque here. */
  readonly inProcess = new Map<string, Promise<unknown>>();
  /** How many builds without kustomize were answered here instead of building again. */
  inProcessHits = 0;

  get(key: string): Promise<Output | undefined> | undefined {
    return this.outputs.get(key);
  }

  set(key: string, output: Promise<Output | undefined>): void {
    this.outputs.set(key, output);
  }
}

/** kustomize's output for a build, and whether it came from the build-cache directory. */
export interface Output {
  text: string;
  cached?: true;
}

/**
 * kustomize's output for `key`: this run's own (memo), else the directory's (dir), else `run()`'s,
 * kept in both when it does not name `work`, the build's temporary copy. Without a key, `run()`.
 * A build that failed, or whose output names its copy, is not shared: the next asker runs its own.
 */
export async function outputOf(
  key: string | undefined,
  where: { dir?: string | undefined; memo?: BuildMemo | undefined },
  work: string,
  run: () => Promise<string>,
): Promise<Output> {
  if (key === undefined) return { text: await run() };
  const { dir, memo } = where;
  // Looked up and set with no await between: two builds of one key at once run kustomize once.
  const pending = memo?.get(key);
  if (pending !== undefined) {
    const known = await pending;
    if (known === undefined) return { text: await run() };
    memo!.hits++;
    return known;
  }
  const made = (async (): Promise<Output & { names?: true }> => {
    const kept = dir === undefined ? undefined : await readCached(dir, key);
    if (kept !== undefined) return { text: kept, cached: true };
    const text = await run();
    // An output naming the copy (which the next build's is not) is not kept.
    if (text.includes(work)) return { text, names: true };
    if (dir !== undefined && text.length <= MAX_ENTRY_CHARS) await writeCached(dir, key, text);
    return { text };
  })();
  if (memo !== undefined) {
    memo.set(
      key,
      made.then(
        (o) => (o.names ? undefined : o),
        () => undefined,
      ),
    );
  }
  const { text, cached } = await made;
  return cached ? { text, cached } : { text };
}
