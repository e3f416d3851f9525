/**
 * The build of a kustomization directory without kustomize, for the overlays most repositories are.
 * kustomize's answer to such a tree is computed here with its rules, in its order (its kusttarget):
 * each kustomization accumulates its resources (local YAML files in its own directory, local
 * directories with a kustomization file, each built first with its own transformers), runs its
 * generators, adds its components (each a kustomization of kind Component run on what is
 * accumulated so far), then runs its transformers; the fields each step reads are taken by the
 * readers overlay-steps.ts lists in that order. At the top, the finishing steps run (hash suffixes,
 * name references), and the output is sorted in the legacy order and printed through the JSON round
 * trip (plain-yaml.ts). Every file, field and value outside what is known to give kustomize's answer
 * returns undefined, and the build runs kustomize, which gives its own answer and its own errors.
 * The proof is the differential test against the real binary (__tests__/unit/overlay-build.test.ts
 * and the tests beside it).
 */
import { readFileSync, statSync } from 'node:fs';
import { join as joinPath, posix } from 'node:path';
import type { KubeObject } from '../objects/kube.js';
import { objectKey } from '../objects/kube.js';
import { yamlAliasProblem } from '../util/bounded.js';
import { isRecord } from '../util/record.js';
import { hasKustomizationEntry, KUSTOMIZATION_FILES } from './generate.js';
import { legacyOrder, mayHaveDuplicateIds } from './legacy-order.js';
import type { SpecFields } from './kustomization.js';
import { isRemoteRef, mergeKustomization } from './merge.js';
import { generatedKustomization } from './overlay-generated.js';
import { safeYaml } from './overlay-read.js';
import { FINISH, GENERATORS, KNOWN_FIELDS, TRANSFORMERS } from './overlay-steps.js';
import type { At, Built, FieldReader, Lookup } from './overlay-types.js';
import { asPrinted, plainObjects } from './plain-yaml.js';
import { listSource } from './source.js';

/** A file larger than this is read by kustomize, within the build's limits, not here. */
const MAX_FILE_BYTES = 32 * 1024 * 1024;

/** Bases within bases this build follows; deeper chains go to kustomize. */
const MAX_DEPTH = 64;

/** Text that may be a SOPS-encrypted file (its values, its metadata): left to the build with kustomize. */
const SOPS_TEXT = /ENC\[|sops/i;

/** A YAML comment whose text is a JSON object. */
const SCHEMA_COMMENT = /#\s*\{/;

const KUSTOMIZATION_API = 'kustomize.config.k8s.io/v1beta1';
const COMPONENT_API = 'kustomize.config.k8s.io/v1alpha1';

/** True when the spec sets no field this build cannot merge into the top kustomization. */
export function specIsOverlay(spec: SpecFields): boolean {
  return !spec.buildMetadata?.length;
}

/**
 * The build of the kustomization directory `relPath` of `realRoot` (see the module comment), or
 * undefined when the build must run kustomize. Origins are the files relative to the root.
 */
export async function buildOverlay(
  realRoot: string,
  relPath: string,
  spec: SpecFields,
  artifact = false,
): Promise<{ objects: KubeObject[]; origins: Map<string, string>; generated: boolean } | undefined> {
  if (!specIsOverlay(spec)) return undefined;
  // A directory without a kustomization file gets Flux's generated one (overlay-generated.ts).
  const generate = !hasKustomizationEntry(relPath === '.' ? realRoot : joinPath(realRoot, relPath));
  const { entries, ignore } = await listSource(realRoot, new Set(), artifact);
  const types = new Map<string, 'file' | 'dir' | 'symlink'>();
  const children = new Map<string, string[]>();
  for (const e of entries) {
    types.set(e.path.join('/'), e.type);
    const parent = e.path.length === 1 ? '.' : e.path.slice(0, -1).join('/');
    children.set(parent, [...(children.get(parent) ?? []), e.path[e.path.length - 1]!]);
  }
  // A file left out of the artifact is not in the copy; a directory is there when anything below it is.
  const lookup: Lookup = (path) => {
    if (path === '.') return 'dir';
    const type = types.get(path);
    if (type === undefined || type === 'dir') return type;
    return ignore(path.split('/'), false) ? undefined : type;
  };
  const top = relPath === '.' ? '.' : posix.normalize(relPath.split(/[\\/]/).join('/'));
  const generated = generate ? generatedKustomization(realRoot, top, lookup, children) : undefined;
  if (generate && generated === undefined) return undefined;
  let built = accumulate(new Walk(realRoot, lookup, spec, generated), top, [], 'top', []);
  for (const finish of FINISH) {
    if (built === undefined) return undefined;
    built = finish(built);
  }
  if (built === undefined || mayHaveDuplicateIds(built.map((b) => b.obj))) return undefined;
  const ordered = legacyOrder(built.map((b) => b.obj));
  if (ordered === undefined) return undefined;
  const originOf = new Map(built.map((b) => [b.obj, b.origin]));
  const objects: KubeObject[] = [];
  // A patch may have left what kustomize refuses or reads otherwise (a namespace not a string).
  for (const obj of ordered) {
    const printed = asPrinted(obj);
    if (typeof printed === 'string') return undefined;
    objects.push(printed);
  }
  return {
    objects,
    origins: new Map(objects.map((o, i) => [objectKey(o), originOf.get(ordered[i]!)!])),
    generated: generate,
  };
}

/** What every kustomization of one build shares. */
class Walk {
  constructor(
    readonly root: string,
    readonly lookup: Lookup,
    readonly spec: SpecFields,
    /** Flux's generated kustomization of the top directory, which has none of its own. */
    readonly generatedTop?: string,
  ) {}
}

/**
 * The objects of the kustomization directory `dir` (a posix path from the root) after its
 * generators, components and transformers, or undefined. `role` is what lists it: the build
 * itself (Flux's spec fields are merged into it), a `resources` entry, or a `components` entry,
 * which runs on `into` (what its parent accumulated so far). `stack` holds the directories being
 * built (a cycle is left to kustomize).
 */
function accumulate(
  walk: Walk,
  dir: string,
  stack: string[],
  role: 'top' | 'base' | 'component',
  into: Built[],
): Built[] | undefined {
  const { root, lookup } = walk;
  // A chain of bases deeper than any tree needs is left to kustomize (and this stack stays small).
  if (stack.length > MAX_DEPTH || stack.includes(dir) || lookup(dir) !== 'dir') return undefined;
  const virtual = role === 'top' && walk.generatedTop !== undefined;
  const found = virtual
    ? ['kustomization.yaml']
    : KUSTOMIZATION_FILES.filter((f) => lookup(join(dir, f)) !== undefined);
  if (!virtual && (found.length !== 1 || lookup(join(dir, found[0]!)) !== 'file')) return undefined;
  const file = join(dir, found[0]!);
  const ktext = virtual ? walk.generatedTop : readBounded(root, file);
  const k = ktext === undefined ? undefined : readKustomization(ktext, file, role, walk.spec);
  if (k === undefined) return undefined;
  const at: At = {
    root,
    dir,
    file,
    lookup,
    read: (entry) => readInside(root, dir, lookup, entry),
    top: role === 'top',
  };
  const resources = k['resources'] as string[];
  const components = k['components'] as string[];
  // Each step is read before anything is built: a field this build does not know leaves it all to kustomize.
  const generators = steps(GENERATORS, k, at);
  const transformers = steps(TRANSFORMERS, k, at);
  if (generators === undefined || transformers === undefined) return undefined;
  let out: Built[] | undefined = into;
  for (const entry of resources) {
    const path = entryPath(dir, entry);
    if (path === undefined) return undefined;
    const type = lookup(path);
    if (type === 'dir') {
      const base = accumulate(walk, path, [...stack, dir], 'base', []);
      if (base === undefined) return undefined;
      out.push(...base);
    } else if (type === 'file') {
      // The load restrictor keeps a kustomization's files inside its directory (ours copies others in).
      if (dir !== '.' && !path.startsWith(`${dir}/`)) return undefined;
      const text = readBounded(root, path);
      if (text === undefined) return undefined;
      const aliases = yamlAliasProblem(text, path);
      if (aliases !== undefined) throw new Error(aliases);
      // A comment holding JSON may give kyaml a schema for a field (kpt-style `# {"$openapi": …}`),
      // changing how a strategic merge treats it: left to kustomize.
      if (SCHEMA_COMMENT.test(text)) return undefined;
      // A file without objects is left to kustomize too, whose answer is not known here.
      const objects = plainObjects(text);
      if (objects === undefined || objects.length === 0) return undefined;
      for (const obj of objects) out.push({ obj, origin: path, fileName: obj.metadata.name });
    } else {
      return undefined;
    }
  }
  if (mayHaveDuplicateIds(out.map((b) => b.obj))) return undefined;
  for (const step of generators) {
    out = step(out);
    if (out === undefined || mayHaveDuplicateIds(out.map((b) => b.obj))) return undefined;
  }
  for (const entry of components) {
    const path = entryPath(dir, entry);
    if (path === undefined || lookup(path) !== 'dir') return undefined;
    out = accumulate(walk, path, [...stack, dir], 'component', out);
    if (out === undefined) return undefined;
  }
  for (const step of transformers) {
    out = step(out);
    if (out === undefined) return undefined;
  }
  return mayHaveDuplicateIds(out.map((b) => b.obj)) ? undefined : out;
}

/** The steps of the readers whose fields `k` sets, in the readers' order, or undefined when one cannot read them. */
function steps(readers: readonly FieldReader[], k: Readonly<Record<string, unknown>>, at: At) {
  const out = [];
  for (const reader of readers) {
    if (!reader.fields.some((f) => k[f] !== undefined)) continue;
    const step = reader.read(k, at);
    if (step === undefined) return undefined;
    out.push(step);
  }
  return out;
}

/** A local `resources`/`components` entry of the kustomization in `dir`, as a path from the root, or undefined. */
function entryPath(dir: string, entry: string): string | undefined {
  if (isRemoteRef(entry) || posix.isAbsolute(entry) || entry.includes('\\')) return undefined;
  const path = join(dir, entry);
  return path === '..' || path.startsWith('../') ? undefined : path;
}

/**
 * A file's text, or undefined when it is larger than MAX_FILE_BYTES: left to kustomize, whose
 * build runs within the build's time and memory limits.
 */
function readBounded(root: string, path: string): string | undefined {
  const full = posix.join(root, path);
  return statSync(full).size > MAX_FILE_BYTES ? undefined : readFileSync(full, 'utf8');
}

/** `entry` of the kustomization in `dir`, as a normalized posix path from the root. */
function join(dir: string, entry: string): string {
  return posix.normalize(posix.join(dir, entry));
}

/** The text of a file `entry` of the kustomization in `dir` names, when it is a regular file inside `dir`. */
function readInside(root: string, dir: string, lookup: Lookup, entry: string) {
  if (typeof entry !== 'string' || entry === '' || posix.isAbsolute(entry) || entry.includes('\\')) return undefined;
  if (isRemoteRef(entry)) return undefined;
  const path = join(dir, entry);
  if (path === '..' || path.startsWith('../') || (dir !== '.' && !path.startsWith(`${dir}/`))) return undefined;
  if (lookup(path) !== 'file') return undefined;
  const text = readBounded(root, path);
  if (text === undefined) return undefined;
  // A SOPS file (a generator's source, which the build with kustomize decrypts first, as Flux does).
  return SOPS_TEXT.test(text) ? undefined : { path, text };
}

/**
 * The value of a kustomization file's text (Flux's spec fields merged in at the top), with its
 * `resources` and `components` checked to be lists of strings, or undefined when it holds anything
 * this build does not know: a field no reader takes, a value whose reading might differ between
 * kustomize's YAML readers and ours (overlay-read.ts), the wrong kind for its role.
 */
function readKustomization(
  text: string,
  file: string,
  role: 'top' | 'base' | 'component',
  spec: SpecFields,
): Record<string, unknown> | undefined {
  if (yamlAliasProblem(text, file) !== undefined) return undefined;
  let value = safeYaml(text);
  if (!isRecord(value)) return undefined;
  if (Object.keys(value).some((f) => !KNOWN_FIELDS.has(f))) return undefined;
  const { apiVersion, kind } = value;
  if (role === 'component') {
    if (apiVersion !== COMPONENT_API || kind !== 'Component') return undefined;
  } else {
    if (apiVersion !== undefined && apiVersion !== KUSTOMIZATION_API) return undefined;
    if (kind !== undefined && kind !== 'Kustomization') return undefined;
  }
  for (const field of ['resources', 'components']) {
    const list = value[field] ?? [];
    if (!Array.isArray(list) || !list.every((r) => typeof r === 'string' && r !== '')) return undefined;
  }
  if (role === 'top') {
    // A kustomization without resources is given originAnnotations by Flux at the top: left to kustomize.
    if (!Array.isArray(value['resources']) || value['resources'].length === 0) return undefined;
    // Flux's spec fields go into the file as kustomize-controller merges them. Origin annotations the
    // merge switches on to learn the files are not part of kustomize's answer (the file has none: no
    // reader takes buildMetadata, and a spec that sets it is left to kustomize by specIsOverlay).
    const { kustomization } = mergeKustomization(value, spec);
    const { buildMetadata: _, ...merged } = kustomization;
    value = merged;
  }
  const k = value as Record<string, unknown>;
  return { ...k, resources: k['resources'] ?? [], components: k['components'] ?? [] };
}
