/**
 * Whose an inventory is, pure: every inventory records the repository it was written from (named
 * as src/objects/names.ts names it), and a run refuses one recorded by another repository.
 */
import { sameSource } from '../objects/names.js';
import type { InventoryStatus } from './codec.js';

/**
 * Whether an inventory's recorded source is this run's repository. Inventories written before this
 * version recorded GITHUB_REPOSITORY as it was (`owner/repo`, no host, and no `origin` beside it):
 * on GitHub Enterprise Server, where this version records `host/owner/repo`, such a record is
 * the same repository when the owner and name match.
 */
export function recordedBy(recorded: { source: string; origin?: string | undefined }, source: string): boolean {
  if (sameSource(recorded.source, source)) return true;
  const legacy = recorded.origin === undefined && /^[^/:.]+\/[^/]+$/.test(recorded.source);
  return legacy && !source.startsWith('local:') && source.toLowerCase().endsWith(`/${recorded.source.toLowerCase()}`);
}

/** What this run is, as an inventory records it. */
export interface Claim {
  /** `namespace/name` of the Kustomization. */
  kustomization: string;
  source: string;
  /** The Kustomization file, or the `path` input's directory. */
  origin: string;
}

/**
 * Why this run may not take over the inventory `recorded` (undefined when it may). An inventory
 * written from another repository is never taken over or pruned. Nor is one that records no
 * repository: every version writes one (since fb2fe83, 2026-12-03, before any release), so such an
 * inventory was written by hand, by another tool, or by a development build older than that;
 * its entries prove nothing, and adopting them would let whoever wrote it choose what this run
 * prunes. The migration rule is to delete it (its objects stay; the next run records what it
 * applies). An inventory written from a directory without a git remote is taken over by a run from
 * another such directory: a directory is not a repository, and the same files copied elsewhere are
 * the same Kustomization. (Path-mode names include the directory, so only Kustomization files can
 * meet this way.) Problems name both sides and what to do.
 */
export function ownershipProblem(
  recorded: Pick<InventoryStatus, 'source' | 'kustomization' | 'origin'> | undefined,
  inventory: string,
  claim: Claim,
): string | undefined {
  if (recorded === undefined) return undefined;
  if (recorded.source === undefined || recorded.source === '') return unprovenProblem(inventory, claim);
  if (recordedBy({ ...recorded, source: recorded.source }, claim.source)) return undefined;
  if (recorded.source.startsWith('local:') && claim.source.startsWith('local:')) return undefined;
  const theirs = recorded.origin ? `${recorded.source} (${recorded.origin})` : recorded.source;
  return (
    `inventory ${inventory} belongs to Kustomization ${recorded.kustomization} of repository ${theirs}, ` +
    `not to this run's repository ${claim.source} (${claim.origin}): nothing was applied or pruned. ` +
    'Two repositories (or folders) must not share a Kustomization name in one cluster: give this one another ' +
    'name (input name, or metadata.name in the Kustomization file), or delete that inventory if the other ' +
    'repository no longer deploys it'
  );
}

/** The refusal of an inventory that records no repository, with the way out (the migration rule). */
function unprovenProblem(inventory: string, claim: Claim): string {
  const slash = inventory.indexOf('/');
  const [namespace, name] = slash > 0 ? [inventory.slice(0, slash), inventory.slice(slash + 1)] : ['', inventory];
  const command = `kubectl${namespace ? ` -n ${namespace}` : ''} delete configmap ${name}`;
  return (
    `inventory ${inventory} records no repository, so nothing proves it was written by kustomize-reconcile for ` +
    `this Kustomization (${claim.kustomization} of ${claim.source}, ${claim.origin}): kustomize-reconcile ` +
    'records the repository in every inventory it writes, so this one was written by hand, by another tool or ' +
    'by a development build. ' +
    'Nothing was applied or pruned. If this Kustomization is yours, delete that inventory ' +
    `(\`${command}\`; its objects stay in the cluster, the next run records what it applies, and objects ` +
    'removed from Git meanwhile must be deleted by hand), then run again'
  );
}
