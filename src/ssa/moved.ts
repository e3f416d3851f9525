/**
 * Where an applied object came from (pure): its owner labels named another Kustomization before
 * this apply, and this apply's diff shows them change. That is an object moved from one
 * Kustomization's build to this one's, or a Kustomization renamed to this one.
 */
import { OWNER_NAME_LABEL, OWNER_NAMESPACE_LABEL } from '../objects/flux.js';
import type { ChangeSetEntry } from './changeset.js';
import { escapePointer } from './json.js';

const pointer = (label: string) => `/metadata/labels/${escapePointer(label)}`;

/**
 * The Kustomization (`namespace/name`) an object's owner labels named before this apply by `owner`,
 * when they named another one; undefined for an object they did not name (created, adopted) or
 * named as `owner` already.
 */
export function movedFrom(
  entry: Pick<ChangeSetEntry, 'diff'>,
  owner: { name: string; namespace: string },
): string | undefined {
  const change = (label: string) => entry.diff?.find((c) => c.path === pointer(label));
  const nameChange = change(OWNER_NAME_LABEL);
  const namespaceChange = change(OWNER_NAMESPACE_LABEL);
  if (nameChange === undefined && namespaceChange === undefined) return undefined;
  // A label that was added (no value before) was not an owner's: an adoption, not a move.
  const before = (c: typeof nameChange, now: string) =>
    c === undefined
      ? now
      : c.kind === 'changed' && typeof c.before === 'string' && c.before !== ''
        ? c.before
        : undefined;
  const name = before(nameChange, owner.name);
  const namespace = before(namespaceChange, owner.namespace);
  if (name === undefined || namespace === undefined) return undefined;
  if (name === owner.name && namespace === owner.namespace) return undefined;
  return `${namespace}/${name}`;
}

/** The changeset with each moved object's former Kustomization (movedFrom). */
export function withMoves(changeset: ChangeSetEntry[], owner: { name: string; namespace: string }): ChangeSetEntry[] {
  return changeset.map((e) => {
    const from = e.action === 'configured' ? movedFrom(e, owner) : undefined;
    return from === undefined ? e : { ...e, movedFrom: from };
  });
}
