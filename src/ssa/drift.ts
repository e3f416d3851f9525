/**
 * Flux's drift decision between the server's dry-run result (what the object would be after our
 * forced apply) and the live object: new objects drift; otherwise labels, annotations, and
 * everything outside metadata and status are compared.
 */
export function hasDrifted(dryRun: Record<string, unknown>, live: Record<string, unknown> | undefined): boolean {
  const dryMeta = (dryRun['metadata'] ?? {}) as Record<string, unknown>;
  if (!live || !dryMeta['resourceVersion']) return true;
  const liveMeta = (live['metadata'] ?? {}) as Record<string, unknown>;
  if (!deepEqual(dryMeta['labels'] ?? {}, liveMeta['labels'] ?? {})) return true;
  if (!deepEqual(dryMeta['annotations'] ?? {}, liveMeta['annotations'] ?? {})) return true;
  return !deepEqual(withoutMetaAndStatus(dryRun), withoutMetaAndStatus(live));
}

function withoutMetaAndStatus(obj: Record<string, unknown>): Record<string, unknown> {
  const { metadata: _m, status: _s, ...rest } = obj;
  return rest;
}

/** Structural equality of JSON values (key order ignored). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((v, i) => deepEqual(v, bb[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const keys = Object.keys(ao);
  if (keys.length !== Object.keys(bo).length) return false;
  return keys.every((k) => Object.hasOwn(bo, k) && deepEqual(ao[k], bo[k]));
}
