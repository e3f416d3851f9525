/**
 * The names Flux's kustomize-controller gives its API and the labels and annotations it reads and
 * writes on objects, spelled once. Pure.
 */

/** The API group of Flux Kustomizations, and the prefix of every label and annotation below. */
export const FLUX_GROUP = 'kustomize.toolkit.fluxcd.io';
/** The one Kustomization apiVersion this tool reads and writes. */
export const FLUX_API_VERSION = `${FLUX_GROUP}/v1`;

/** The owner labels Flux sets on every object it applies. */
export const OWNER_NAME_LABEL = `${FLUX_GROUP}/name`;
export const OWNER_NAMESPACE_LABEL = `${FLUX_GROUP}/namespace`;

/** The per-object markers (labels or annotations) Flux honours, each `${FLUX_GROUP}/<key>`. */
export const PRUNE_MARKER = `${FLUX_GROUP}/prune`;
export const RECONCILE_MARKER = `${FLUX_GROUP}/reconcile`;
export const SSA_MARKER = `${FLUX_GROUP}/ssa`;
export const FORCE_MARKER = `${FLUX_GROUP}/force`;
/** The markers that keep an object from being pruned (Flux's prune exclusions), with the value that does. */
export const PRUNE_KEEP_MARKERS = [
  [PRUNE_MARKER, 'disabled'],
  [RECONCILE_MARKER, 'disabled'],
  [SSA_MARKER, 'Ignore'],
] as const;
/** The checksum annotation older Flux versions wrote (removed when an object is taken over). */
export const CHECKSUM_ANNOTATION = `${FLUX_GROUP}/checksum`;

type Meta = { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> } } | undefined;

/**
 * Flux's marker lookup (`AnyInMetadata`): the key in labels or annotations, the value compared
 * case-insensitively; an empty value never matches.
 */
export function hasMarker(obj: Meta, key: string, value: string): boolean {
  const md = obj?.metadata;
  return [md?.labels?.[key], md?.annotations?.[key]].some(
    (v) => v !== undefined && v !== '' && v.toLowerCase() === value.toLowerCase(),
  );
}
