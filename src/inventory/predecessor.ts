/**
 * A path-input Kustomization whose folder moved: its name is derived from the repository and the
 * path (objects/names.ts), so the move gives it a new name and an empty inventory, while the old
 * name's inventory stays with the objects. Flux would prune them under the old name and create them
 * under the new one; here the first run under the new name takes the old inventory over, as a
 * renamed Kustomization hands its objects over (reconcile/removed.ts), when it is provably the same
 * Kustomization moved: an inventory of this repository, of a path-input Kustomization in the same
 * namespace, whose recorded path is gone from this checkout and whose objects this build has some of.
 */
import { stat } from 'node:fs/promises';
import type { ClusterClient } from '../cluster/client.js';
import { ApiError } from '../cluster/errors.js';
import { CONFIGMAPS, list } from '../cluster/verbs.js';
import type { KustomizationSpec } from '../flux/types.js';
import type { Entry } from '../objects/id.js';
import { isInside } from '../kustomize/paths.js';
import { resolve } from 'node:path';
import type { InventoryRecord } from './codec.js';
import { recordedBy } from './identity.js';
import { legacyName } from '../objects/names.js';
import type { Settings } from '../options/settings.js';
import { INVENTORY_LABEL, InventoryStore, KS_NAMESPACE_LABEL, listedInventories, type ConfigMap } from './store.js';

/**
 * The inventory this path-input Kustomization had under its former name (the path alone), when its
 * name is derived; it is read only to be adopted if it records this repository.
 */
export function legacyStore(
  client: ClusterClient,
  store: InventoryStore,
  settings: Pick<Settings, 'name'>,
  spec: KustomizationSpec,
): InventoryStore | undefined {
  if (spec.origin.kind !== 'inputs' || settings.name !== undefined) return undefined;
  const former = { name: legacyName(spec.path), namespace: spec.namespace };
  return former.name === spec.name ? undefined : new InventoryStore(client, store.namespace, former);
}

/**
 * The inventory under `legacy` (this path's name before names included the repository), when it is
 * this path's and records this repository; one of another repository is left alone, with a note.
 */
export async function legacyAdoption(
  legacy: InventoryStore,
  spec: Pick<KustomizationSpec, 'namespace' | 'path'>,
  source: string,
  kustomization: string,
  note: (line: string) => void,
): Promise<Adoption | undefined> {
  const snap = await legacy.read();
  const status = snap.record?.status;
  if (!snap.record || !status) return undefined;
  const where = `${legacy.namespace}/${legacy.name}`;
  const expected = `${spec.namespace}/${legacyName(spec.path)}`;
  if (status.set !== undefined || status.kustomization !== expected) return undefined;
  if (status.source === undefined || !recordedBy({ ...status, source: status.source }, source)) {
    note(
      `Inventory ${where} has this path's former name but ${status.source ? `records repository ${status.source}` : 'records no repository'}, ` +
        `not ${source}: it was not adopted, and its objects are left alone`,
    );
    return undefined;
  }
  note(
    `Adopted inventory ${where} (this path's name before names included the repository): ` +
      `its ${snap.record.entries.length} object(s) now belong to ${kustomization}`,
  );
  return { store: legacy, record: snap.record, kustomization: status.kustomization };
}

/** The origin a path-input Kustomization's inventory records (session.ts originOf). */
const PATH_ORIGIN = /^path: (.+)$/;

/** An inventory a Kustomization takes over: its store, its record, and whose it was (`namespace/name`). */
export interface Adoption {
  store: InventoryStore;
  record: InventoryRecord;
  kustomization: string;
}

/** Whether `path` (relative to `root`) exists in the checkout. */
async function exists(root: string, path: string): Promise<boolean> {
  const full = resolve(root, path);
  // A path that leaves the root is not this checkout's: it counts as present, so nothing is adopted.
  if (!isInside(root, full)) return true;
  return stat(full).then(
    () => true,
    () => false,
  );
}

/**
 * The inventory this path-input Kustomization had before its folder moved, or undefined: exactly one
 * inventory in the store's namespace that records this repository, a path-input Kustomization of
 * the same namespace under another name, a path gone from the checkout, and objects `planned` has.
 * A list refused by RBAC finds none.
 */
export async function findPredecessor(
  client: ClusterClient,
  store: InventoryStore,
  spec: Pick<KustomizationSpec, 'namespace' | 'name'>,
  source: string,
  root: string,
  planned: readonly Entry[],
  note: (line: string) => void,
): Promise<Adoption | undefined> {
  let heads: ConfigMap[];
  try {
    heads = await list<ConfigMap>(
      client,
      { resource: CONFIGMAPS, namespace: store.namespace },
      { query: { labelSelector: `${INVENTORY_LABEL}=true,${KS_NAMESPACE_LABEL}=${spec.namespace}` } },
    );
  } catch (err) {
    if (err instanceof ApiError && err.status === 403) return undefined;
    throw err;
  }
  const ids = new Set(planned.map((e) => e.id));
  const found: (Adoption & { path: string })[] = [];
  for (const other of await listedInventories(client, heads, () => store.namespace)) {
    const { record } = other;
    const { status } = record;
    const path = PATH_ORIGIN.exec(status.origin ?? '')?.[1];
    if (other.kustomization === `${spec.namespace}/${spec.name}`) continue;
    if (status.set !== undefined || path === undefined || status.source === undefined) continue;
    if (!recordedBy({ ...status, source: status.source }, source)) continue;
    if (![...record.entries, ...record.pending].some((e) => ids.has(e.id))) continue;
    if (await exists(root, path)) continue;
    found.push({ ...other, path });
  }
  const [one] = found;
  if (found.length !== 1 || one === undefined) return undefined;
  note(
    `Renamed from Kustomization ${one.kustomization}: its path ${one.path} is gone from this checkout and this ` +
      `build has its objects, so its inventory (${one.record.entries.length} object(s)) is taken over, not pruned`,
  );
  return one;
}
