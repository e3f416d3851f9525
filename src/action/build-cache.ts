/**
 * The build cache across workflow runs: the build-cache directory (kustomize/cache.ts) restored from
 * the Actions cache before the run and saved after it, with the toolkit's cache package.
 *
 * One Actions cache entry per save, keyed by the hash of the names of the entries it holds
 * (`kustomize-reconcile-builds-<os>-<arch>-<hash>`), restored by the prefix, newest first. Saved
 * only when the run kept something new: the same names make the same key, which is not saved
 * twice. What is restored is safe to use whatever its age or origin in the cache's scope: each entry
 * is named by the hash of its whole input (the kustomize binary's bytes, the prepared copy, the
 * environment), so it is used only for exactly that input. The Actions cache's own rule keeps a pull
 * request's saves in its own ref's scope, where runs of other branches never look; the directory lies
 * outside the workspace (RUNNER_TEMP), where a checked-out tree cannot put files.
 *
 * The cache is a speed-up: a service that is missing or fails costs the run its builds, and says so
 * once as a warning, never failing the run.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, realpath, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import * as core from './core.js';
import { cacheDirOf } from '../kustomize/cache.js';
import type { Settings } from '../options/settings.js';

/** The directory's name under RUNNER_TEMP when build-cache is empty. */
export const DEFAULT_DIR_NAME = 'kustomize-reconcile-builds';
/** Above this, a directory is not saved (the Actions cache of a repository holds 10 GB in all). */
const MAX_SAVE_BYTES = 1024 ** 3;

/** The Actions cache key prefix of this runner's kind. */
export const keyPrefix = (platform: string, arch: string): string => `kustomize-reconcile-builds-${platform}-${arch}-`;

/** The key of a directory holding `names` (entry file names, any order). */
export function keyOf(prefix: string, names: readonly string[]): string {
  const hash = createHash('sha256');
  for (const name of [...names].sort()) hash.update(`${name}\n`);
  return prefix + hash.digest('hex').slice(0, 32);
}

/** An entry file name as cache.ts writes it: the 64 hex digits of its key (temporary files are not). */
export const isEntryName = (name: string): boolean => /^[0-9a-f]{64}$/.test(name);

/** What the toolkit printed while it ran: its warnings (and errors), and its other lines; debug lines go. */
export function toolkitLines(text: string): { warnings: string[]; lines: string[] } {
  const warnings: string[] = [];
  const lines: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    const command = /^\s*::(warning|error|debug|notice)[^:]*::(.*)$/.exec(line);
    if (command) {
      if (command[1] === 'warning' || command[1] === 'error') warnings.push(unescapeData(command[2] ?? ''));
      continue;
    }
    if (line.trim() !== '' && !line.trimStart().startsWith('::')) lines.push(line);
  }
  return { warnings, lines };
}

/** A command's data as the toolkit escapes it (toCommandValue, escapeData), read back. */
const unescapeData = (s: string): string =>
  s
    .replaceAll('%0D', '\r')
    .replaceAll('%0A', '\n')
    .replaceAll('%3A', ':')
    .replaceAll('%2C', ',')
    .replaceAll('%25', '%');

/** The directory's entries, by file name, and their total size; none when it does not exist. */
async function entriesOf(dir: string): Promise<{ names: string[]; bytes: number }> {
  const names: string[] = [];
  let bytes = 0;
  for (const shard of await readdir(dir).catch(() => [] as string[])) {
    for (const name of await readdir(join(dir, shard)).catch(() => [] as string[])) {
      if (!isEntryName(name)) continue;
      names.push(name);
      bytes += (await stat(join(dir, shard, name)).catch(() => undefined))?.size ?? 0;
    }
  }
  return { names: names.sort(), bytes };
}

/** The build cache of one action run: its directory, and save() for the end of the run. */
export interface BuildCache {
  dir: string;
  save(): Promise<void>;
}

/**
 * The build-cache directory of this run (the input, else RUNNER_TEMP's), refused inside the
 * workspace, restored from the Actions cache when `actions-cache` is on and the service is there.
 * Without RUNNER_TEMP and the input (not on a runner), none.
 */
export async function openBuildCache(
  settings: Pick<Settings, 'buildCache' | 'actionsCache' | 'root'>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<BuildCache | undefined> {
  const temp = env['RUNNER_TEMP'];
  const named = settings.buildCache ?? (temp ? join(temp, DEFAULT_DIR_NAME) : undefined);
  if (named === undefined) return undefined;
  // Relative to the source root, as the build reads it (kustomize/build.ts).
  const given = resolve(settings.root, named);
  // A checked-out tree could carry entries anywhere in the workspace, not only inside root.
  const real = (path: string) => realpath(path).catch(() => path);
  let dir = await cacheDirOf(given, await real(settings.root));
  const workspace = env['GITHUB_WORKSPACE'];
  if (workspace) dir = await cacheDirOf(dir, await real(workspace), 'the workspace');
  if (!settings.actionsCache) return { dir, save: () => Promise.resolve() };
  const cache = await import('@actions/cache');
  if (!cache.isFeatureAvailable()) {
    core.info(`build-cache ${dir}: no Actions cache service here; kept for this job only`);
    return { dir, save: () => Promise.resolve() };
  }
  const prefix = keyPrefix(process.platform, process.arch);
  const at = inParent(dir);
  let warned = false;
  const warnOnce = (what: string, problem: string) => {
    if (warned) return;
    warned = true;
    core.warning(
      `build-cache: the Actions cache could not be ${what} (${problem}); each build it would have held runs kustomize, and the run goes on`,
    );
  };
  const restore = await quietly(
    at(() =>
      cache.restoreCache([basename(dir)], `${prefix}restore`, [prefix], {
        segmentTimeoutInMs: 120_000,
        timeoutInMs: 30_000,
      }),
    ),
  );
  if (restore.problem !== undefined) warnOnce('restored', restore.problem);
  const before = await entriesOf(dir);
  core.info(
    restore.value === undefined
      ? `build-cache ${dir}: nothing restored from the Actions cache`
      : `build-cache ${dir}: ${before.names.length} kept build(s) restored from the Actions cache (${restore.value})`,
  );
  return {
    dir,
    save: async () => {
      if (warned) return;
      const after = await entriesOf(dir);
      const key = keyOf(prefix, after.names);
      if (after.names.length === 0 || key === keyOf(prefix, before.names)) return;
      if (after.bytes > MAX_SAVE_BYTES) {
        core.info(`build-cache ${dir}: ${after.bytes} bytes, more than the Actions cache is given; not saved`);
        return;
      }
      const saved = await quietly(at(() => cache.saveCache([basename(dir)], key)));
      if (saved.problem !== undefined) warnOnce('saved', saved.problem);
      // -1: not saved, and the package said why above (another job saving the same entries, say).
      else if (saved.value !== undefined && saved.value !== -1)
        core.info(`build-cache ${dir}: ${after.names.length} kept build(s) saved to the Actions cache (${key})`);
    },
  };
}

/**
 * Runs `fn` (a call of the cache package) from the directory's parent, as if it were the workspace:
 * the package versions its entries by the paths as given and archives them relative to the
 * workspace, so that the entry is `kustomize-reconcile-builds/…` whatever runner wrote it, where
 * RUNNER_TEMP's path changes from job to job (act makes one per run; self-hosted runners differ).
 * Nothing else runs meanwhile (before the run, after it), so the process's directory can be borrowed.
 */
function inParent(dir: string): <T>(fn: () => Promise<T>) => () => Promise<T> {
  return (fn) => async () => {
    const cwd = process.cwd();
    const workspace = process.env['GITHUB_WORKSPACE'];
    await mkdir(dirname(dir), { recursive: true });
    process.chdir(dirname(dir));
    process.env['GITHUB_WORKSPACE'] = dirname(dir);
    try {
      return await fn();
    } finally {
      process.chdir(cwd);
      if (workspace === undefined) delete process.env['GITHUB_WORKSPACE'];
      else process.env['GITHUB_WORKSPACE'] = workspace;
    }
  };
}

/**
 * Runs the toolkit's cache package with what it prints held back: its debug lines dropped, its
 * warnings returned as the problem (the caller warns once), the rest said as info lines. Nothing
 * else runs meanwhile (before the run, after it), so the streams can be borrowed.
 */
async function quietly<T>(fn: () => Promise<T>): Promise<{ value?: T; problem?: string }> {
  let text = '';
  const streams = [process.stdout, process.stderr];
  // Each stream's own write (the output guard's), or none (the prototype's): put back as it was.
  const own = streams.map((s) => Object.getOwnPropertyDescriptor(s, 'write'));
  for (const s of streams) {
    s.write = (chunk: unknown, ...rest: unknown[]) => {
      text += typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8');
      const done = rest.find((r): r is () => void => typeof r === 'function');
      done?.();
      return true;
    };
  }
  let value: T | undefined;
  let thrown: string | undefined;
  try {
    value = await fn();
  } catch (err) {
    thrown = err instanceof Error ? err.message : String(err);
  } finally {
    streams.forEach((s, i) => {
      const d = own[i];
      if (d) Object.defineProperty(s, 'write', d);
      else Reflect.deleteProperty(s, 'write');
    });
  }
  const { warnings, lines } = toolkitLines(text);
  for (const line of lines) core.info(line);
  const problem = thrown ?? warnings[0];
  return { ...(value !== undefined ? { value } : {}), ...(problem !== undefined ? { problem } : {}) };
}
