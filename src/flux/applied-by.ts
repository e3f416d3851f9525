import { readFile, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { confinedPath } from '../util/confine.js';
import { isRemoteRef } from '../kustomize/merge.js';
import { parseYamlValue } from '../objects/yaml.js';
import { DEFAULT_NAMESPACE } from './parse.js';
import type { KustomizationSpec } from './types.js';

/*
 * Under Flux, a Kustomization defined in a file that another Kustomization builds is an object that
 * this parent applies: it ends up with the namespace and name the parent's build gives it. kustomize's
 * namespace transformer (the parent's spec.targetNamespace, or a `namespace:` of a kustomization.yaml on
 * the way) sets the namespace of every namespaced object, overriding the one written in the file;
 * without one, the file's metadata.namespace stays. Its prefix/suffix transformer (spec.namePrefix and
 * spec.nameSuffix, which replace the top kustomization's, and the namePrefix/nameSuffix of every
 * kustomization.yaml on the way) renames it. This module finds which Kustomization files each parent
 * builds (I/O, following Flux's generated kustomization and kustomize's references) and decides the
 * namespace and name (pure).
 */

/** What the kustomization files on the way to a file do to the objects in it. */
export interface Transform {
  /** The namespace one of them sets (the outermost wins, as kustomize applies it last); undefined for none. */
  namespace: string | undefined;
  /** Their name prefixes and suffixes, outermost prefix first and outermost suffix last. */
  prefix: string;
  suffix: string;
}

/** A Kustomization as this rule sees it: where it is defined and what it builds. */
export interface NamespaceCandidate {
  /** `namespace/name` as written, for messages. */
  key: string;
  /** metadata.name as written. */
  name: string;
  /** The file that defines it, relative to the source root with `/` separators. */
  file: string;
  /** metadata.namespace as written; undefined when left out. */
  ownNamespace: string | undefined;
  targetNamespace: string | undefined;
  /**
   * The files its build reads resources from, relative to the source root, each with what the build
   * does to them (spec.namePrefix and spec.nameSuffix already in, spec.targetNamespace not).
   */
  builds: ReadonlyMap<string, Transform>;
}

export type NamespaceDecision =
  | { namespace: string; name: string; appliedBy?: string }
  | { problem: string; namespace?: undefined; name?: undefined; appliedBy?: undefined };

/**
 * The namespace and name each candidate has under Flux, in input order. A Kustomization built by
 * another one takes that parent's targetNamespace, else the namespace a kustomization.yaml in the
 * parent's build sets, else its own metadata.namespace, and the prefixes and suffixes of that build;
 * one built by none (applied from outside, e.g. by bootstrap) keeps its own namespace, `flux-system`
 * when it has none. A Kustomization never counts as its own parent. When two parents would give it
 * different identities, Flux would create two objects; that is reported as a problem.
 */
export function decideNamespaces(candidates: readonly NamespaceCandidate[]): NamespaceDecision[] {
  return candidates.map((child) => {
    const found = new Map<string, { namespace: string; name: string; parent: string }>();
    for (const parent of candidates) {
      const transform = parent === child ? undefined : parent.builds.get(child.file);
      if (transform === undefined) continue;
      const namespace = parent.targetNamespace ?? transform.namespace ?? child.ownNamespace ?? DEFAULT_NAMESPACE;
      const name = `${transform.prefix}${child.name}${transform.suffix}`;
      const key = `${namespace}/${name}`;
      if (!found.has(key)) found.set(key, { namespace, name, parent: parent.key });
    }
    if (found.size === 0) return { namespace: child.ownNamespace ?? DEFAULT_NAMESPACE, name: child.name };
    if (found.size > 1) {
      const list = [...found].map(([key, { parent }]) => `${parent} makes it ${key}`).join(', ');
      return {
        problem:
          `${child.file}: Kustomization ${child.key} is built by several Kustomizations that give it different ` +
          `namespaces or names (${list}); Flux would create one copy each. Keep the file in the path of one of them`,
      };
    }
    const [{ namespace, name, parent }] = [...found.values()] as [{ namespace: string; name: string; parent: string }];
    return { namespace, name, appliedBy: parent };
  });
}

// ---------------------------------------------------------------------------------------------
// Which files a Kustomization builds (I/O)
// ---------------------------------------------------------------------------------------------

const KUSTOMIZATION_FILES = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'];
/** The kustomization fields whose local entries bring resources into the build. */
const RESOURCE_FIELDS = ['resources', 'bases', 'components'];

type Mapping = Record<string, unknown>;

function toPosix(path: string): string {
  return path.split(sep).join('/');
}

function insideRoot(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

async function isFile(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isFile() === true;
}

async function isDirectory(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() === true;
}

/**
 * The kustomization file of `dir`, parsed; null when there is none; undefined when it cannot be read as
 * a mapping (the build reports that, with its own message).
 */
async function kustomizationOf(dir: string, realRoot: string): Promise<Mapping | null | undefined> {
  for (const name of KUSTOMIZATION_FILES) {
    const file = join(dir, name);
    if (!(await isFile(file))) continue;
    try {
      // A symlink may point out of the checkout; what is outside is not read (the build refuses it).
      await confinedPath(realRoot, file, { file: '', field: 'kustomization file' });
      const value = parseYamlValue(await readFile(file, 'utf8'), file);
      return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Mapping) : undefined;
    } catch {
      return undefined;
    }
  }
  return null;
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function stringField(k: Mapping, field: string): string | undefined {
  const value = k[field];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The top kustomization's namePrefix/nameSuffix as Flux's spec fields replace them. */
interface Top {
  namePrefix?: string | undefined;
  nameSuffix?: string | undefined;
}

const NOTHING: Transform = { namespace: undefined, prefix: '', suffix: '' };

class BuildWalk {
  readonly files = new Map<string, Transform>();
  private readonly seen = new Set<string>();
  /** The kustomization directories being followed: a reference back to one is a cycle (kustomize refuses it). */
  private readonly stack = new Set<string>();

  constructor(
    private readonly root: string,
    private readonly realRoot: string,
  ) {}

  private read(dir: string): Promise<Mapping | null | undefined> {
    return kustomizationOf(dir, this.realRoot);
  }

  private record(path: string, transform: Transform): void {
    const rel = toPosix(relative(this.root, path));
    if (!this.files.has(rel)) this.files.set(rel, transform);
  }

  /** Follows a kustomization's local resources, bases and components, as kustomize loads them. */
  async kustomization(dir: string, k: Mapping, outer: Transform, top?: Top, extra: string[] = []): Promise<void> {
    const key = `${dir}\u0000${JSON.stringify(outer)}`;
    if (this.seen.has(key) || this.stack.has(dir)) return;
    this.seen.add(key);
    this.stack.add(dir);
    try {
      await this.follow(dir, k, outer, top, extra);
    } finally {
      this.stack.delete(dir);
    }
  }

  private async follow(
    dir: string,
    k: Mapping,
    outer: Transform,
    top: Top | undefined,
    extra: string[],
  ): Promise<void> {
    const transform: Transform = {
      namespace: outer.namespace ?? stringField(k, 'namespace'),
      prefix: outer.prefix + ((top ? top.namePrefix : undefined) ?? stringField(k, 'namePrefix') ?? ''),
      suffix: ((top ? top.nameSuffix : undefined) ?? stringField(k, 'nameSuffix') ?? '') + outer.suffix,
    };
    const entries = [...RESOURCE_FIELDS.flatMap((field) => stringList(k[field])), ...extra];
    for (const entry of entries) {
      if (isRemoteRef(entry)) continue;
      const path = resolve(dir, entry);
      if (!insideRoot(this.root, path)) continue;
      // Nor through a symlink (util/confine.ts): a file outside is never looked at.
      if (
        (await confinedPath(this.root, entry, { file: '', field: 'entry' }, { from: dir }).catch(() => undefined)) ===
        undefined
      )
        continue;
      if (await isFile(path)) {
        this.record(path, transform);
      } else if (await isDirectory(path)) {
        const inner = await this.read(path);
        if (inner) await this.kustomization(path, inner, transform);
      }
    }
  }

  /**
   * Flux's generated kustomization for a directory without one: every .yaml/.yml file below it, except
   * that a subdirectory holding a kustomization file is taken whole (through its kustomization). Only
   * the `candidates` (files that may hold Kustomizations) are looked up, not the whole tree.
   */
  async generated(dir: string, candidates: readonly string[], top: Top, components: string[]): Promise<void> {
    const transform: Transform = { namespace: undefined, prefix: top.namePrefix ?? '', suffix: top.nameSuffix ?? '' };
    if (components.length > 0) await this.kustomization(dir, {}, NOTHING, top, components);
    for (const candidate of candidates) {
      const path = resolve(this.root, candidate);
      const rel = relative(dir, path);
      if (rel === '' || rel.startsWith(`..${sep}`) || isAbsolute(rel) || !/\.ya?ml$/.test(path)) continue;
      // From the top down: the first subdirectory with a kustomization file decides.
      let covered = false;
      let sub = dir;
      for (const part of rel.split(sep).slice(0, -1)) {
        sub = join(sub, part);
        const k = await this.read(sub);
        if (k === null) continue;
        covered = true;
        if (k) await this.kustomization(sub, k, transform);
        break;
      }
      if (!covered) this.record(path, transform);
    }
  }
}

/**
 * The files among `candidates` (paths relative to `root`) that a Kustomization with `path` (normalised,
 * relative to root), spec.components, spec.namePrefix and spec.nameSuffix builds, each with what the
 * build does to it. Files referenced by a kustomization.yaml are included whether or not they are
 * candidates. Unreadable kustomization files and missing entries are skipped: the build reports them.
 */
export async function builtFiles(
  root: string,
  spec: { path: string; components: readonly string[]; namePrefix?: string; nameSuffix?: string },
  candidates: readonly string[],
): Promise<Map<string, Transform>> {
  const absoluteRoot = resolve(root);
  const dir = resolve(absoluteRoot, spec.path);
  const walk = new BuildWalk(absoluteRoot, await realpath(absoluteRoot));
  if (!(await isDirectory(dir))) return walk.files;
  const top = { namePrefix: spec.namePrefix, nameSuffix: spec.nameSuffix };
  const k = await kustomizationOf(dir, await realpath(absoluteRoot));
  if (k === null) await walk.generated(dir, candidates, top, [...spec.components]);
  else if (k) await walk.kustomization(dir, k, NOTHING, top, [...spec.components]);
  return walk.files;
}

/**
 * For each of `files` (relative to `root`), the Kustomizations among `parents` whose build reads it,
 * in the order of `parents`. A Kustomization whose build reads its own file is listed for it too:
 * callers leave a Kustomization out of its own parents.
 */
export async function buildersOf(
  root: string,
  parents: readonly KustomizationSpec[],
  files: readonly string[],
): Promise<Map<string, KustomizationSpec[]>> {
  const out = new Map<string, KustomizationSpec[]>();
  for (const parent of parents) {
    const reads = await builtFiles(root, parent, files);
    for (const file of files) if (reads.has(file)) out.set(file, [...(out.get(file) ?? []), parent]);
  }
  return out;
}
