/**
 * Reads with the apply's identity. A preview's diff shows live values, and the dry-run that
 * computes it answers with the whole live object merged with the desired one. A preview or drift
 * check therefore reads what the apply could write: as the Kustomization's ServiceAccount
 * (spec.serviceAccountName, or the default-service-account input), whose RBAC decides what it may
 * read (plan() hands its client to the dry-runs); without either, the run's own credentials may read
 * only the objects of this Kustomization's own inventory, and those of another inventory of the same
 * repository its owner labels name (elsewhereReader: a move). Any other object of the build that turns
 * out to exist is planned "configured" without being read, compared or shown (ssa/apply.ts
 * `mayRead`): a pull request cannot name another tenant's object and have its values published.
 * An apply writes what the tree says with the same identity, and shows only what it wrote.
 */
import type { ClusterClient } from '../cluster/client.js';
import type { Discovery } from '../cluster/discovery.js';
import { find } from '../cluster/verbs.js';
import { impersonatedUser } from '../flux/support.js';
import type { KustomizationSpec } from '../flux/types.js';
import { ownershipProblem } from '../inventory/identity.js';
import { InventoryStore } from '../inventory/store.js';
import { OWNER_NAME_LABEL, OWNER_NAMESPACE_LABEL } from '../objects/flux.js';
import { entryOf, type Entry } from '../objects/id.js';
import type { KubeObject } from '../objects/kube.js';
import type { Settings } from '../options/settings.js';

/** The inventory ids the dry-runs may read, or undefined when the run may read all it is allowed to (pure). */
export function readableOf(
  ctx: {
    applying: boolean;
    spec: Pick<KustomizationSpec, 'namespace' | 'serviceAccountName'>;
    settings: Pick<Settings, 'defaultServiceAccount'>;
  },
  inventory: { old: readonly Entry[] },
): ReadonlySet<string> | undefined {
  if (ctx.applying || impersonatedUser(ctx.spec, ctx.settings) !== undefined) return undefined;
  return new Set(inventory.old.map((e) => e.id));
}

/** What elsewhereReader reads with. */
export interface ElsewhereReads {
  client: ClusterClient;
  discovery: Discovery;
  settings: Pick<Settings, 'inventoryNamespace' | 'run'>;
  spec: Pick<KustomizationSpec, 'name' | 'namespace'>;
}

/**
 * Whether an object outside this Kustomization's inventory is in the inventory of the Kustomization
 * its owner labels name, when that inventory records this run's repository: a move or a rename
 * between Kustomizations of one repository, whose own preview would read it anyway. Labels alone
 * prove nothing (anyone may write them, and a tree may name a Kustomization as it likes); the
 * inventory is written by this tool only, and its repository is checked as any run checks its
 * own (inventory/identity.ts). One read of each inventory per Kustomization run.
 */
export function elsewhereReader(r: ElsewhereReads): (obj: KubeObject) => Promise<boolean> {
  const inventories = new Map<string, Promise<ReadonlySet<string>>>();
  const claim = { kustomization: `${r.spec.namespace}/${r.spec.name}`, source: r.settings.run.source, origin: '' };
  const entriesOf = (ks: { name: string; namespace: string }): Promise<ReadonlySet<string>> => {
    const key = `${ks.namespace}/${ks.name}`;
    let found = inventories.get(key);
    if (found === undefined) {
      const store = new InventoryStore(r.client, r.settings.inventoryNamespace ?? ks.namespace, ks);
      found = store.read().then(
        ({ record }) =>
          record === undefined || ownershipProblem(record.status, key, claim) !== undefined
            ? new Set<string>()
            : new Set(record.entries.map((e) => e.id)),
        () => new Set<string>(),
      );
      inventories.set(key, found);
    }
    return found;
  };
  return async (obj) => {
    const mapping = await r.discovery.mapping(obj.apiVersion, obj.kind).catch(() => undefined);
    if (mapping === undefined) return false;
    const namespace = mapping.namespaced ? obj.metadata.namespace : undefined;
    const live = await find<KubeObject>(r.client, { resource: mapping, namespace, name: obj.metadata.name }).catch(
      () => undefined,
    );
    const name = live?.metadata.labels?.[OWNER_NAME_LABEL];
    const ns = live?.metadata.labels?.[OWNER_NAMESPACE_LABEL];
    if (!name || !ns || (name === r.spec.name && ns === r.spec.namespace)) return false;
    const id = entryOf({ apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name, namespace }).id;
    return (await entriesOf({ name, namespace: ns })).has(id);
  };
}
