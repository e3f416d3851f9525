import { looksLikeManifest } from './parse.js';
import { parseYamlStream } from './yaml.js';

/** The file names kustomize recognises as a kustomization, in its order of preference. */
export const KUSTOMIZATION_FILES = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'] as const;

/** A directory entry as the generator sees it: a YAML file with its text, or a sub-directory. */
export type Entry =
  { kind: 'file'; path: string; text: string } | { kind: 'dir'; path: string; hasKustomization: boolean };

export interface KustomizationFile {
  apiVersion: 'kustomize.config.k8s.io/v1beta1';
  kind: 'Kustomization';
  resources?: string[];
  namespace?: string;
}

/**
 * Flux's generator for a directory without a kustomization file: every YAML file that holds
 * Kubernetes objects becomes a resource, and a sub-directory with its own kustomization file is
 * added as one resource (its files are not listed). YAML that is not a manifest (for example a
 * values file or a Flux Kustomization's sibling config) is skipped. Paths are relative, `./`-prefixed
 * and sorted so that the output is stable. Entries must already exclude the children of such
 * sub-directories. `shownDir` prefixes file names in errors.
 */
export function generateKustomization(
  entries: readonly Entry[],
  shownDir = '',
): {
  kustomization: KustomizationFile;
  skipped: string[];
} {
  const resources: string[] = [];
  const skipped: string[] = [];
  for (const entry of entries) {
    if (entry.kind === 'dir') {
      if (entry.hasKustomization) resources.push(`./${entry.path}`);
      continue;
    }
    if (isManifestFile(entry.text, shownDir ? `${shownDir}/${entry.path}` : entry.path)) {
      resources.push(`./${entry.path}`);
    } else {
      skipped.push(entry.path);
    }
  }
  resources.sort();
  const kustomization: KustomizationFile = { apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization' };
  if (resources.length > 0) {
    kustomization.resources = resources;
  } else {
    // kustomize refuses an empty kustomization; Flux writes this placeholder for the same reason.
    kustomization.namespace = '_placeholder';
  }
  return { kustomization, skipped };
}

/**
 * A file is a manifest file when every non-empty document in it is a Kubernetes object.
 * A file with invalid YAML is an error naming the file, as in Flux.
 */
export function isManifestFile(text: string, path: string): boolean {
  let found = false;
  for (const doc of parseYamlStream(text, path)) {
    if (doc.error !== undefined) throw new Error(doc.error);
    const value = doc.value;
    if (value === null || value === undefined) continue;
    if (!looksLikeManifest(value)) return false;
    found = true;
  }
  return found;
}
