import type { KubeObject } from '../kustomize/parse.js';

const GROUP = 'kustomize.toolkit.fluxcd.io';
export const OWNER_NAME_LABEL = `${GROUP}/name`;
export const OWNER_NAMESPACE_LABEL = `${GROUP}/namespace`;

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

/** What the per-object policies say about one object, desired and live considered as Flux does. */
export interface ObjectPolicy {
  /** `ssa: Ignore` or `reconcile: disabled` on either: neither applied nor pruned. */
  skip: boolean;
  /** `ssa: IfNotPresent` on the desired object and the object exists: left as it is. */
  ifNotPresent: boolean;
  /** `ssa: Merge` on either: fields of other managers are kept (no managedFields migration). */
  merge: boolean;
  /** `force: Enabled` on either, or spec.force: recreate on an immutable-field change. */
  force: boolean;
}

export function policyOf(desired: KubeObject, live: Meta, specForce: boolean): ObjectPolicy {
  const either = (key: string, value: string) => hasMarker(desired, key, value) || hasMarker(live, key, value);
  return {
    skip: either(`${GROUP}/ssa`, 'Ignore') || either(`${GROUP}/reconcile`, 'disabled'),
    ifNotPresent: hasMarker(desired, `${GROUP}/ssa`, 'IfNotPresent') && live !== undefined,
    merge: either(`${GROUP}/ssa`, 'Merge'),
    force: specForce || either(`${GROUP}/force`, 'enabled'),
  };
}

/** Flux's SetOwnerLabels: every object carries the name and namespace of its Kustomization. Returns new objects. */
export function setOwnerLabels(objects: readonly KubeObject[], name: string, namespace: string): KubeObject[] {
  return objects.map((o) => ({
    ...o,
    metadata: {
      ...o.metadata,
      labels: { ...o.metadata.labels, [OWNER_NAME_LABEL]: name, [OWNER_NAMESPACE_LABEL]: namespace },
    },
  }));
}

/**
 * A server error that means "this field cannot change": 422 Invalid whose message or causes say
 * a field is immutable. Stricter than Flux, which recreates on any 409 or 422. Returns the fields
 * named by the server (possibly none), or undefined when the error is something else.
 */
export function immutableFields(err: {
  status: number;
  message: string;
  details?: { causes?: { field?: string; message?: string }[] };
}): string[] | undefined {
  if (err.status !== 422) return undefined;
  const pattern = /is immutable|immutable field|field is immutable/i;
  const causes = err.details?.causes ?? [];
  const immutable = causes.filter((c) => pattern.test(c.message ?? ''));
  if (immutable.length > 0) return [...new Set(immutable.map((c) => c.field ?? '?'))];
  return pattern.test(err.message) ? [] : undefined;
}
