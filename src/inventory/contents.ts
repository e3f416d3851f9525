/**
 * The Namespace prune guard with what lives in the Namespaces: plan.ts's namespaceRefusal over
 * the lists of cluster/contents.ts, read only when a Namespace is being pruned.
 */
import type { NamespaceContents } from '../cluster/contents.js';
import type { Entry } from '../objects/id.js';
import { namespaceRefusal, prunedNamespaces, type PruneGuard } from './plan.js';

/** Reads what lives in Namespaces (a ResourceManager, ssa/manager.ts). */
export interface ContentsReader {
  namespaceContents(namespaces: readonly string[], note: (line: string) => void): Promise<NamespaceContents[]>;
}

/**
 * Why the Namespaces among `stale` must not be pruned (see namespaceRefusal), or undefined. Reads
 * the cluster only when a Namespace is being pruned and allow-large-prune is off.
 */
export async function namespacePruneRefusal(
  reader: ContentsReader,
  stale: readonly Entry[],
  next: readonly Entry[],
  owner: { name: string; namespace: string },
  guard: Pick<PruneGuard, 'allowLarge'>,
  note: (line: string) => void,
): Promise<string | undefined> {
  const namespaces = prunedNamespaces(stale);
  if (guard.allowLarge || namespaces.length === 0) return undefined;
  const contents = await reader.namespaceContents(namespaces, note);
  return namespaceRefusal(contents, owner, next, guard);
}
