import { readFile, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { isRemoteRef } from '../kustomize/merge.js';
import { parseYamlValue } from '../kustomize/yaml.js';
import { DEFAULT_NAMESPACE } from './parse.js';

/*
 * Under Flux, a Kustomization defined in a file that another Kustomization builds is an object that
 * this parent applies: it ends up in the namespace the parent's build gives it. kustomize's namespace
 * transformer (the parent's spec.targetNamespace, or a `namespace:` of a kustomization.yaml on the way)
 * sets the namespace of every namespaced object, overriding the one written in the file; without one,
 * the file's metadata.namespace stays. This module finds which Kustomization files each parent builds
 * (I/O, following Flux's generated kustomization and kustomize's references) and decides the namespace
 * (pure).
 */

/** A Kustomization as this rule sees it: where it is defined and what it builds. */
export interface NamespaceCandidate {
  /** `namespace/name` as written, for messages. */
  key: string;
  /** The file that defines it, relative to the source root with `/` separators. */
  file: string;
  /** metadata.namespace as written; undefined when left out. */
  ownNamespace: string | undefined;
  targetNamespace: string | undefined;
  /**
   * The files its build reads resources from, relative to the source root, each with the namespace a
   * kustomization.yaml on the way sets (the outermost one wins, as kustomize applies it last); undefined
   * when none does.
   */
  builds: ReadonlyMap<string, string | undefined>;
}

export type NamespaceDecision =
  { namespace: string; appliedBy?: string } | { problem: string; namespace?: undefined; appliedBy?: undefined };

/**
 * The namespace each candidate has under Flux, in input order. A Kustomization built by another one
 * takes that parent's targetNamespace, else the namespace a kustomization.yaml in the parent's build
 * sets, else its own metadata.namespace; one built by none (applied from outside, e.g. by bootstrap)
 * keeps its own, and `flux-system` when it has none. A Kustomization never counts as its own parent.
 * When two parents would put it in different namespaces, Flux would create two objects; that is
 * reported as a problem.
 */
export function decideNamespaces(candidates: readonly NamespaceCandidate[]): NamespaceDecision[] {
  return candidates.map((child) => {
    const found = new Map<string, string>();
    for (const parent of candidates) {
      if (parent === child || !parent.builds.has(child.file)) continue;
      const namespace = parent.targetNamespace ?? parent.builds.get(child.file) ?? child.ownNamespace;
      const value = namespace ?? DEFAULT_NAMESPACE;
      if (!found.has(value)) found.set(value, parent.key);
    }
    if (found.size === 0) return { namespace: child.ownNamespace ?? DEFAULT_NAMESPACE };
    if (found.size > 1) {
      const list = [...found].map(([namespace, parent]) => `${parent} puts it in ${namespace}`).join(', ');
      return {
        problem:
          `${child.file}: Kustomization ${child.key} is built by several Kustomizations that give it different ` +
          `namespaces (${list}); Flux would create one copy in each. Keep the file in the path of one of them`,
      };
    }
    const [[namespace, appliedBy]] = [...found] as [[string, string]];
    return { namespace, appliedBy };
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
async function kustomizationOf(dir: string): Promise<Mapping | null | undefined> {
  for (const name of KUSTOMIZATION_FILES) {
    const file = join(dir, name);
    if (!(await isFile(file))) continue;
    try {
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

class BuildWalk {
  readonly files = new Map<string, string | undefined>();
  private readonly seen = new Set<string>();

  constructor(private readonly root: string) {}

  private record(path: string, namespace: string | undefined): void {
    const rel = toPosix(relative(this.root, path));
    if (!this.files.has(rel)) this.files.set(rel, namespace);
  }

  /** Follows a kustomization's local resources, bases and components, as kustomize loads them. */
  async kustomization(dir: string, k: Mapping, inherited: string | undefined, extra: string[] = []): Promise<void> {
    const key = `${dir}\u0000${inherited ?? ''}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    const own = typeof k['namespace'] === 'string' && k['namespace'] !== '' ? k['namespace'] : undefined;
    const namespace = inherited ?? own;
    const entries = [...RESOURCE_FIELDS.flatMap((field) => stringList(k[field])), ...extra];
    for (const entry of entries) {
      if (isRemoteRef(entry)) continue;
      const path = resolve(dir, entry);
      if (!insideRoot(this.root, path)) continue;
      if (await isFile(path)) {
        this.record(path, namespace);
      } else if (await isDirectory(path)) {
        const inner = await kustomizationOf(path);
        if (inner) await this.kustomization(path, inner, namespace);
      }
    }
  }

  /**
   * Flux's generated kustomization for a directory without one: every .yaml/.yml file below it, except
   * that a subdirectory holding a kustomization file is taken whole (through its kustomization). Only
   * the `candidates` (files that may hold Kustomizations) are looked up, not the whole tree.
   */
  async generated(dir: string, candidates: readonly string[], components: string[]): Promise<void> {
    if (components.length > 0) await this.kustomization(dir, {}, undefined, components);
    for (const candidate of candidates) {
      const path = resolve(this.root, candidate);
      const rel = relative(dir, path);
      if (rel === '' || rel.startsWith(`..${sep}`) || isAbsolute(rel) || !/\.ya?ml$/.test(path)) continue;
      // From the top down: the first subdirectory with a kustomization file decides.
      let covered = false;
      let sub = dir;
      for (const part of rel.split(sep).slice(0, -1)) {
        sub = join(sub, part);
        const k = await kustomizationOf(sub);
        if (k === null) continue;
        covered = true;
        if (k) await this.kustomization(sub, k, undefined);
        break;
      }
      if (!covered) this.record(path, undefined);
    }
  }
}

/**
 * The files among `candidates` (paths relative to `root`) that a Kustomization with `path` (normalised,
 * relative to root) and spec.components builds, each with the namespace a kustomization.yaml on the way
 * sets. Files referenced by a kustomization.yaml are included whether or not they are candidates.
 * Unreadable kustomization files and missing entries are skipped: the build reports them.
 */
export async function builtFiles(
  root: string,
  path: string,
  components: readonly string[],
  candidates: readonly string[],
): Promise<Map<string, string | undefined>> {
  const absoluteRoot = resolve(root);
  const dir = resolve(absoluteRoot, path);
  const walk = new BuildWalk(absoluteRoot);
  if (!(await isDirectory(dir))) return walk.files;
  const k = await kustomizationOf(dir);
  if (k === null) await walk.generated(dir, candidates, [...components]);
  else if (k) await walk.kustomization(dir, k, undefined, [...components]);
  return walk.files;
}
