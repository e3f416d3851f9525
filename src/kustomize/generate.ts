import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { listItemsProblem, parseYamlStream } from '../objects/yaml.js';
import { yamlAliasProblem } from '../util/bounded.js';

/** The file names kustomize recognises as a kustomization, in its order of preference. */
export const KUSTOMIZATION_FILES = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'] as const;

/** True when `dir` holds an entry named like a kustomization file (of any type; a quick look, no walk). */
export function hasKustomizationEntry(dir: string): boolean {
  return KUSTOMIZATION_FILES.some((name) => lstatSync(join(dir, name), { throwIfNoEntry: false }) !== undefined);
}

/** A directory entry as the generator sees it: a YAML file with its text, or a sub-directory. */
export type Entry =
  { kind: 'file'; path: string; text: string } | { kind: 'dir'; path: string; hasKustomization: boolean };

export interface KustomizationFile {
  apiVersion: 'kustomize.config.k8s.io/v1beta1';
  kind: 'Kustomization';
  resources?: string[];
  namespace?: string;
}

/** What to do about a YAML file that stops a generated kustomization, appended to its error. */
const GENERATED_HINT =
  'a directory without a kustomization file may hold only Kubernetes manifests (Flux fails the build the same way): add a kustomization.yaml that lists the resources, move the file out, or exclude the file in a .sourceignore';

/**
 * Flux's generator for a directory without a kustomization file (fluxcd/pkg/kustomize): every
 * `.yaml`/`.yml` file becomes a resource, and a sub-directory with its own kustomization file is
 * added as one resource (its files are not listed). A file that kustomize cannot decode as
 * Kubernetes objects (broken YAML, a Helm values file, a document without kind or name) fails the
 * generation with an error naming it, as in Flux; a file without objects (empty, comments only) is
 * listed and adds nothing. Entries come in Flux's walk order (depth first, each directory's
 * entries by name), which is kept; they must already exclude the children of such sub-directories.
 * `shownDir` prefixes file names in errors.
 */
export function generateKustomization(entries: readonly Entry[], shownDir = ''): KustomizationFile {
  const resources: string[] = [];
  for (const entry of entries) {
    if (entry.kind === 'dir') {
      if (entry.hasKustomization) resources.push(`./${entry.path}`);
      continue;
    }
    const problem = manifestFileProblem(entry.text, shownDir ? `${shownDir}/${entry.path}` : entry.path);
    if (problem !== undefined) throw new Error(problem);
    resources.push(`./${entry.path}`);
  }
  const kustomization: KustomizationFile = { apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization' };
  if (resources.length > 0) {
    kustomization.resources = resources;
  } else {
    // kustomize refuses an empty kustomization; Flux writes this placeholder for the same reason.
    kustomization.namespace = '_placeholder';
  }
  return kustomization;
}

/**
 * Why kustomize's resource factory would refuse a YAML file as a list of Kubernetes objects (as a
 * sentence naming `shown`, the document and its line), or undefined when it takes it. Its rules
 * (kyaml's GetValidatedMetadata): empty documents (null, `{}`, `[]`) are dropped; any other
 * document must be a mapping with some of apiVersion, kind and metadata, must have a kind, and
 * unless the kind ends in `List`, a metadata.name (a List's items, when present, must be a list);
 * no list anywhere in it may hold an empty item. Aliases that recurse or expand past the bound
 * (util/bounded.ts) are refused before anything else.
 */
export function manifestFileProblem(text: string, shown: string): string | undefined {
  // First: a recursive alias makes the parsed value circular, which the walks below never leave.
  const aliases = yamlAliasProblem(text, shown);
  if (aliases !== undefined) return aliases;
  for (const doc of parseYamlStream(text, shown)) {
    if (doc.error !== undefined) return doc.error;
    const value = doc.value;
    if (isEmpty(value)) continue;
    const listProblem = listItemsProblem(value, `${shown}, document ${doc.document}`);
    if (listProblem !== undefined) return listProblem;
    const where = `${shown}, document ${doc.document}${doc.line === undefined ? '' : ` (line ${doc.line})`}`;
    const problem = objectProblem(value);
    if (problem !== undefined) return `${where}: ${problem}; ${GENERATED_HINT}`;
    const empty = emptyItemPath(value);
    if (empty !== undefined) return `${where}: empty list item at ${empty}; remove it or give it a value`;
  }
  return undefined;
}

function isEmpty(value: unknown): boolean {
  if (value === null || value === undefined) return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === 'object' && Object.keys(value).length === 0;
}

/** kyaml's reading of a scalar field: present when it is a non-empty scalar. */
function present(value: unknown): value is string | number | boolean {
  return (typeof value === 'string' && value !== '') || typeof value === 'number' || typeof value === 'boolean';
}

function objectProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return `${Array.isArray(value) ? 'a list' : `a ${typeof value}`}, not a Kubernetes object`;
  }
  const obj = value as Record<string, unknown>;
  const meta = obj['metadata'];
  const m = typeof meta === 'object' && meta !== null && !Array.isArray(meta) ? (meta as Record<string, unknown>) : {};
  const hasMeta =
    present(m['name']) ||
    present(m['namespace']) ||
    (['labels', 'annotations'] as const).some((k) => !isEmpty(m[k]) && typeof m[k] === 'object');
  if (!present(obj['apiVersion']) && !present(obj['kind']) && !hasMeta) {
    return 'not a Kubernetes object (no apiVersion, kind or metadata)';
  }
  const kind = obj['kind'];
  if (!present(kind))
    return 'no kind: every document must be a Kubernetes object with apiVersion, kind and metadata.name';
  const kindText = String(kind);
  if (kindText.endsWith('List')) return undefined;
  if (!present(m['name'])) return `kind ${kindText} has no metadata.name`;
  return undefined;
}

/** The path of the first null item of a list anywhere in `value` (kustomize refuses such objects). */
function emptyItemPath(value: unknown, path = ''): string | undefined {
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      if (item === null || item === undefined) return `${path}[${i}]`;
      const found = emptyItemPath(item, `${path}[${i}]`);
      if (found !== undefined) return found;
    }
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      const found = emptyItemPath(item, path === '' ? key : `${path}.${key}`);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}
