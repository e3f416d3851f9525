/**
 * Which Kustomizations this checkout may build. Flux builds each Kustomization from the artifact of
 * its spec.sourceRef; here the only artifact is the checked-out repository, so a Kustomization whose
 * source is another repository must fail (and its dependents be skipped), never be built from ours.
 * The checkout's GitRepository is the one the `source` input names, or any GitRepository defined in
 * the repository whose URL is this repository.
 */
import { readFile, readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { repositoryId, sameSource } from '../inventory/identity.js';
import { mapLimit } from '../util/concurrency.js';
import type { KustomizationSpec } from './types.js';

/** A GitRepository definition found in the repository. */
export interface GitRepositoryDef {
  namespace: string;
  name: string;
  url: string;
  /** spec.ref: which revision of the repository it follows. */
  ref?: { branch?: string; tag?: string; semver?: string; name?: string; commit?: string };
  /** spec.ignore: .sourceignore lines added to the artifact's. */
  ignore?: string;
  /** spec.secretRef.name: the Secret with its credentials. */
  secretRef?: string;
  /** spec.include is set (other GitRepositories copied into this one). */
  include?: boolean;
  /** The file it is defined in, relative to the root. */
  file: string;
}

/**
 * How a Kustomization's source is had: this checkout; another GitRepository defined in the
 * repository, fetched with git (src/source/git.ts); or not at all (the Kustomization fails).
 */
export type SourceVerdict =
  | { kind: 'checkout'; note?: string }
  | { kind: 'fetch'; repository: GitRepositoryDef }
  | { kind: 'other'; problem: string };

export interface CheckoutFacts {
  /** This run's repository (Settings.run.source); `local:…` when it has no remote. */
  source: string;
  /** `namespace/name` of the checkout's GitRepository, from the `source` input. */
  explicit?: string;
  /** The branch checked out (a pull request's base branch, which a preview is for), when known. */
  branch?: string;
  definitions: readonly GitRepositoryDef[];
}

/** Whether `spec` is built from this checkout, pure. */
export function sourceVerdict(spec: KustomizationSpec, facts: CheckoutFacts): SourceVerdict {
  const ref = spec.sourceRef;
  if (ref === undefined) return { kind: 'checkout' };
  const key = `${ref.namespace ?? spec.namespace}/${ref.name}`;
  const named = `spec.sourceRef GitRepository ${key}`;
  const defs = facts.definitions.filter((d) => `${d.namespace}/${d.name}` === key);
  /** Another repository or revision: fetched when it can be, never this checkout instead. */
  const fetched = (d: GitRepositoryDef, why: string): SourceVerdict => {
    const refused = unfetchable(d);
    return refused === undefined
      ? { kind: 'fetch', repository: d }
      : {
          kind: 'other',
          problem: `${named} (${d.file}) ${why}, and ${refused}; building this repository instead is never done`,
        };
  };
  if (facts.explicit !== undefined) {
    if (facts.explicit === key) return { kind: 'checkout' };
    if (defs.length === 1) return fetched(defs[0]!, `is not this checkout (input source names ${facts.explicit})`);
    return {
      kind: 'other',
      problem:
        `${named} is not this checkout (input source names ${facts.explicit}) and ` +
        `${defs.length === 0 ? 'is not defined in the repository' : 'is defined more than once'}, so it cannot be fetched; ` +
        'building this repository instead is never done',
    };
  }
  if (defs.length === 0) {
    return {
      kind: 'checkout',
      note: `${named} is not defined in the repository: taken to be this checkout (set input source to ${key} to say so)`,
    };
  }
  if (facts.source.startsWith('local:')) {
    return {
      kind: 'checkout',
      note: `${named} (${defs[0]!.url}) taken to be this checkout: the checkout has no git remote to compare with`,
    };
  }
  if (defs.length > 1) {
    return {
      kind: 'other',
      problem: `${named} is defined more than once (${defs.map((d) => d.file).join(', ')}): keep one`,
    };
  }
  const mismatched = defs.filter((d) => !sameSource(repositoryId(d.url), facts.source));
  if (mismatched.length > 0) {
    return fetched(mismatched[0]!, `points at ${mismatched[0]!.url}, not at this repository (${facts.source})`);
  }
  // This repository, but perhaps another revision of it: a tenant's branch, a tag, a commit.
  const d = defs[0]!;
  const revision = d.ref ?? {};
  const pinned = (['commit', 'name', 'semver', 'tag'] as const).find((k) => revision[k] !== undefined);
  const checkedOut = facts.branch === undefined ? 'this checkout' : `this checkout (branch ${facts.branch})`;
  if (pinned !== undefined) {
    return fetched(d, `follows ${pinned} ${JSON.stringify(revision[pinned])} of this repository, not ${checkedOut}`);
  }
  if (revision.branch !== undefined && facts.branch !== undefined && revision.branch !== facts.branch) {
    return fetched(d, `follows branch ${JSON.stringify(revision.branch)} of this repository, not ${checkedOut}`);
  }
  if (revision.branch !== undefined && facts.branch === undefined) {
    return {
      kind: 'checkout',
      note: `${named} (branch ${revision.branch}) taken to be this checkout: the branch checked out is not known`,
    };
  }
  return { kind: 'checkout' };
}

/** Why `d` cannot be fetched here (a field not supported yet), or undefined. */
export function unfetchable(d: GitRepositoryDef): string | undefined {
  if (d.include) return 'its spec.include is not fetched yet';
  if (!/^(?:https?|file):\/\//.test(d.url)) {
    return `only https:// (and file://) URLs are fetched: ${d.url} needs SSH keys, which this action does not take yet`;
  }
  return undefined;
}

/** The GitRepositories a YAML text defines (any source.toolkit.fluxcd.io version), pure. */
export function gitRepositoriesIn(text: string, file: string): GitRepositoryDef[] {
  if (!/kind:\s*["']?GitRepository\b/.test(text)) return [];
  const found: GitRepositoryDef[] = [];
  let docs;
  try {
    docs = parseAllDocuments(text, { uniqueKeys: false });
  } catch {
    return [];
  }
  for (const doc of Array.isArray(docs) ? docs : [docs]) {
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 100 });
    } catch {
      continue;
    }
    const o = value as {
      apiVersion?: unknown;
      kind?: unknown;
      metadata?: { name?: unknown; namespace?: unknown };
      spec?: { url?: unknown; ref?: unknown; ignore?: unknown; secretRef?: { name?: unknown }; include?: unknown };
    } | null;
    if (o === null || typeof o !== 'object' || o.kind !== 'GitRepository') continue;
    if (typeof o.apiVersion !== 'string' || !o.apiVersion.startsWith('source.toolkit.fluxcd.io/')) continue;
    const name = o.metadata?.name;
    const url = o.spec?.url;
    if (typeof name !== 'string' || typeof url !== 'string') continue;
    const namespace = typeof o.metadata?.namespace === 'string' ? o.metadata.namespace : 'flux-system';
    const ref = refOf(o.spec?.ref);
    const ignore = typeof o.spec?.ignore === 'string' ? o.spec.ignore : undefined;
    const secretRef = typeof o.spec?.secretRef?.name === 'string' ? o.spec.secretRef.name : undefined;
    const include = Array.isArray(o.spec?.include) && o.spec.include.length > 0;
    found.push({
      namespace,
      name,
      url,
      file,
      ...(ref ? { ref } : {}),
      ...(ignore !== undefined ? { ignore } : {}),
      ...(secretRef !== undefined ? { secretRef } : {}),
      ...(include ? { include } : {}),
    });
  }
  return found;
}

/** The string fields of a GitRepository's spec.ref that choose a revision. */
function refOf(value: unknown): GitRepositoryDef['ref'] {
  if (typeof value !== 'object' || value === null) return undefined;
  const out: NonNullable<GitRepositoryDef['ref']> = {};
  for (const k of ['branch', 'tag', 'semver', 'name', 'commit'] as const) {
    const v = (value as Record<string, unknown>)[k];
    if (typeof v === 'string' && v !== '') out[k] = v;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

const SKIP = new Set(['.git', 'node_modules', '.github']);
/** Bounds on the scan of an untrusted tree. */
const MAX_FILES = 20_000;
const MAX_BYTES = 1024 * 1024;
const READ_CONCURRENCY = 16;

/** Every GitRepository defined in a YAML file under `root` (at most 20,000 files, each up to 1 MiB). */
export async function findGitRepositories(root: string): Promise<GitRepositoryDef[]> {
  const files: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      if (files.length >= MAX_FILES) return;
      const path = join(dir, e.name);
      if (e.isDirectory()) {
        if (!SKIP.has(e.name)) await walk(path);
      } else if (e.isFile() && /\.ya?ml$/i.test(e.name)) {
        files.push(path);
      }
    }
  };
  await walk(root);
  // Read concurrently, as the build reads a tree: one at a time, a large repository costs seconds.
  const found = await mapLimit(files, READ_CONCURRENCY, async (path) => {
    const text = await readFile(path, 'utf8').catch(() => '');
    return text.length <= MAX_BYTES ? gitRepositoriesIn(text, relative(root, path).split(sep).join('/')) : [];
  });
  return found.flat();
}
