/**
 * Destructive changes need a reviewer's yes (input destructive-approval-label). An apply refuses,
 * before it writes anything of the Kustomization, to delete an object of a destructive kind
 * (ssa/renames.ts DESTRUCTIVE_KINDS: prune, the old object of a rename, a removed Kustomization's
 * objects) unless the merged pull request of the pushed commit carries the label (the action's
 * edge looks it up: github/approval.ts) or the live object carries the annotation
 * `kustomize-reconcile.dev/destructive: allowed`; a recreate (force on an immutable field) of such
 * an object is refused in its stage's dry-run, before anything of the stage is written. A preview
 * lists the objects an apply would need the yes for.
 */
import type { ManagedCluster } from '../cluster/managed.js';
import { find } from '../cluster/verbs.js';
import { OWNER_NAME_LABEL, OWNER_NAMESPACE_LABEL } from '../objects/flux.js';
import { groupOf, refOf, subjectOfEntry, type Entry } from '../objects/id.js';
import type { Settings } from '../options/settings.js';
import { DESTRUCTIVE_ALLOWED, DESTRUCTIVE_ANNOTATION, isDestructiveKind } from '../ssa/renames.js';
import { UserError } from '../util/user-error.js';

export { DESTRUCTIVE_ALLOWED, DESTRUCTIVE_ANNOTATION };

/** A gate that holds: the label a yes needs, and why the run does not have it. */
export interface Gate {
  label: string;
  why: string;
}

type Live = { metadata?: { annotations?: Record<string, string>; labels?: Record<string, string> } };

/** The run's gate, or undefined: no label set, or the pull request carries it. */
export function gateOf(settings: Pick<Settings, 'destructiveApprovalLabel' | 'approval'>): Gate | undefined {
  const label = settings.destructiveApprovalLabel;
  if (label === undefined || label === '' || settings.approval?.approved === true) return undefined;
  return { label, why: settings.approval?.why ?? 'no pull request was looked up for this run' };
}

/** Whether the live object carries the annotation that approves its deletion or recreation. */
export const approvedByAnnotation = (live: Live): boolean =>
  live.metadata?.annotations?.[DESTRUCTIVE_ANNOTATION] === DESTRUCTIVE_ALLOWED;

/** Whether an inventory entry is of a destructive kind. */
export const destructiveEntry = (e: Entry): boolean => {
  const r = refOf(e);
  return isDestructiveKind(groupOf(r.apiVersion), r.kind);
};

/**
 * The entries among `entries` (objects about to be deleted) that need a yes: of a destructive kind,
 * live, still `owner`'s (prune skips another's), and without the approving annotation.
 */
export async function needingApproval(
  cluster: Pick<ManagedCluster, 'client' | 'discovery'>,
  entries: readonly Entry[],
  owner: { name: string; namespace: string },
): Promise<Entry[]> {
  const out: Entry[] = [];
  for (const e of entries.filter(destructiveEntry)) {
    const r = refOf(e);
    const resource = await cluster.discovery.mapping(r.apiVersion, r.kind).catch(() => undefined);
    if (resource === undefined) continue;
    const live = await find<Live>(cluster.client, { resource, namespace: r.namespace, name: r.name });
    if (live === undefined || approvedByAnnotation(live)) continue;
    const labels = live.metadata?.labels ?? {};
    if (labels[OWNER_NAME_LABEL] !== owner.name || labels[OWNER_NAMESPACE_LABEL] !== owner.namespace) continue;
    out.push(e);
  }
  return out;
}

/**
 * Why an apply may not `action` (`delete Service/a/b, …`): the label it needs and why the run does
 * not have it, what was not written (`scope`), and the two ways to a yes.
 */
export function gateMessage(action: string, gate: Gate, scope: string): string {
  return (
    `refused to ${action}: destructive changes need a reviewer's yes (destructive-approval-label: ` +
    `${gate.label}), and ${gate.why}. Nothing of ${scope} was written. Add the label "${gate.label}" to the ` +
    `pull request and run again, or annotate each object with ${DESTRUCTIVE_ANNOTATION}: ${DESTRUCTIVE_ALLOWED}`
  );
}

/**
 * The refusal of deleting `entries`, and the `implied` objects Kubernetes would delete because of
 * the change (`Kind/ns/name (by the garbage collector)`), as the error of the Kustomization's plan.
 */
export const deletionRefusal = (entries: readonly Entry[], gate: Gate, implied: readonly string[] = []): UserError =>
  new UserError(
    gateMessage(`delete ${[...entries.map(subjectOfEntry), ...implied].join(', ')}`, gate, 'this Kustomization'),
  );

/** The refusal of one recreate, or undefined when the object may be recreated. */
export function recreateRefusal(
  gate: Gate | undefined,
  obj: { apiVersion: string; kind: string },
  live: Live,
): string | undefined {
  if (gate === undefined || !isDestructiveKind(groupOf(obj.apiVersion), obj.kind) || approvedByAnnotation(live))
    return undefined;
  return gateMessage('delete and recreate it for its immutable fields', gate, 'its stage');
}
