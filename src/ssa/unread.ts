/**
 * The plan of an object the run may not read (reconcile/readable.ts): a preview without an account
 * to act as, of an object that is not in the Kustomization's own inventory. A server-side dry-run
 * answers with the live object merged with the desired one, so its answer is used only to learn
 * whether the object exists; nothing of the live object is compared or shown but its owner labels
 * (ownerLabelChanges), and a refused dry-run of an object that exists does not quote the server
 * (its message may quote live fields).
 */
import type { ResourceMapping } from '../cluster/discovery.js';
import { versionOf } from '../cluster/live.js';
import { exists, find } from '../cluster/verbs.js';
import { OWNER_NAME_LABEL, OWNER_NAMESPACE_LABEL } from '../objects/flux.js';
import type { FieldChange } from './diff.js';
import { escapePointer } from './json.js';
import { subjectOf, type KubeObject } from '../objects/kube.js';
import type { ChangeSetEntry } from './changeset.js';
import { policyOf } from './policy.js';
import { reasonOf, serverSideApply, type Planned, type Writer } from './write.js';

/** What the report says of an object that exists and was not read. */
export const NOT_READ =
  "exists, and is not this Kustomization's (not in its inventory); without spec.serviceAccountName or " +
  'default-service-account a preview reads only its own objects: the live object was not read, compared or shown';

/**
 * The object planned without reading it: created when it does not exist, configured (with NOT_READ)
 * when it does; undefined when its dry-run failed and it does not exist, so that the caller plans it
 * as any create (the failure then concerns only what the tree wrote).
 */
export async function planUnread(
  m: Writer,
  mapping: ResourceMapping,
  obj: KubeObject,
  opts: { force?: boolean },
): Promise<Planned | undefined> {
  const entry: ChangeSetEntry = {
    subject: subjectOf(obj),
    action: 'created',
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    ...(obj.metadata.namespace ? { namespace: obj.metadata.namespace } : {}),
    name: obj.metadata.name,
  };
  if (policyOf(obj, undefined, opts.force ?? false).skip) {
    return { obj, mapping, entry: { ...entry, action: 'skipped' }, apply: false };
  }
  let answer: Record<string, unknown>;
  try {
    answer = await serverSideApply(m, mapping, obj, true);
  } catch (err) {
    const ref = { resource: mapping, namespace: obj.metadata.namespace, name: obj.metadata.name };
    // Whether it exists is all that is read; a failed read counts as existing (nothing is quoted).
    if (!(await exists(m.client, ref).catch(() => true))) return undefined;
    throw new Error(
      `${entry.subject} dry-run failed (${reasonOf(err)}): the object ${NOT_READ}, and so is the server's ` +
        'message (it may quote live fields)',
      { cause: err },
    );
  }
  if (versionOf(answer) === '') return { obj, mapping, entry, apply: true };
  const live = await find<KubeObject>(m.client, {
    resource: mapping,
    namespace: obj.metadata.namespace,
    name: obj.metadata.name,
  }).catch(() => undefined);
  const diff = ownerLabelChanges(obj, live?.metadata.labels ?? {});
  return {
    obj,
    mapping,
    entry: { ...entry, action: 'configured', note: NOT_READ, ...(diff.length > 0 ? { diff } : {}) },
    apply: true,
  };
}

/**
 * The change of the owner labels alone: which Kustomization (of this run or another) holds the
 * object now is what a reviewer needs to see a move or a takeover (ssa/moved.ts reads it), and it
 * is a name, not a value the other tenant keeps.
 */
export function ownerLabelChanges(desired: KubeObject, liveLabels: Record<string, string>): FieldChange[] {
  return [OWNER_NAME_LABEL, OWNER_NAMESPACE_LABEL].flatMap((label): FieldChange[] => {
    const after = desired.metadata.labels?.[label];
    const before = liveLabels[label];
    if (after === undefined || after === before) return [];
    const path = `/metadata/labels/${escapePointer(label)}`;
    return [before === undefined ? { path, kind: 'added', after } : { path, kind: 'changed', before, after }];
  });
}
