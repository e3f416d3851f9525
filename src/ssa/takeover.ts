/**
 * Flux's `--override-manager-before-dry-run` (kustomize-controller v1.10, fluxcd/pkg's
 * ApplyCleanupOptions.FieldManagersBeforeDryRun): the fields of the named managers are taken over
 * before an object's dry-run, not after it as the cleanup (cleanup.ts) is. A foreign manager that
 * co-owns part of a field (a container's name, not its image) can make the merged object invalid,
 * so the dry-run fails on every run and the cleanup that would fix it is never reached; taking its
 * fields first makes the merge valid. The takeover is written even if the apply then fails, which is
 * why it is opt-in and only for the managers named.
 */
import type { ResourceMapping } from '../cluster/discovery.js';
import type { LiveObject } from '../cluster/live.js';
import { patch } from '../cluster/verbs.js';
import type { KubeObject } from '../objects/kube.js';
import { migrateManagedFields, type JsonPatchOp, type ManagedFieldsEntry } from './cleanup.js';
import { policyOf } from './policy.js';
import { messageOf, refTo, type Writer } from './write.js';

/**
 * Whether `entry` is one `names` take over: an Apply or Update entry (not of a subresource) of a
 * manager whose name begins with one of them, as Flux matches its override managers.
 */
export function namedManager(entry: ManagedFieldsEntry, names: readonly string[]): boolean {
  if (entry.subresource || (entry.operation !== 'Apply' && entry.operation !== 'Update')) return false;
  const manager = entry.manager ?? '';
  return names.some((n) => n !== '' && manager.startsWith(n));
}

/**
 * The JSON patch that merges the named managers' entries of `live` into `manager`'s Apply entry
 * (the first one becomes it when there is none), or undefined when none of them owns anything here.
 */
export function takeoverPatch(
  live: Record<string, unknown>,
  names: readonly string[],
  manager: string,
): JsonPatchOp[] | undefined {
  if (names.length === 0) return undefined;
  const entries = ((live['metadata'] ?? {}) as { managedFields?: ManagedFieldsEntry[] }).managedFields ?? [];
  const fields = migrateManagedFields(entries, manager, (e) => namedManager(e, names));
  return fields ? [{ op: 'replace', path: '/metadata/managedFields', value: fields }] : undefined;
}

/** The managers of `live` that a takeover would take fields from. */
export function takenFrom(live: Record<string, unknown>, names: readonly string[], manager: string): string[] {
  const entries = ((live['metadata'] ?? {}) as { managedFields?: ManagedFieldsEntry[] }).managedFields ?? [];
  const taken = entries.filter(
    (e) => namedManager(e, names) && !(e.manager === manager && e.operation === 'Apply' && !e.subresource),
  );
  return [...new Set(taken.map((e) => e.manager ?? ''))].sort();
}

/** What a takeover needs: the names, and what decides whether the object is touched at all. */
export interface TakeoverOptions {
  /** The override-manager-before-dry-run names; none: nothing is taken over. */
  managers?: readonly string[];
  force?: boolean;
  /** What messageOf needs to redact an error about the object. */
  secrets?: Parameters<typeof messageOf>[2];
}

/** The managers whose fields a takeover of `live` would move, for an object whose policy allows it. */
function pending(desired: KubeObject, live: LiveObject, manager: string, opts: TakeoverOptions): string[] {
  const names = opts.managers ?? [];
  if (names.length === 0) return [];
  // ssa: Merge keeps other managers' fields (Flux's cleanup exclusions); IfNotPresent and Ignore are not applied.
  const policy = policyOf(desired, live, opts.force ?? false);
  if (policy.skip || policy.ifNotPresent || policy.merge) return [];
  return takenFrom(live, names, manager);
}

/**
 * Takes the named managers' fields of `live` over before `desired`'s dry-run: the object as the patch
 * left it, or `live` when there was nothing to take. Throws an Error naming the object.
 */
export async function takeOverBeforeDryRun(
  m: Writer & { log: (line: string) => void },
  mapping: ResourceMapping,
  desired: KubeObject,
  live: LiveObject,
  subject: string,
  opts: TakeoverOptions,
): Promise<LiveObject> {
  const from = pending(desired, live, m.fieldManager, opts);
  const ops = from.length > 0 ? takeoverPatch(live, opts.managers ?? [], m.fieldManager) : undefined;
  if (ops === undefined) return live;
  let patched: LiveObject;
  try {
    patched = await patch<LiveObject>(m.client, refTo(mapping, desired), ops, 'application/json-patch+json', {
      fieldManager: m.fieldManager,
    });
  } catch (err) {
    throw new Error(
      `${subject} field managers takeover before the dry-run failed: ${messageOf(err, desired, opts.secrets)}`,
      { cause: err },
    );
  }
  m.log(`${subject}: fields of ${from.join(', ')} taken over by ${m.fieldManager} before the dry-run`);
  return patched;
}

/**
 * In a preview (which writes nothing), what a failed dry-run's message adds when the apply would
 * first take fields over: the dry-run ran without it.
 */
export function pendingTakeoverHint(
  desired: KubeObject,
  live: LiveObject | undefined,
  manager: string,
  opts: TakeoverOptions,
): string {
  const from = live ? pending(desired, live, manager, opts) : [];
  if (from.length === 0) return '';
  return (
    `; the apply would first take over the fields of ${from.join(', ')} (override-manager-before-dry-run), ` +
    'which a preview does not write: this dry-run ran without that takeover'
  );
}
