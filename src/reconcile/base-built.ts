/**
 * The base commit's Kustomizations as their parents' builds on that commit make them, for the base
 * rule (source/secret-uses.ts): in the parent/children layout a child's file often says nothing of
 * its namespace (its folder's kustomization.yaml sets it) or of its substituteFrom (the parent's
 * spec.patches add it), and the run judges the child as its parent's build makes it on the head. So
 * is the base judged: its tree is taken out of git (`git archive`) into a scratch directory, every
 * Flux Kustomization file of it loaded (by cluster, as a run loads them) and each one built as the run
 * builds it (builds.ts, children.ts), its uses read from what the build made. Only the base commit's
 * files decide: the change under review cannot add a scope here. Worked out at most once a run, and
 * only when a use is missing from the base's files as written (guarded.ts, secret-trust.ts).
 */
import { clusterOf } from '../flux/clusters.js';
import { loadKustomizations } from '../flux/load.js';
import { fluxKustomizationTexts } from '../flux/repository.js';
import type { KustomizationSpec } from '../flux/types.js';
import type { Settings } from '../options/settings.js';
import type { ClusterClient } from '../cluster/client.js';
import { usesOf, useScope } from '../source/secret-uses.js';
import { commitTree } from '../source/commit-tree.js';
import { Builds } from './builds.js';

/** One glob per file (its last character as a class), so that a file nothing applies is left out, not refused (load.ts). */
const asGlob = (file: string) => `${file.slice(0, -1)}[${file.slice(-1)}]`;

/** The base's Kustomizations of each cluster, placed as a run places them; a cluster that cannot be loaded gives none. */
async function baseKustomizations(tree: string): Promise<KustomizationSpec[][]> {
  const files = (await fluxKustomizationTexts(tree)).map((t) => t.file).filter((f) => !/[*?[\]{}\\,!]/.test(f));
  const clusters = [...new Set(files.map(clusterOf))].sort();
  const out: KustomizationSpec[][] = [];
  for (const cluster of clusters) {
    const mine = files.filter((f) => clusterOf(f) === cluster);
    out.push(await loadKustomizations(mine.map(asGlob), tree).catch(() => []));
  }
  return out;
}

/**
 * How this run works out the base's use scopes as built (guarded.ts setBaseBuilder): the base's
 * Kustomizations rendered with the run's settings on the base's tree (trusted: it is the default
 * branch's), Secrets read with `client`, every value read passed to `secret`.
 */
export function baseBuilder(
  settings: Settings,
  client: ClusterClient,
  secret: (value: string) => void,
): (commit: string) => Promise<ReadonlySet<string>> {
  return async (commit) => {
    const scopes = new Set<string>();
    const base = await commitTree(settings.root, commit).catch(() => undefined);
    if (base === undefined) return scopes;
    const tree = base.tree;
    try {
      const { untrustedTree: _untrusted, ...rest } = settings;
      const onBase: Settings = { ...rest, root: tree, select: [], exclude: [] };
      for (const all of await baseKustomizations(tree)) {
        if (all.length === 0) continue;
        const builds = await Builds.open({ settings: onBase, all, sources: new Map(), client, secret, log: () => {} });
        try {
          for (const spec of all) {
            const built = await builds.asBuilt(spec).catch(() => undefined);
            if (built === undefined) continue;
            const { namespace, name } = built.spec;
            for (const u of usesOf(built.spec)) scopes.add(useScope(namespace, name, u));
          }
        } finally {
          await builds.close();
        }
      }
      return scopes;
    } catch {
      // The base could not be taken out or built: the refusal of the files as written stands.
      return scopes;
    } finally {
      await base.remove();
    }
  };
}
