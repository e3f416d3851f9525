/**
 * Kustomizations whose file left the repository while their inventory stayed in the cluster, pure.
 * In Flux the parent Kustomization prunes the child object and the child's finalizer applies its
 * deletionPolicy. Here the "parent" is the set of files the `kustomizations` input names: each
 * inventory records that set, and an inventory of the same set whose Kustomization this run did
 * not find is removed. What happens to its objects is the recorded deletionPolicy's call.
 */
import type { InventoryStatus } from './codec.js';

/**
 * The set a run's Kustomizations belong to: the repository and the `kustomizations` patterns
 * (order and a leading `./` do not matter). Two workflows with different patterns never see each
 * other's Kustomizations as removed.
 */
export function setIdentity(source: string | undefined, patterns: readonly string[]): string {
  const normal = [...new Set(patterns.map((p) => p.trim().replace(/^(\.\/)+/, '')).filter((p) => p !== ''))].sort();
  return `${source ?? 'local'}:${normal.join(',')}`;
}

export type RemovalAction =
  /** Delete the objects (owner labels checked, exclusions honoured), then the inventory. */
  | 'delete'
  /** As delete, then wait up to the recorded timeout for the objects to be gone. */
  | 'delete-and-wait'
  /** Leave the objects in the cluster and remove the inventory. */
  | 'orphan';

/** What Flux's finalizer would do with the objects of a deleted Kustomization. */
export function removalAction(status: Pick<InventoryStatus, 'deletionPolicy' | 'prune'>): {
  action: RemovalAction;
  why: string;
} {
  switch (status.deletionPolicy) {
    case 'Delete':
      return { action: 'delete', why: 'deletionPolicy: Delete' };
    case 'WaitForTermination':
      return { action: 'delete-and-wait', why: 'deletionPolicy: WaitForTermination' };
    case 'Orphan':
      return { action: 'orphan', why: 'deletionPolicy: Orphan' };
    default:
      return status.prune
        ? { action: 'delete', why: 'deletionPolicy: MirrorPrune with prune: true' }
        : { action: 'orphan', why: 'deletionPolicy: MirrorPrune with prune: false' };
  }
}

export interface KnownInventory {
  /** `namespace/name` of the Kustomization. */
  kustomization: string;
  /** The set recorded in its status; inventories written in path mode have none. */
  set?: string;
}

/** The inventories of `set` whose Kustomization is not among `present` (`namespace/name` keys). */
export function removedOf<T extends KnownInventory>(
  found: readonly T[],
  set: string,
  present: ReadonlySet<string>,
): T[] {
  return found
    .filter((f) => f.set === set && !present.has(f.kustomization))
    .sort((a, b) => (a.kustomization < b.kustomization ? -1 : a.kustomization > b.kustomization ? 1 : 0));
}
