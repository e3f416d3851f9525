/**
 * Every file of the source root that a Kustomization's build reads, worked out from the
 * kustomization files the way the build walks them (confine.ts): the kustomization file of each
 * directory reached (spec.path, resources and bases that are directories, components, spec.components)
 * and every entry kustomize loads through its loader (resources, patches, generator files and env
 * files, replacements, openapi, configurations, crds, transformers, generators, validators). A
 * directory without a kustomization file is built over its YAML files (Flux's generated
 * kustomization), and over those of its subdirectories without a kustomization file, at any depth; a
 * subdirectory with one is listed as a resource, and only what that one lists is read. For the plan's
 * `affected`.
 */
import { readdir } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { findKustomizationFile, readKustomization } from './kustomization.js';
import { isRemoteRef } from './merge.js';
import { kustomizationFileInside } from './paths.js';
import { loadedEntries } from './references.js';

export interface Reads {
  /** Files read, relative to the root, `/`-separated. */
  files: Set<string>;
  /** Directories without a kustomization file (relative to the root; `.` for the root) whose YAML files are all read. */
  yamlDirs: Set<string>;
  /** Every directory the build walks into (kustomization directories and plain ones). */
  dirs: Set<string>;
}

/** A path below `root` (normalised, `/`-separated), or undefined when it leaves the root. */
function inside(dir: string, entry: string): string | undefined {
  const p = posix.normalize(posix.join(dir, entry.replaceAll('\\', '/')));
  if (p === '..' || p.startsWith('../') || posix.isAbsolute(p)) return undefined;
  return p.replace(/\/$/, '') || '.';
}

async function isDirectory(root: string, rel: string): Promise<boolean> {
  return readdir(join(root, rel)).then(
    () => true,
    () => false,
  );
}

/**
 * What building `path` (with Flux's `spec.components`, relative to it) reads under `root`. A file
 * that does not exist is still listed (adding it changes the build). Throws, naming the file, when a
 * kustomization file cannot be read: the caller then takes every change to affect the Kustomization.
 */
export async function buildReads(root: string, path: string, components: readonly string[] = []): Promise<Reads> {
  const reads: Reads = { files: new Set(), yamlDirs: new Set(), dirs: new Set() };
  const seen = new Set<string>();

  const walkDir = async (dir: string): Promise<void> => {
    if (seen.has(dir)) return;
    seen.add(dir);
    reads.dirs.add(dir);
    const file = await findKustomizationFile(join(root, dir));
    if (file === undefined) {
      await walkPlain(dir);
      return;
    }
    const shown = dir === '.' ? file : `${dir}/${file}`;
    reads.files.add(shown);
    // Never parsed through a link out of the root (the build then refuses it, naming the link).
    await kustomizationFileInside(root, join(root, dir), file, shown);
    const k = await readKustomization(join(root, shown), shown);
    for (const e of loadedEntries(k)) {
      if (isRemoteRef(e.entry)) continue;
      const p = inside(dir, e.entry);
      if (p === undefined) continue;
      if (e.dir && (await isDirectory(root, p))) await walkDir(p);
      else reads.files.add(p);
    }
  };

  /** A directory without a kustomization file: every YAML file below, and the kustomizations below it. */
  const walkPlain = async (dir: string): Promise<void> => {
    reads.yamlDirs.add(dir);
    reads.dirs.add(dir);
    const entries = await readdir(join(root, dir), { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (!entry.isDirectory() || entry.name === '.git') continue;
      const sub = dir === '.' ? entry.name : `${dir}/${entry.name}`;
      // Flux's generator lists a subdirectory with a kustomization file as a resource.
      if ((await findKustomizationFile(join(root, sub))) !== undefined) await walkDir(sub);
      else await walkPlain(sub);
    }
  };

  const base = inside('.', path) ?? '.';
  // A spec.path that does not exist yet is read all the same: adding it changes the build.
  await walkDir(base);
  for (const c of components) {
    const p = inside(base, c);
    if (p !== undefined) await walkDir(p);
  }
  return reads;
}

/**
 * Whether a change to `file` (relative to the root, `/`-separated) changes what `reads` builds: a file
 * the build reads (or one below an entry it lists that is not there yet), or a YAML file whose nearest
 * directory the build walks into is a plain one (Flux's generated kustomization reads its YAML files). A
 * file below a subdirectory with a kustomization file of its own is that kustomization's to list: a
 * plain parent reads only what it lists, as Flux's generator stops there.
 */
export function readsFile(reads: Reads, file: string): boolean {
  if (reads.files.has(file)) return true;
  const parts = file.split('/');
  for (let i = parts.length - 1; i > 0; i--) {
    const dir = parts.slice(0, i).join('/');
    // An entry listed that was not there yet (a directory it now is).
    if (reads.files.has(dir)) return true;
    if (reads.yamlDirs.has(dir)) return /\.ya?ml$/.test(file);
    if (reads.dirs.has(dir)) return false;
  }
  return reads.yamlDirs.has('.') && /\.ya?ml$/.test(file);
}
