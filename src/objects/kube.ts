import { parseYamlStream } from './yaml.js';
import { clip } from '../util/truncate.js';

/** A Kubernetes object as plain JSON; unknown fields are kept as they are. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [k: string]: unknown;
  };
  [k: string]: unknown;
}

/**
 * Parses a multi-document YAML stream into objects. Empty documents are skipped;
 * a document that is not a Kubernetes object (no apiVersion, kind or metadata.name) is an
 * error naming its position and `source`.
 */
export function parseManifests(text: string, source: string): KubeObject[] {
  const objects: KubeObject[] = [];
  for (const doc of parseYamlStream(text, source)) {
    if (doc.error !== undefined) throw new Error(doc.error);
    if (doc.value === null || doc.value === undefined) continue;
    objects.push(asKubeObject(doc.value, `${source}, document ${doc.document}`));
  }
  return objects;
}

/** Checks the shape every manifest must have and names what is missing. */
export function asKubeObject(value: unknown, where: string): KubeObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error(
      `${where}: expected a Kubernetes object (a YAML mapping), got ${Array.isArray(value) ? 'a list' : typeof value}`,
    );
  }
  const obj = value as Record<string, unknown>;
  const missing: string[] = [];
  if (typeof obj['apiVersion'] !== 'string' || obj['apiVersion'] === '') missing.push('apiVersion');
  if (typeof obj['kind'] !== 'string' || obj['kind'] === '') missing.push('kind');
  const metadata = obj['metadata'];
  const name =
    typeof metadata === 'object' && metadata !== null ? (metadata as Record<string, unknown>)['name'] : undefined;
  if (typeof name !== 'string' || name === '') missing.push('metadata.name');
  if (missing.length > 0) {
    const kind = typeof obj['kind'] === 'string' ? ` (kind ${clip(obj['kind'], 100, true)})` : '';
    throw new Error(`${where}${kind}: missing ${missing.join(', ')}`);
  }
  return obj as KubeObject;
}

/**
 * `Kind/namespace/name`, or `Kind/name` for cluster-scoped objects, as Flux prints subjects: of an
 * object, or of a reference (`{kind, name, namespace?}`, as an inventory entry names one). The one
 * place subjects are spelled.
 */
export function subjectOf(
  obj: Pick<KubeObject, 'kind' | 'metadata'> | { kind: string; name: string; namespace?: string | undefined },
): string {
  const { name, namespace } = 'metadata' in obj ? obj.metadata : obj;
  return namespace ? `${obj.kind}/${namespace}/${name}` : `${obj.kind}/${name}`;
}

/** True when a parsed YAML value looks like a Kubernetes manifest (used to pick files for a generated kustomization). */
export function looksLikeManifest(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const obj = value as Record<string, unknown>;
  return typeof obj['apiVersion'] === 'string' && typeof obj['kind'] === 'string';
}

/** A stable key for an object across build stages: `group/Kind/namespace/name`. */
export function objectKey(obj: Pick<KubeObject, 'apiVersion' | 'kind' | 'metadata'>): string {
  const group = obj.apiVersion.includes('/') ? obj.apiVersion.slice(0, obj.apiVersion.indexOf('/')) : '';
  return `${group}/${obj.kind}/${obj.metadata.namespace ?? ''}/${obj.metadata.name}`;
}
