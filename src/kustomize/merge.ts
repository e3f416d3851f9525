import type { Image, Patch } from './types.js';

/** The Kustomization spec fields that change what kustomize builds (Flux merges them into kustomization.yaml). */
export interface BuildFields {
  targetNamespace?: string;
  namePrefix?: string;
  nameSuffix?: string;
  patches?: readonly Patch[];
  images?: readonly Image[];
  /** Components to append, already checked to be local, relative and present (or dropped when missing and ignored). */
  components?: readonly string[];
  buildMetadata?: readonly string[];
}

export const ORIGIN_ANNOTATION = 'config.kubernetes.io/origin';

export interface Merged {
  kustomization: Record<string, unknown>;
  /** True when origin annotations were switched on only to learn each object's file; strip them after the build. */
  addedOrigin: boolean;
}

/**
 * Merges Flux's spec fields into a kustomization the way kustomize-controller does, into the same
 * file (so kustomize's transformer order is Flux's: patches match names before namespace and
 * prefix change them). targetNamespace, namePrefix and nameSuffix override; patches and components
 * are appended; images merge by name (newName replaces; newTag and digest are one unit, so a stale
 * digest is cleared); buildMetadata replaces when it lists anything, and a kustomization file (`source`)
 * without resources gets originAnnotations as under Flux. With `trace`, origin annotations are switched
 * on as well so that every object can be traced to its file (they cost kustomize 16–42 % more CPU, so
 * only a build whose objects' files are needed asks: build.ts); `addedOrigin` says whether they were
 * switched on only for that.
 */
export function mergeKustomization(
  existing: Readonly<Record<string, unknown>>,
  fields: BuildFields,
  source: 'file' | 'generated' = 'file',
  trace = true,
): Merged {
  const k: Record<string, unknown> = { ...existing };
  // Flux gives a kustomization file of the repository that lists no resources originAnnotations (so that
  // kustomize does not find it empty), replacing its own list; the annotations then stay on the objects.
  if (source === 'file' && asList(existing['resources']).length === 0) k['buildMetadata'] = ['originAnnotations'];
  if (fields.targetNamespace) k['namespace'] = fields.targetNamespace;
  if (fields.namePrefix) k['namePrefix'] = fields.namePrefix;
  if (fields.nameSuffix) k['nameSuffix'] = fields.nameSuffix;
  if (fields.patches?.length) {
    k['patches'] = [
      ...asList(existing['patches']),
      ...fields.patches.map((p) => (p.target ? { patch: p.patch, target: { ...p.target } } : { patch: p.patch })),
    ];
  }
  if (fields.components?.length) {
    k['components'] = [...asList(existing['components']), ...fields.components];
  }
  if (fields.images?.length) {
    k['images'] = mergeImages(asList(existing['images']) as Record<string, unknown>[], fields.images);
  }
  // Only a list with entries replaces (Flux: len(buildMetadata) > 0).
  if (fields.buildMetadata?.length) k['buildMetadata'] = [...fields.buildMetadata];
  const metadata = asList(k['buildMetadata']).filter((v): v is string => typeof v === 'string');
  const addedOrigin = trace && !metadata.includes('originAnnotations');
  if (addedOrigin) k['buildMetadata'] = [...metadata, 'originAnnotations'];
  return { kustomization: k, addedOrigin };
}

function mergeImages(
  existing: readonly Record<string, unknown>[],
  images: readonly Image[],
): Record<string, unknown>[] {
  const out = existing.map((e) => ({ ...e }));
  for (const img of images) {
    const match = out.find((e) => e['name'] === img.name);
    if (!match) {
      out.push(Object.fromEntries(Object.entries(img).filter(([, v]) => v !== undefined && v !== '')));
      continue;
    }
    if (img.newName) match['newName'] = img.newName;
    if (img.newTag || img.digest) {
      delete match['newTag'];
      delete match['digest'];
      if (img.newTag) match['newTag'] = img.newTag;
      if (img.digest) match['digest'] = img.digest;
    }
  }
  return out;
}

function asList(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** Prefixes that make a kustomize resource, base or component remote (fetched over the network). */
const REMOTE = /^(?:[a-z][a-z0-9+.-]*:\/\/|git::|gh:|git@|github\.com[:/]|gitlab\.com[:/]|bitbucket\.org[:/])/i;

/** True when a `resources`/`components` entry names a remote base rather than a local path. */
export function isRemoteRef(entry: string): boolean {
  return REMOTE.test(entry.trim());
}

/** The entries of a kustomization that kustomize loads as files or directories. */
export function referencedPaths(k: Readonly<Record<string, unknown>>): { field: string; entry: string }[] {
  const out: { field: string; entry: string }[] = [];
  for (const field of ['resources', 'bases', 'components', 'crds']) {
    for (const entry of asList(k[field])) if (typeof entry === 'string') out.push({ field, entry });
  }
  return out;
}

/**
 * Reads and removes the origin annotation kustomize added, returning the object's file relative to
 * the kustomization directory (for generated objects, the kustomization declaring the generator;
 * undefined for remote bases). When `strip` is
 * false the annotation stays (the user asked for it); an annotations map left empty is removed so
 * that the output equals a plain `kustomize build`.
 */
export function takeOrigin(
  obj: { metadata: { annotations?: Record<string, string> } },
  strip: boolean,
): string | undefined {
  const annotations = obj.metadata.annotations;
  const raw = annotations?.[ORIGIN_ANNOTATION];
  if (raw === undefined || annotations === undefined) return undefined;
  if (strip) {
    const { [ORIGIN_ANNOTATION]: _origin, ...rest } = annotations;
    if (Object.keys(rest).length === 0) delete obj.metadata.annotations;
    else obj.metadata.annotations = rest;
  }
  // `path:` for objects read from a file; `configuredIn:` for generated ones (the kustomization
  // that declares the generator); `repo:` marks a remote base, which has no local file.
  if (/^repo:/m.test(raw)) return undefined;
  const value = (key: string) =>
    new RegExp(`^${key}:\\s*(.+)$`, 'm')
      .exec(raw)?.[1]
      ?.trim()
      .replace(/^["']|["']$/g, '');
  return value('path') ?? value('configuredIn');
}
