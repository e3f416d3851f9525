/**
 * Flux's cleanup of what other tools left on an object, so that a forced apply reverts their
 * edits: client-side-apply annotations and labels are removed, and managedFields entries of kubectl
 * (apply, edit, patch, scale ...), `before-first-apply` and our own old Update entries are merged
 * into our Apply entry, which makes us the owner of those fields.
 */
import { escapePointer, isMap } from './json.js';

export const CLEANUP_ANNOTATIONS = [
  'kubectl.kubernetes.io/last-applied-configuration',
  'kustomize.toolkit.fluxcd.io/checksum',
  'fluxcd.io/sync-checksum',
];
export const CLEANUP_LABELS = ['fluxcd.io/sync-gc-mark'];

export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  fieldsType?: string;
  fieldsV1?: Record<string, unknown>;
  subresource?: string;
  time?: string;
}

export type JsonPatchOp = { op: 'remove'; path: string } | { op: 'replace'; path: string; value: unknown };

function migrates(e: ManagedFieldsEntry, manager: string): boolean {
  if (e.subresource) return false;
  const m = e.manager ?? '';
  return (
    (m.startsWith('kubectl') && (e.operation === 'Apply' || e.operation === 'Update')) ||
    (m.startsWith('before-first-apply') && e.operation === 'Update') ||
    (m.startsWith(manager) && e.operation === 'Update')
  );
}

/**
 * The managedFields after migration to `manager`, or undefined when nothing would change. The
 * first migrated entry becomes our Apply entry when we have none; the others are merged into it.
 */
export function migrateManagedFields(
  entries: readonly ManagedFieldsEntry[],
  manager: string,
): ManagedFieldsEntry[] | undefined {
  const matching = entries.filter((e) => migrates(e, manager));
  if (matching.length === 0) return undefined;
  const rest = entries.filter((e) => !migrates(e, manager));
  const oursIndex = rest.findIndex((e) => e.manager === manager && e.operation === 'Apply' && !e.subresource);
  let ours: ManagedFieldsEntry;
  if (oursIndex >= 0) {
    ours = { ...rest[oursIndex] };
    rest.splice(oursIndex, 1);
  } else {
    const first = matching.shift()!;
    ours = { ...first, manager, operation: 'Apply' };
  }
  for (const e of matching) ours.fieldsV1 = unionFields(ours.fieldsV1 ?? {}, e.fieldsV1 ?? {});
  return [...rest, ours];
}

/** The union of two fieldsV1 sets (nested maps of `f:`/`k:`/`v:`/`i:` keys). */
export function unionFields(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const prev = out[k];
    out[k] = isMap(prev) && isMap(v) ? unionFields(prev, v) : isMap(prev) ? prev : v;
  }
  return out;
}

/** The JSON patch Flux sends before applying, or undefined when the live object is clean. */
export function cleanupPatch(live: Record<string, unknown>, manager: string): JsonPatchOp[] | undefined {
  const md = (live['metadata'] ?? {}) as {
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
    managedFields?: ManagedFieldsEntry[];
  };
  const ops: JsonPatchOp[] = [];
  for (const a of CLEANUP_ANNOTATIONS)
    if (md.annotations?.[a] !== undefined)
      ops.push({ op: 'remove', path: `/metadata/annotations/${escapePointer(a)}` });
  for (const l of CLEANUP_LABELS)
    if (md.labels?.[l] !== undefined) ops.push({ op: 'remove', path: `/metadata/labels/${escapePointer(l)}` });
  const migrated = migrateManagedFields(md.managedFields ?? [], manager);
  if (migrated) ops.push({ op: 'replace', path: '/metadata/managedFields', value: migrated });
  return ops.length > 0 ? ops : undefined;
}
