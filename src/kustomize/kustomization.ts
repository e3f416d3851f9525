/**
 * The kustomization file a build runs: the directory's own (read with the bounded parser) or one
 * generated over its YAML files as Flux does, with Flux's spec fields merged in, written in place
 * of the original in the temporary copy.
 */
import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseYamlValue } from '../objects/yaml.js';
import { yamlAliasProblem } from '../util/bounded.js';
import { mapLimit } from '../util/concurrency.js';
import { byBytes } from '../util/order.js';
import { generateKustomization, KUSTOMIZATION_FILES, type Entry } from './generate.js';
import { mergeKustomization, type BuildFields } from './merge.js';
import { kustomizationFileInside, toPosix } from './paths.js';

/** The Kustomization spec fields that shape the kustomization file. */
export interface SpecFields extends Omit<BuildFields, 'components'> {
  /** spec.components, relative to `path`; checked to exist (or dropped when missing and ignored). */
  components?: readonly string[];
  ignoreMissingComponents?: boolean;
}

/** The kustomization file as written, and what the build needs to know of it. */
export interface Prepared {
  /** True when the directory had no kustomization file and one was generated over its YAML files. */
  generated: boolean;
  /** True when origin annotations were switched on only to learn each object's file. */
  addedOrigin: boolean;
  /** Components dropped because they are missing and ignoreMissingComponents is set. */
  missingComponents: string[];
}

/** Files read at once (a kustomization's entries, a directory's YAML files). */
export const READ_CONCURRENCY = 16;

/**
 * Writes the kustomization file of `kdir` (the directory `relPath` in the copy below
 * `realCopyRoot`) that kustomize will build: the directory's own or a generated one, `spec` merged in.
 */
export async function prepareKustomization(
  kdir: string,
  relPath: string,
  realCopyRoot: string,
  spec: SpecFields,
  /** Switch origin annotations on to learn each object's file (merge.ts). */
  traceOrigins = true,
): Promise<Prepared> {
  const found = await findKustomizationFile(kdir);
  let existing: Record<string, unknown>;
  if (found) {
    // A symlinked kustomization file may not pull in (nor, below, be written over) a file outside the tree.
    await kustomizationFileInside(realCopyRoot, kdir, found, toPosix(join(relPath, found)));
    existing = await readKustomization(join(kdir, found), join(relPath, found));
  } else {
    existing = { ...generateKustomization(await scan(kdir, ''), relPath === '.' ? '' : toPosix(relPath)) };
  }
  const { components, missing } = await checkComponents(
    kdir,
    relPath,
    spec.components ?? [],
    spec.ignoreMissingComponents ?? false,
  );
  const { kustomization, addedOrigin } = mergeKustomization(
    existing,
    { ...buildFields(spec), components },
    found ? 'file' : 'generated',
    traceOrigins,
  );
  await replaceKustomization(join(kdir, found ?? 'kustomization.yaml'), kustomization);
  return { generated: !found, addedOrigin, missingComponents: missing };
}

/**
 * Writes `kustomization` to `kfile`, replacing it, never writing through it: the copy keeps the
 * tree's symlinks, and one (even a dangling one) in place of the kustomization file would otherwise
 * make the write land outside the copy.
 */
export async function replaceKustomization(kfile: string, kustomization: unknown): Promise<void> {
  await rm(kfile, { force: true });
  // As JSON, which every YAML reader reads alike: written as YAML 1.2, a string such as `yes` or
  // `0755` (quoted in the user's file) would reach kustomize unquoted, and its YAML 1.1 reader would
  // take it for a boolean or a number.
  await writeFile(kfile, `${JSON.stringify(kustomization, null, 2)}\n`, { flag: 'wx' });
}

function buildFields(o: SpecFields) {
  return {
    targetNamespace: o.targetNamespace,
    namePrefix: o.namePrefix,
    nameSuffix: o.nameSuffix,
    patches: o.patches,
    images: o.images,
    buildMetadata: o.buildMetadata,
  };
}

export async function findKustomizationFile(dir: string): Promise<string | undefined> {
  for (const name of KUSTOMIZATION_FILES) {
    const info = await stat(join(dir, name)).catch(() => undefined);
    if (info?.isFile()) return name;
  }
  return undefined;
}

export async function readKustomization(file: string, shown: string): Promise<Record<string, unknown>> {
  return kustomizationFromText(await readFile(file, 'utf8'), shown);
}

/**
 * A kustomization file's text as a map, read with the bounded parser (aliases that recurse or
 * expand past the bound refused first: see util/bounded.ts); errors name `shown`.
 */
export function kustomizationFromText(text: string, shown: string): Record<string, unknown> {
  const aliases = yamlAliasProblem(text, shown);
  if (aliases !== undefined) throw new Error(aliases);
  const doc = parseYamlValue(text, shown);
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc))
    throw new Error(`${shown}: a kustomization must be a YAML mapping`);
  return doc as Record<string, unknown>;
}

/** Flux's spec.components are relative to the kustomization directory; missing ones fail unless ignored. */
async function checkComponents(kdir: string, relPath: string, components: readonly string[], ignoreMissing: boolean) {
  const present: string[] = [];
  const missing: string[] = [];
  for (const [i, c] of components.entries()) {
    if (await stat(join(kdir, c)).catch(() => undefined)) {
      present.push(c);
    } else if (ignoreMissing) {
      missing.push(c);
    } else {
      throw new Error(
        `spec.components[${i}] "${c}" not found relative to ${relPath}; fix the path or set spec.ignoreMissingComponents: true to skip missing components`,
      );
    }
  }
  return { components: present, missing };
}

/**
 * Lists YAML files and kustomization sub-directories below `dir`, paths relative to the top, in the
 * order of Flux's walk: depth first, each directory's entries sorted by name (byte order), a
 * directory with a kustomization file listed instead of its contents. A file counts by its
 * extension (`.yaml` or `.yml`, case-sensitive), hidden files included, as in Flux.
 */
async function scan(top: string, rel: string): Promise<Entry[]> {
  const dirents = await readdir(join(top, rel), { withFileTypes: true });
  const sorted = dirents.sort((a, b) => byBytes(a.name, b.name));
  // Read concurrently, kept in name order.
  const parts = await mapLimit(sorted, READ_CONCURRENCY, async (d): Promise<Entry[]> => {
    const childRel = rel === '' ? d.name : `${rel}/${d.name}`;
    if (d.isDirectory()) {
      if (await findKustomizationFile(join(top, childRel)))
        return [{ kind: 'dir', path: childRel, hasKustomization: true }];
      return scan(top, childRel);
    }
    if (d.isFile() && /\.ya?ml$/.test(d.name)) {
      return [{ kind: 'file', path: childRel, text: await readFile(join(top, childRel), 'utf8') }];
    }
    return [];
  });
  return parts.flat();
}
