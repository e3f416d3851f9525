/**
 * The inventory rule and the prune guards, pure. Nothing a run creates is forgotten, and confirmed
 * entries claim only what was applied: before applying, the objects about to be applied are
 * recorded as pending; afterwards the entries are the new set on success (plus objects whose
 * deletion failed), or old ∪ applied on failure, when nothing is pruned.
 */
import { hasMarker, OWNER_NAME_LABEL, OWNER_NAMESPACE_LABEL, PRUNE_KEEP_MARKERS } from '../objects/flux.js';
import { refOf, type Entry } from '../objects/id.js';
import { minus, union } from './entries.js';
import { INVENTORY_LABEL, KS_NAME_LABEL, KS_NAMESPACE_LABEL } from './store.js';
import type { NamespaceContents, NamespacedObject } from '../cluster/contents.js';

export type { NamespaceContents, NamespacedObject };

export interface PruneGuard {
  /** Largest share (0–1) of the inventory one run may delete. */
  maxShare: number;
  /** Lifts both guards (input allow-large-prune). */
  allowLarge: boolean;
}

/** Prunes of this many objects or fewer are never held back by the share rule. */
export const SMALL_PRUNE = 5;

/**
 * Why pruning `stale` must not happen, or undefined. Two guards beyond Flux: a build that renders
 * nothing while the inventory holds objects (a broken path or an emptied overlay would otherwise
 * delete everything), and a prune of more than `maxShare` of the inventory (more than SMALL_PRUNE objects).
 */
export function pruneRefusal(
  old: readonly Entry[],
  next: readonly Entry[],
  stale: readonly Entry[],
  guard: PruneGuard,
): string | undefined {
  if (guard.allowLarge || stale.length === 0) return undefined;
  if (next.length === 0) {
    return (
      `the build rendered no objects, so pruning would delete all ${old.length} object(s) of the inventory; ` +
      'nothing was deleted. If that is intended, set the input allow-large-prune: true for one run'
    );
  }
  return shareRefusal(old.length, stale.length, guard);
}

/** The share rule alone: deleting `deleting` of `total` objects, more than SMALL_PRUNE and above maxShare. */
export function shareRefusal(total: number, deleting: number, guard: PruneGuard): string | undefined {
  if (guard.allowLarge || deleting <= SMALL_PRUNE || total === 0) return undefined;
  const share = deleting / total;
  if (share <= guard.maxShare) return undefined;
  return (
    `pruning would delete ${deleting} of ${total} object(s) (${Math.round(share * 100)}%), more than ` +
    `prune-max-share (${Math.round(guard.maxShare * 100)}%); nothing was deleted. If that is intended, raise ` +
    'prune-max-share or set allow-large-prune: true for one run'
  );
}

/** The outcome of a run, as the inventory rule needs it. */
export type RunOutcome =
  /** Applied (and healthy where checked); `survivors` are stale objects that were not deleted. */
  | { kind: 'succeeded'; survivors: readonly Entry[] }
  /** Failed before or during apply, or in the health check; `applied` is what this run applied. */
  | { kind: 'failed'; applied: readonly Entry[] };

/** The confirmed entries after a run: `old` is what the run started from (confirmed ∪ pending). */
export function entriesAfter(old: readonly Entry[], next: readonly Entry[], outcome: RunOutcome): Entry[] {
  // On failure the applied objects' versions win: the version this run applied is the one served.
  return outcome.kind === 'succeeded' ? union(next, outcome.survivors) : union(outcome.applied, old);
}

/**
 * Another writer's changes since this run read the inventory, merged into this run's result: entries
 * they added stay (this run knows nothing of those objects); everything else is this run's answer.
 */
export function mergeConcurrent(base: readonly Entry[], latest: readonly Entry[], ours: readonly Entry[]): Entry[] {
  return union(ours, minus(latest, base));
}

/** Objects every Namespace gets from the control plane; counted only when a Kustomization labelled them. */
const NAMESPACE_DEFAULTS = new Set(['/ConfigMap/kube-root-ca.crt', '/ServiceAccount/default']);

/** Names shown per kind in a refusal; the rest are counted. */
const NAMES_SHOWN = 3;

/** The Namespaces among `stale` (core group Namespace entries), in their order there. */
export function prunedNamespaces(stale: readonly Entry[]): string[] {
  return stale.flatMap((e) => {
    const r = refOf(e);
    return r.kind === 'Namespace' && r.apiVersion === 'v1' ? [r.name] : [];
  });
}

/**
 * Who an object in a Namespace about to be pruned belongs to, when deleting the Namespace would
 * take it along although this run does not prune it; undefined when it does not count: an object
 * this Kustomization prunes anyway (or that only carries its labels, as Endpoints copy a Service's),
 * a dependent (ownerReferences: its owner counts), one already terminating, or a Namespace default
 * nobody labelled (`kube-root-ca.crt`, the `default` ServiceAccount).
 */
export function takenAlongBy(
  obj: NamespacedObject,
  namespace: string,
  owner: { name: string; namespace: string },
  next: readonly Entry[],
): string | undefined {
  if (obj.terminating) return undefined;
  const labels = obj.labels ?? {};
  // An inventory (this run's or another's): deleting it loses track of what its Kustomization applied.
  if (labels[INVENTORY_LABEL] === 'true')
    return `the inventory of Kustomization ${labels[KS_NAMESPACE_LABEL] ?? '?'}/${labels[KS_NAME_LABEL] ?? '?'}`;
  if (labels[`${INVENTORY_LABEL}-part`]) return `the inventory ${labels[`${INVENTORY_LABEL}-part`]}`;
  const name = labels[OWNER_NAME_LABEL];
  if (name === undefined || name === '') {
    if (obj.owned || NAMESPACE_DEFAULTS.has(`${obj.group}/${obj.kind}/${obj.name}`)) return undefined;
    return 'no Kustomization (no owner labels)';
  }
  const ns = labels[OWNER_NAMESPACE_LABEL];
  if (name !== owner.name || ns !== owner.namespace) return `Kustomization ${ns || '?'}/${name}`;
  const id = `${namespace}_${obj.name}_${obj.group}_${obj.kind}`;
  if (next.some((e) => e.id === id)) return 'this Kustomization (still in Git)';
  // Prune skips these (src/ssa/delete.ts), the Namespace's deletion would not.
  const meta = { metadata: { labels, annotations: obj.annotations ?? {} } };
  const kept = PRUNE_KEEP_MARKERS.find(([key, value]) => hasMarker(meta, key, value));
  return kept ? `this Kustomization (marked ${kept[0]}: ${kept[1]})` : undefined;
}

/**
 * Why the Namespaces about to be pruned must not be, or undefined: deleting a Namespace deletes
 * everything in it, so one that holds objects of another Kustomization, of no Kustomization, or of
 * this one that stay, is pruned only with allow-large-prune. The refusal counts them per owner and
 * kind and names a few; its first line says what was held back, one line per Namespace follows.
 */
export function namespaceRefusal(
  contents: readonly NamespaceContents[],
  owner: { name: string; namespace: string },
  next: readonly Entry[],
  guard: Pick<PruneGuard, 'allowLarge'>,
): string | undefined {
  if (guard.allowLarge) return undefined;
  const lines: string[] = [];
  const held: string[] = [];
  let total = 0;
  for (const c of contents) {
    // owner → kind → names
    const byOwner = new Map<string, Map<string, string[]>>();
    for (const obj of c.objects) {
      const who = takenAlongBy(obj, c.namespace, owner, next);
      if (who === undefined) continue;
      const kinds = byOwner.get(who) ?? new Map<string, string[]>();
      byOwner.set(who, kinds);
      const kind = obj.group === '' ? obj.kind : `${obj.kind}.${obj.group}`;
      kinds.set(kind, [...(kinds.get(kind) ?? []), obj.name]);
      total++;
    }
    if (byOwner.size === 0) continue;
    held.push(`Namespace/${c.namespace}`);
    const owners = [...byOwner.keys()].sort(ownerOrder);
    const parts = owners.map((who) => {
      const kinds = [...byOwner.get(who)!.entries()].sort(([a], [b]) => a.localeCompare(b));
      return `${kinds.map(([kind, names]) => kindCount(kind, names)).join(', ')} of ${who}`;
    });
    lines.push(`  in Namespace/${c.namespace}: ${parts.join('; ')}`);
  }
  if (total === 0) return undefined;
  const where = held.length === 1 ? 'it' : 'them';
  return (
    `pruning ${held.join(', ')} would also delete the ${total} object(s) in ${where} that this run does not prune; ` +
    `nothing was deleted. Move or delete those objects first, or set allow-large-prune: true for one run to ` +
    `delete them with the Namespace${held.length === 1 ? '' : 's'}:\n${lines.join('\n')}`
  );
}

/** Other Kustomizations first, then this one's, inventories, objects of no Kustomization; alphabetical within. */
function ownerOrder(a: string, b: string): number {
  const rank = (s: string) =>
    s.startsWith('Kustomization ') ? 0 : s.startsWith('this ') ? 1 : s.startsWith('the inventory') ? 2 : 3;
  return rank(a) - rank(b) || a.localeCompare(b);
}

/** `1 ConfigMap (a)`, `4 Secret objects (a, b, c, …)`. */
function kindCount(kind: string, names: readonly string[]): string {
  const sorted = [...names].sort();
  const shown = sorted.slice(0, NAMES_SHOWN).join(', ') + (sorted.length > NAMES_SHOWN ? ', …' : '');
  return `${sorted.length} ${kind}${sorted.length === 1 ? '' : ' objects'} (${shown})`;
}
