/**
 * Flux's cleanup of what other tools left on an object, so that a forced apply reverts their
 * edits: client-side-apply annotations and labels are removed, and managedFields entries of kubectl
 * (apply, edit, patch, scale ...), `before-first-apply` and our own old Update entries are merged
 * into our Apply entry, which makes us the owner of those fields.
 */
import { CHECKSUM_ANNOTATION } from '../objects/flux.js';
import { isSecret } from '../objects/secret.js';
import { escapePointer, isMap } from './json.js';

export const CLEANUP_ANNOTATIONS = [
  'kubectl.kubernetes.io/last-applied-configuration',
  CHECKSUM_ANNOTATION,
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
 * `migratesHere` says which entries migrate (by default kubectl's, before-first-apply's and our old Update
 * entries; takeover.ts names others); our own Apply entry never does.
 */
export function migrateManagedFields(
  entries: readonly ManagedFieldsEntry[],
  manager: string,
  migratesHere: (e: ManagedFieldsEntry) => boolean = (e) => migrates(e, manager),
): ManagedFieldsEntry[] | undefined {
  const moves = (e: ManagedFieldsEntry) =>
    !(e.manager === manager && e.operation === 'Apply' && !e.subresource) && migratesHere(e);
  const matching = entries.filter(moves);
  if (matching.length === 0) return undefined;
  const rest = entries.filter((e) => !moves(e));
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
  const adopted = adoptStringDataKeys(live, migrated ?? md.managedFields ?? [], manager);
  const fields = adopted ?? migrated;
  if (fields) ops.push({ op: 'replace', path: '/metadata/managedFields', value: fields });
  return ops.length > 0 ? ops : undefined;
}

/**
 * A Secret applied with `stringData` before objects were normalised as Flux does (src/ssa/normalize.ts):
 * our Apply entry owns `f:stringData` keys, which the server never stores, and the `data` keys they
 * wrote are owned by no one, so a key removed from Git would stay in the cluster. The managedFields
 * in which our entry gives up `f:stringData` and takes every live `data` key no manager owns; the
 * apply that follows keeps those still desired and removes the others. Keys another manager owns
 * stay theirs. Undefined when there is nothing to hand over.
 */
export function adoptStringDataKeys(
  live: Record<string, unknown>,
  entries: readonly ManagedFieldsEntry[],
  manager: string,
): ManagedFieldsEntry[] | undefined {
  if (!isSecret(live)) return undefined;
  const index = entries.findIndex((e) => e.manager === manager && e.operation === 'Apply' && !e.subresource);
  const ours = entries[index];
  if (!ours?.fieldsV1 || !Object.hasOwn(ours.fieldsV1, 'f:stringData')) return undefined;
  const owned = new Set<string>();
  for (const e of entries) {
    const data = e.fieldsV1?.['f:data'];
    if (isMap(data)) for (const k of Object.keys(data)) owned.add(k);
  }
  const liveData = isMap(live['data']) ? Object.keys(live['data']) : [];
  const orphans = Object.fromEntries(liveData.filter((k) => !owned.has(`f:${k}`)).map((k) => [`f:${k}`, {}]));
  const { 'f:stringData': _strings, ...rest } = ours.fieldsV1;
  const data = unionFields(isMap(rest['f:data']) ? rest['f:data'] : {}, orphans);
  const fieldsV1 = Object.keys(data).length > 0 ? { ...rest, 'f:data': data } : rest;
  return entries.map((e, i) => (i === index ? { ...e, fieldsV1 } : e));
}
