/**
 * Sets of inventory entries (the id itself is src/objects/id.ts). Pure: set arithmetic and ordering,
 * no cluster access.
 */
import { refOf, type Entry } from '../objects/id.js';
import { applyOrder } from '../objects/order.js';

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
