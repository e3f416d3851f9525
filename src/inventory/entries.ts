/**
 * Inventory entries in Flux's format (`.status.inventory.entries[]`): `id` is
 * `<namespace>_<name>_<group>_<kind>` (namespace empty for cluster-scoped objects, group empty for the core
 * group) and `v` the version. Pure: set arithmetic and ordering, no cluster access.
 */
import { applyOrder } from '../ssa/order.js';

export interface Entry {
  id: string;
  v: string;
}

export interface ObjectRef {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
}

/** The entry of an object; `_` cannot occur in names, namespaces, groups or kinds, so ids split cleanly. */
export function entryOf(ref: ObjectRef): Entry {
  const slash = ref.apiVersion.indexOf('/');
  const group = slash === -1 ? '' : ref.apiVersion.slice(0, slash);
  const version = slash === -1 ? ref.apiVersion : ref.apiVersion.slice(slash + 1);
  return { id: `${ref.namespace ?? ''}_${ref.name}_${group}_${ref.kind}`, v: version };
}

/** The object an entry names; throws on an id that is not four `_`-separated parts. */
export function refOf(entry: Entry): ObjectRef {
  const parts = entry.id.split('_');
  if (parts.length !== 4 || parts[1] === '' || parts[3] === '' || entry.v === '') {
    throw new Error(`inventory entry ${JSON.stringify(entry)} is not <namespace>_<name>_<group>_<kind> with a version`);
  }
  const [namespace, name, group, kind] = parts as [string, string, string, string];
  return {
    apiVersion: group === '' ? entry.v : `${group}/${entry.v}`,
    kind,
    name,
    ...(namespace !== '' ? { namespace } : {}),
  };
}

/** `Kind/namespace/name` or `Kind/name`, as the changeset prints objects. */
export function subjectOfEntry(entry: Entry): string {
  const r = refOf(entry);
  return r.namespace ? `${r.kind}/${r.namespace}/${r.name}` : `${r.kind}/${r.name}`;
}

/** Entries of `a` and then of `b` not already in `a` (by id; `a`'s version wins). */
export function union(a: readonly Entry[], b: readonly Entry[]): Entry[] {
  const seen = new Set(a.map((e) => e.id));
  const out = [...a];
  for (const e of b) {
    if (!seen.has(e.id)) {
      seen.add(e.id);
      out.push(e);
    }
  }
  return out;
}

/** Entries of `a` whose id is not in `b`. */
export function minus(a: readonly Entry[], b: readonly Entry[]): Entry[] {
  const ids = new Set(b.map((e) => e.id));
  return a.filter((e) => !ids.has(e.id));
}

/**
 * What a prune deletes: old minus new by id (the version of the old entry is kept, as in Flux), in
 * the reverse of the apply order: webhooks first, Namespaces and CRDs last.
 */
export function staleEntries(old: readonly Entry[], next: readonly Entry[]): Entry[] {
  const stale = minus(old, next).map((e) => ({ e, r: refOf(e) }));
  const ordered = applyOrder(
    stale.map(({ e, r }) => ({
      apiVersion: r.apiVersion,
      kind: r.kind,
      metadata: { name: r.name, ...(r.namespace ? { namespace: r.namespace } : {}) },
      entry: e,
    })),
  );
  return ordered.reverse().map((o) => o.entry);
}

/** Sorted by id, as Flux stores them, so that an unchanged inventory encodes to the same bytes. */
export function sortEntries(entries: readonly Entry[]): Entry[] {
  return [...entries].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
