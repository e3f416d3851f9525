/**
 * The source objects a repository defines, found in its YAML files: each file read once, each
 * document classified (source-defs.ts reads the fields). Bounded: an untrusted tree is scanned.
 */
import { readFile, readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { yamlShapeOver } from '../util/yaml-shape.js';
import { mapLimit } from '../util/concurrency.js';
import { gitRepositoryOf, sourceDefOf, type GitRepositoryDef, type SourceDefs } from './source-defs.js';

/** Each document of a YAML text that parses, as a plain value (aliases bounded); the others left out. */
export function documentValues(text: string): unknown[] {
  // A text past the shape bounds (util/yaml-shape.ts) defines nothing: its build refuses it by name.
  if (yamlShapeOver(text) !== undefined) return [];
  let docs;
  try {
    docs = parseAllDocuments(text, { uniqueKeys: false });
  } catch {
    return [];
  }
  const out: unknown[] = [];
  for (const doc of Array.isArray(docs) ? docs : [docs]) {
    try {
      out.push(doc.toJS({ maxAliasCount: 100 }));
    } catch {
      // a document that does not parse defines nothing
    }
  }
  return out;
}

/** The source objects a YAML text defines: GitRepositories, and the other kinds (source-defs.ts); pure. */
export function sourcesIn(text: string, file: string): { git: GitRepositoryDef[]; others: SourceDefs } {
  const found = { git: [] as GitRepositoryDef[], others: { oci: [], buckets: [], generators: [] } as SourceDefs };
  if (!/kind:\s*["']?(?:GitRepository|OCIRepository|Bucket|ArtifactGenerator)\b/.test(text)) return found;
  for (const value of documentValues(text)) {
    const git = gitRepositoryOf(value, file);
    if (git !== undefined) {
      found.git.push(git);
      continue;
    }
    const other = sourceDefOf(value, file);
    if (other?.kind === 'OCIRepository') found.others.oci.push(other);
    else if (other?.kind === 'Bucket') found.others.buckets.push(other);
    else if (other?.kind === 'ArtifactGenerator') found.others.generators.push(other);
  }
  return found;
}

/** The GitRepositories a YAML text defines (any source.toolkit.fluxcd.io version), pure. */
export function gitRepositoriesIn(text: string, file: string): GitRepositoryDef[] {
  return sourcesIn(text, file).git;
}

/** Directories the scan of a tree leaves out. */
export const SKIP = new Set(['.git', 'node_modules', '.github']);
/** Bounds on the scan of an untrusted tree (the working tree's, and the base commit's: source/base-sources.ts). */
export const MAX_FILES = 20_000;
export const MAX_BYTES = 1024 * 1024;
const READ_CONCURRENCY = 16;

/** Every source object defined in a YAML file under `root` (at most 20,000 files, each up to 1 MiB). */
export async function findSources(root: string): Promise<{ definitions: GitRepositoryDef[]; others: SourceDefs }> {
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
    return text.length <= MAX_BYTES ? sourcesIn(text, relative(root, path).split(sep).join('/')) : undefined;
  });
  const out = { definitions: [] as GitRepositoryDef[], others: { oci: [], buckets: [], generators: [] } as SourceDefs };
  for (const f of found) {
    if (f === undefined) continue;
    out.definitions.push(...f.git);
    out.others.oci.push(...f.others.oci);
    out.others.buckets.push(...f.others.buckets);
    out.others.generators.push(...f.others.generators);
  }
  return out;
}

/** Every GitRepository defined in a YAML file under `root`. */
export async function findGitRepositories(root: string): Promise<GitRepositoryDef[]> {
  return (await findSources(root)).definitions;
}
