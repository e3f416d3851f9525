import { readFile, realpath, stat, writeFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { parse } from 'yaml';
import { yamlShapeProblem } from '../util/yaml-shape.js';
import { KUSTOMIZATION_FILES } from '../kustomize/generate.js';
import { isRemoteRef } from '../kustomize/merge.js';
import { decryptText, formatForPath, isSopsEncrypted } from './decrypt.js';
import { confinedPath } from '../util/confine.js';
import { SopsError, type DecryptOptions, type SopsFormat } from './types.js';

const MAX_FILE_BYTES = 5 * 1024 * 1024;

/**
 * Flux's DecryptSources, before the build: from the kustomization in `kdir`, through its local
 * resources and components (never leaving `root`), every secretGenerator file and env file and
 * every patch file that holds a SOPS document is decrypted in place. This runs on the build's
 * temporary copy, never on the user's tree. Returns the files decrypted, relative to the root.
 */
export async function decryptSources(root: string, kdir: string, opts: DecryptOptions): Promise<string[]> {
  const done: string[] = [];
  await walk({ root, realRoot: await realpath(root) }, kdir, new Set(), opts, done);
  return done;
}

/** The root as given (for names in messages) and with symlinks resolved (for the containment checks). */
interface Root {
  root: string;
  realRoot: string;
}

/**
 * The real path of `path` (from `dir`) when it stays inside the root with every symlink followed
 * (util/confine.ts), else undefined: the copy keeps the tree's links, and decrypting in place through
 * one that leads out would write plaintext there (the build has refused such an entry already).
 */
async function insideRoot(r: Root, dir: string, path: string): Promise<string | undefined> {
  return confinedPath(r.root, path, { file: '', field: 'SOPS file' }, { from: dir }).catch(() => undefined);
}

async function walk(r: Root, dir: string, seen: Set<string>, opts: DecryptOptions, done: string[]): Promise<void> {
  if (seen.has(dir)) return;
  seen.add(dir);
  let k: Record<string, unknown> | undefined;
  for (const name of KUSTOMIZATION_FILES) {
    const text = await readFile(join(dir, name), 'utf8').catch(() => undefined);
    if (text !== undefined) {
      const shape = yamlShapeProblem(text, name);
      if (shape !== undefined) throw new Error(shape);
      k = (parse(text, { maxAliasCount: 100, uniqueKeys: false, logLevel: 'error' }) ?? {}) as Record<string, unknown>;
      break;
    }
  }
  if (!k) return;
  const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
  for (const gen of list(k['secretGenerator'])) {
    const g = (gen ?? {}) as { files?: unknown; envs?: unknown; env?: unknown };
    for (const entry of list(g.files)) {
      if (typeof entry !== 'string') continue;
      const eq = entry.indexOf('=');
      const key = eq >= 0 ? entry.slice(0, eq) : entry;
      const path = eq >= 0 ? entry.slice(eq + 1) : entry;
      await decryptFile(r, dir, path, formatForPath(key), opts, done);
    }
    for (const entry of [...list(g.envs), g.env]) {
      if (typeof entry !== 'string') continue;
      const format = formatForPath(entry);
      await decryptFile(r, dir, entry, format === 'binary' ? 'dotenv' : format, opts, done);
    }
  }
  for (const patch of list(k['patches'])) {
    const path = (patch as { path?: unknown } | null)?.path;
    if (typeof path === 'string' && !isRemoteRef(path))
      await decryptFile(r, dir, path, formatForPath(path), opts, done);
  }
  for (const field of ['resources', 'components', 'bases']) {
    for (const entry of list(k[field])) {
      if (typeof entry !== 'string' || isRemoteRef(entry)) continue;
      const target = await insideRoot(r, dir, entry);
      if (target === undefined) continue;
      if ((await stat(target).catch(() => undefined))?.isDirectory()) await walk(r, target, seen, opts, done);
    }
  }
}

async function decryptFile(
  r: Root,
  dir: string,
  path: string,
  format: SopsFormat,
  opts: DecryptOptions,
  done: string[],
): Promise<void> {
  const file = await insideRoot(r, dir, path);
  if (file === undefined) return;
  const info = await stat(file).catch(() => undefined);
  if (!info?.isFile() || info.size > MAX_FILE_BYTES) return;
  const text = await readFile(file, 'utf8');
  const shown = relative(r.realRoot, file).split(sep).join('/');
  if (!isSopsEncrypted(text, format)) {
    // Ciphertext without its metadata (a dotenv file whose sops_* lines were dropped) cannot be
    // decrypted, and would be deployed as ENC[…] text.
    if (/ENC\[AES256_GCM,data:/.test(text))
      throw new Error(
        `${shown}: holds SOPS ciphertext (ENC[AES256_GCM,…]) but no SOPS metadata (for a dotenv file, its sops_* lines); encrypt the file again with sops`,
      );
    return;
  }
  try {
    await writeFile(file, await decryptText(text, format, opts));
  } catch (err) {
    throw new SopsError(`${shown}: SOPS decryption failed: ${(err as Error).message}`, { cause: err });
  }
  done.push(shown);
}
