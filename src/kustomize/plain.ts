/**
 * The build of a plain directory without kustomize: when `path` holds only YAML files of plain
 * Kubernetes objects (no kustomization file anywhere below it, so Flux's generated kustomization
 * lists its files and nothing else) and the spec sets no field that Flux merges into the
 * kustomization, `kustomize build` does nothing but read the objects, put them in its legacy
 * order and print them through its JSON round trip. That is computed here, in a fraction of
 * kustomize's time (no copy of the tree, no process, one parse), for the trees where it is
 * provably the same answer: same objects, same order, same values as our parser reads kustomize's
 * output, same origins. Anything else (and every tree kustomize would refuse) returns undefined and
 * the build runs kustomize as before, which gives its own answer and its own errors. The proof is
 * the differential test against the real binary (__tests__/unit/plain-build.test.ts).
 */
import { readFileSync } from 'node:fs';
import { join, normalize } from 'node:path';
import type { KubeObject } from '../objects/kube.js';
import { objectKey } from '../objects/kube.js';
import { hasKustomizationEntry, KUSTOMIZATION_FILES } from './generate.js';
import { legacyOrder, mayHaveDuplicateIds } from './legacy-order.js';
import type { SpecFields } from './kustomization.js';
import { toPosix } from './paths.js';
import { plainObjects } from './plain-yaml.js';
import { listSource } from './source.js';
import { yamlAliasProblem } from '../util/bounded.js';
import { findExecutable } from '../util/executable.js';
import { byBytes } from '../util/order.js';

/**
 * True when none of the spec fields that Flux merges into the kustomization changes it (the same
 * tests mergeKustomization makes: an empty string or list changes nothing).
 */
export function specIsPlain(spec: SpecFields): boolean {
  return (
    !spec.targetNamespace &&
    !spec.namePrefix &&
    !spec.nameSuffix &&
    !spec.patches?.length &&
    !spec.images?.length &&
    !spec.components?.length &&
    !spec.buildMetadata?.length
  );
}

/**
 * True when `bin` names an executable file (a path) or one on PATH, as spawn would find it: a
 * missing kustomize fails a plain build as it fails any other. Off POSIX, always false (the build
 * runs kustomize).
 */
export async function kustomizeFound(bin: string, env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  return process.platform !== 'win32' && (await findExecutable(bin, env)) !== undefined;
}

/**
 * The YAML files of `relPath` (components from the root) in the order of Flux's generated
 * kustomization (depth first, each directory's entries by name), as paths relative to it; or
 * undefined when the directory is not plain: it or a directory below it has a kustomization file
 * (or an entry so named), something below it is a symlink, it is left out of the artifact, or it
 * holds no YAML file (Flux then writes a placeholder kustomization).
 */
async function plainFiles(realRoot: string, relPath: string, artifact: boolean): Promise<string[][] | undefined> {
  const top = relPath === '.' ? [] : relPath.split(/[\\/]/);
  const { entries, ignore } = await listSource(realRoot, new Set(), artifact);
  if (top.length > 0 && (ignore(top, true) || !entries.some((e) => e.type === 'dir' && same(e.path, top)))) {
    return undefined;
  }
  const files: string[][] = [];
  for (const entry of entries) {
    if (entry.path.length <= top.length || !top.every((c, i) => entry.path[i] === c)) continue;
    if (ignore(entry.path, entry.type === 'dir')) continue;
    const name = entry.path[entry.path.length - 1]!;
    if ((KUSTOMIZATION_FILES as readonly string[]).includes(name) || entry.type === 'symlink') return undefined;
    if (entry.type === 'file' && /\.ya?ml$/.test(name)) files.push(entry.path.slice(top.length));
  }
  if (files.length === 0) return undefined;
  return files.sort((a, b) => {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const c = byBytes(a[i]!, b[i]!);
      if (c !== 0) return c;
    }
    return a.length - b.length;
  });
}

function same(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((c, i) => c === b[i]);
}

/**
 * The build of the plain directory `relPath` of `realRoot` (see the module comment), or undefined
 * when the build must run kustomize. Origins are the files relative to the root, as readOutput gives them.
 * A file whose aliases recurse or expand past the bound fails it as it fails kustomize's build
 * (util/bounded.ts), naming the file and the line.
 */
export async function buildPlain(
  realRoot: string,
  relPath: string,
  artifact = false,
): Promise<{ objects: KubeObject[]; origins: Map<string, string> } | undefined> {
  const dir = relPath === '.' ? realRoot : join(realRoot, relPath);
  // The common case of a kustomization directory, told before the walk of the whole tree.
  if (hasKustomizationEntry(dir)) return undefined;
  const files = await plainFiles(realRoot, relPath, artifact);
  if (files === undefined) return undefined;
  // Read synchronously, one file after the other: small files, parsed on this thread anyway; the
  // promises' open, stat, read and close each take a trip through the thread pool.
  const perFile = files.map((path) => {
    const text = readFileSync(join(dir, ...path), 'utf8');
    const origin = toPosix(normalize(join(relPath, ...path)));
    const aliases = yamlAliasProblem(text, origin);
    if (aliases !== undefined) throw new Error(aliases);
    return { origin, found: plainObjects(text) };
  });
  const objects: KubeObject[] = [];
  const fileOf = new Map<KubeObject, string>();
  for (const { origin, found } of perFile) {
    if (found === undefined) return undefined;
    for (const obj of found) {
      objects.push(obj);
      fileOf.set(obj, origin);
    }
  }
  if (mayHaveDuplicateIds(objects)) return undefined;
  const ordered = legacyOrder(objects);
  if (ordered === undefined) return undefined;
  return { objects: ordered, origins: new Map(ordered.map((o) => [objectKey(o), fileOf.get(o)!])) };
}
