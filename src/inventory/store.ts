/**
 * The inventory in the target cluster: a head ConfigMap per Kustomization (plus numbered part
 * ConfigMaps when the compressed entries outgrow one), updated read-modify-write with the head's
 * resourceVersion as precondition. A conflict means someone else wrote in between: the update is
 * computed again from what they wrote, never written over it.
 */
import type { ClusterClient } from '../cluster/client.js';
import { ApiError, isNotFound } from '../cluster/errors.js';
import {
  CONFIGMAPS,
  create,
  get,
  list,
  NAMESPACES,
  remove,
  replace,
  type Collection,
  type Ref,
} from '../cluster/verbs.js';
import {
  decodeInventory,
  DEFAULT_LIMITS,
  encodeInventory,
  partCount,
  type CodecLimits,
  type InventoryRecord,
} from './codec.js';
import { labelValue } from '../objects/names.js';
import { RESERVED_KEY_PREFIX, RESERVED_NAME_PREFIX } from './reserved.js';

export type ConfigMap = {
  metadata: { name: string; namespace: string; resourceVersion?: string; labels?: Record<string, string> };
  data?: Record<string, string>;
  binaryData?: Record<string, string>;
};

export const INVENTORY_LABEL = `${RESERVED_KEY_PREFIX}inventory`;
export const KS_NAME_LABEL = `${RESERVED_KEY_PREFIX}name`;
export const KS_NAMESPACE_LABEL = `${RESERVED_KEY_PREFIX}namespace`;
const MANAGED_BY = { 'app.kubernetes.io/managed-by': 'kustomize-reconcile' };

/** The head ConfigMap's (and the Lease's) name: stable per Kustomization, readable, a valid DNS subdomain. */
export function inventoryName(ks: { name: string; namespace: string }): string {
  return `${RESERVED_NAME_PREFIX}${ks.namespace}.${ks.name}`;
}

const partName = (head: string, generation: number, i: number) => `${head}.g${generation}-${i}`;

export interface Snapshot {
  record?: InventoryRecord;
  /** The head's resourceVersion; undefined when there is no inventory yet. */
  resourceVersion?: string;
  generation: number;
}

export class InventoryStore {
  readonly name: string;
  /** The inventory namespace's ConfigMaps. */
  private readonly configMaps: Collection;

  constructor(
    private readonly client: ClusterClient,
    readonly namespace: string,
    private readonly ks: { name: string; namespace: string },
    private readonly limits: CodecLimits = DEFAULT_LIMITS,
  ) {
    this.name = inventoryName(ks);
    this.configMaps = { resource: CONFIGMAPS, namespace };
  }

  /**
   * The same inventory through `client`: a Kustomization's run reads and writes it through a client
   * whose every write attempt passes its lock's checkpoint (ClusterClient.guarded), so that an
   * update, its retries on conflict and the retries of each request included, writes nothing once
   * the lock is lost.
   */
  using(client: ClusterClient): InventoryStore {
    return new InventoryStore(client, this.namespace, this.ks, this.limits);
  }

  private configMap(name: string): Ref {
    return { ...this.configMaps, name };
  }

  /** Reads the inventory; no inventory (or no namespace) is an empty snapshot, not an error. */
  async read(): Promise<Snapshot> {
    let head: ConfigMap;
    try {
      head = await get<ConfigMap>(this.client, this.configMap(this.name));
    } catch (err) {
      if (isNotFound(err)) return { generation: 0 };
      throw err;
    }
    return this.fromHead(head);
  }

  /** The inventory a head ConfigMap (from a GET or a list) describes, its parts read as needed. */
  async fromHead(head: ConfigMap): Promise<Snapshot> {
    const data = head.data ?? {};
    const generation = Number(data['generation'] ?? '0') || 0;
    const parts: string[] = [];
    for (let i = 0; i < partCount(data); i++) {
      const part = await get<ConfigMap>(this.client, this.configMap(partName(this.name, generation, i)));
      parts.push(part.binaryData?.['chunk'] ?? '');
    }
    try {
      const record = decodeInventory(data, head.binaryData ?? {}, parts);
      return {
        record,
        generation,
        ...(head.metadata.resourceVersion ? { resourceVersion: head.metadata.resourceVersion } : {}),
      };
    } catch (err) {
      throw new Error(`inventory ConfigMap ${this.namespace}/${this.name} is unreadable: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }

  /**
   * Read-modify-write: `change` gets the latest record (undefined when there is none) and returns the
   * new one. On a conflict the latest is read again and `change` runs again, up to five times. Each
   * write is checked by the client's guards (see using), the first try and every retry.
   */
  async update(
    change: (latest: InventoryRecord | undefined) => InventoryRecord,
    /** A snapshot the caller has just read: the first attempt starts from it instead of reading again. */
    first?: Snapshot,
  ): Promise<InventoryRecord> {
    for (let attempt = 1; ; attempt++) {
      const snap = attempt === 1 && first ? first : await this.read();
      const next = change(snap.record);
      try {
        await this.write(next, snap);
        return next;
      } catch (err) {
        const conflict = err instanceof ApiError && (err.status === 409 || err.reason === 'Conflict');
        if (!conflict || attempt >= 5) throw err;
      }
    }
  }

  private labels(): Record<string, string> {
    return {
      ...MANAGED_BY,
      [INVENTORY_LABEL]: 'true',
      [KS_NAME_LABEL]: labelValue(this.ks.name),
      [KS_NAMESPACE_LABEL]: this.ks.namespace,
    };
  }

  private async write(record: InventoryRecord, snap: Snapshot): Promise<void> {
    const encoded = encodeInventory(record, this.limits);
    const generation = snap.generation + 1;
    // Parts of the new generation first: the head switches to them in one write, so a reader never
    // sees a head pointing at parts that are not there yet.
    for (const [i, chunk] of encoded.parts.entries()) {
      const name = partName(this.name, generation, i);
      const body = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name,
          namespace: this.namespace,
          labels: { ...MANAGED_BY, [`${INVENTORY_LABEL}-part`]: labelValue(this.name) },
        },
        binaryData: { chunk },
      };
      try {
        await create(this.client, this.configMaps, body);
      } catch (err) {
        if (!(err instanceof ApiError && err.status === 409)) throw err;
        await replace(this.client, this.configMap(name), body);
      }
    }
    const head = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: this.name,
        namespace: this.namespace,
        labels: this.labels(),
        ...(snap.resourceVersion ? { resourceVersion: snap.resourceVersion } : {}),
      },
      data: { ...encoded.data, generation: String(generation) },
      ...(Object.keys(encoded.binaryData).length > 0 ? { binaryData: encoded.binaryData } : {}),
    };
    if (snap.resourceVersion) await replace(this.client, this.configMap(this.name), head);
    else await create(this.client, this.configMaps, head);
    // The previous generation's parts are garbage now; a leftover is harmless and removed next time.
    await this.deleteParts((name) => !name.startsWith(`${this.name}.g${generation}-`));
  }

  private async deleteParts(which: (name: string) => boolean): Promise<void> {
    const items = await list<ConfigMap>(this.client, this.configMaps, {
      query: { labelSelector: `${INVENTORY_LABEL}-part=${labelValue(this.name)}` },
    });
    for (const cm of items.filter((c) => which(c.metadata.name))) {
      await remove(this.client, this.configMap(cm.metadata.name)).catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
    }
  }

  /** Removes the inventory (head and parts), for a Kustomization that is gone. */
  async remove(): Promise<void> {
    await remove(this.client, this.configMap(this.name)).catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
    await this.deleteParts(() => true);
  }

  /** Creates the inventory namespace when it is missing; true when it did. */
  async ensureNamespace(): Promise<boolean> {
    try {
      await get(this.client, { resource: NAMESPACES, name: this.namespace });
      return false;
    } catch (err) {
      // Credentials limited to a namespace may not read Namespaces: the inventory writes will tell.
      if (err instanceof ApiError && err.status === 403) return false;
      if (!isNotFound(err)) throw err;
    }
    try {
      await create(
        this.client,
        { resource: NAMESPACES },
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: this.namespace, labels: MANAGED_BY } },
      );
      return true;
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) return false;
      throw err;
    }
  }
}

/** An inventory a list of heads holds: whose it is (`namespace/name`), its store and its record. */
export interface ListedInventory {
  kustomization: string;
  store: InventoryStore;
  record: InventoryRecord;
}

/**
 * The inventories `heads` (ConfigMaps labelled as inventory heads) hold, each only where this tool
 * would have written it: in `where(namespace)` (the inventory namespace, or else the Kustomization's
 * own) and under the name its store gives it. A ConfigMap elsewhere claiming to be an inventory is
 * ignored, and so is a head without a record.
 */
export async function listedInventories(
  client: ClusterClient,
  heads: readonly ConfigMap[],
  where: (kustomizationNamespace: string) => string,
): Promise<ListedInventory[]> {
  const found: ListedInventory[] = [];
  for (const head of heads) {
    const name = head.metadata.labels?.[KS_NAME_LABEL];
    const namespace = head.metadata.labels?.[KS_NAMESPACE_LABEL];
    if (!name || !namespace || head.metadata.namespace !== where(namespace)) continue;
    const store = new InventoryStore(client, head.metadata.namespace, { name, namespace });
    if (store.name !== head.metadata.name) continue;
    const { record } = await store.fromHead(head);
    if (record) found.push({ kustomization: `${namespace}/${name}`, store, record });
  }
  return found;
}
