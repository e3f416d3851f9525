/**
 * One run's session with a Kustomization's inventory and lock (the inventory rule of plan.ts):
 * src/reconcile/ reads and writes inventories only through it (the plan and record phases, the wait
 * on other jobs' Kustomizations, removed Kustomizations).
 */
import type { ClusterClient } from '../cluster/client.js';
import { ApiError } from '../cluster/errors.js';
import { isUnreachable } from '../cluster/failure.js';
import type { KubeObject } from '../objects/kube.js';
import type { Settings } from '../options/settings.js';
import { impersonatedUser } from '../flux/support.js';
import type { KustomizationSpec } from '../flux/types.js';
import { minus, union } from './entries.js';
import { entryOf, type Entry } from '../objects/id.js';
import { failingSince, type InventoryRecord, type InventoryStatus } from './codec.js';
import { ownershipProblem, type Claim } from './identity.js';
import { Lock } from './lock.js';
import { entriesAfter, mergeConcurrent, type RunOutcome } from './plan.js';
import { pendingAfter, unrecorded } from './lease.js';
import { InventoryStore } from './store.js';
import { findPredecessor, legacyAdoption } from './predecessor.js';
import { fluxConflict, fluxConflictNote, fluxImport, neverReconciled } from './flux.js';
import { readFluxKustomization, type FluxLookup } from './flux-object.js';
import { setIdentity } from './removal.js';
import { recordSecretPaths, type SecretPaths } from '../substitute/provenance.js';
import { truncate } from '../util/truncate.js';
import { systemClock, type Clock } from '../util/poll.js';

/** The inventory (and lock) of `spec` on `client`: in inventory-namespace, else the Kustomization's own. */
export function inventoryStore(
  client: ClusterClient,
  settings: Pick<Settings, 'inventoryNamespace'>,
  spec: KustomizationSpec,
): InventoryStore {
  return new InventoryStore(client, settings.inventoryNamespace ?? spec.namespace, spec);
}

/** Takes the lock of the inventory in `store` as this run (waiting as the settings allow). */
export function acquireLock(
  client: ClusterClient,
  store: Pick<InventoryStore, 'namespace' | 'name'>,
  settings: SessionSettings,
  log: (line: string) => void,
): Promise<Lock> {
  return Lock.acquire(client, store.namespace, store.name, {
    holder: settings.run.holder,
    leaseMs: settings.lockLeaseMs,
    waitMs: settings.lockTimeoutMs,
    log,
  });
}

/** Runs `fn`; a 403 on the inventory or its lock becomes an error saying what the credentials need. */
export async function explained<T>(
  store: Pick<InventoryStore, 'namespace' | 'name'>,
  fn: () => Promise<T>,
): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 403)) throw err;
    const ns = store.namespace;
    throw new Error(
      `inventory ${ns}/${store.name}: ${err.message}. The action's credentials need get, create and update ` +
        `on configmaps and coordination.k8s.io leases in namespace ${ns}; or set inventory-namespace to a ` +
        'namespace where they have them',
      { cause: err },
    );
  }
}

/** Where a Kustomization comes from, as its inventory records it: its file, or the path input. */
const originOf = (spec: KustomizationSpec): string =>
  spec.origin.kind === 'file' ? spec.origin.file : `path: ${spec.path}`;

/** What a session needs of the run's settings. */
export type SessionSettings = Pick<
  Settings,
  | 'inventoryNamespace'
  | 'run'
  | 'lockLeaseMs'
  | 'lockTimeoutMs'
  | 'name'
  | 'kustomizations'
  | 'defaultServiceAccount'
  | 'root'
>;

/** A session's Kustomization, where its inventory is, and the run it belongs to. */
export interface SessionOf {
  /** The cluster of the Kustomization's objects and inventory. */
  client: ClusterClient;
  store: InventoryStore;
  settings: SessionSettings;
  spec: KustomizationSpec;
  /** When the run began (the clock's now by default). */
  started?: number;
  /** The inventory under the path's former name, when it may be adopted (legacyStore). */
  legacy?: InventoryStore;
  /** The cluster of Flux's own Kustomization objects: the action's, when the target is remote. */
  management?: ClusterClient;
  clock?: Clock;
}

export const entryOfObject = (o: KubeObject): Entry =>
  entryOf({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, namespace: o.metadata.namespace });

/**
 * One run's dealings with a Kustomization's inventory: lock, read, pending record, final record
 * (the inventory rule of src/inventory/plan.ts), release. Previews only read.
 */
export class InventoryRun {
  /** Confirmed entries when the run started. */
  private base: Entry[] = [];
  /** Pending entries a killed run left behind. */
  private leftover: Entry[] = [];
  private held: Lock | undefined;
  private lastApplied: string | undefined;
  /** The inventory under this path's former name, adopted because it records this repository. */
  private adopted: { store: InventoryStore; kustomization: string } | undefined;
  /** The pending entries as this run recorded them. */
  private recorded: Entry[] = [];
  /** Secret field paths recorded by earlier runs, and those of this run (see substitute/provenance.ts). */
  secretPaths: SecretPaths = new Map();
  private newSecretPaths: SecretPaths = new Map();
  /** The Flux Kustomization of this namespace/name (read from the management cluster), if any. */
  private flux: FluxLookup = {};
  begun = false;
  /** In a preview: the status of the last run the inventory recorded when peek() read it (none when it has none). */
  lastStatus: InventoryStatus | undefined;
  /**
   * The client for this Kustomization's writes (its objects and its inventory): every attempt of
   * every write, retries included, passes the checkpoint of the lock once one is held, so that a
   * run that lost its lock writes nothing more (src/inventory/lease.ts).
   */
  readonly writer: ClusterClient;
  private readonly store: InventoryStore;
  private readonly legacy: InventoryStore | undefined;

  private readonly client: ClusterClient;
  private readonly settings: SessionSettings;
  private readonly spec: KustomizationSpec;
  private readonly started: number;
  private readonly management: ClusterClient;
  private readonly clock: Clock;

  constructor(of: SessionOf) {
    this.client = of.client;
    this.settings = of.settings;
    this.spec = of.spec;
    this.clock = of.clock ?? systemClock;
    this.started = of.started ?? this.clock.now();
    this.management = of.management ?? of.client;
    this.writer = of.client.guarded(this.checkpoint);
    this.store = of.store.using(this.writer);
    this.legacy = of.legacy?.using(this.writer);
  }

  /**
   * Looks for a Flux Kustomization of this namespace/name (src/inventory/flux.ts): one that is not
   * suspended refuses a run that writes (throws), and is a note in a preview.
   */
  private async lookForFlux(writes: boolean, note: (line: string) => void): Promise<void> {
    this.flux = await readFluxKustomization(this.management, this.spec);
    const found = this.flux.object;
    if (found === undefined) return;
    if (found.spec?.suspend !== true && neverReconciled(found, this.clock.now())) {
      note(
        `Flux Kustomization ${this.spec.namespace}/${this.spec.name} exists in the cluster but no controller has ` +
          'reconciled it (no status since it was created): not a second owner; it is left as it is',
      );
    }
    if (writes) {
      const conflict = fluxConflict(found, this.spec.kubeConfig, this.clock.now());
      if (conflict !== undefined) throw new Error(conflict);
    } else {
      const warning = fluxConflictNote(found, this.spec.kubeConfig, this.clock.now());
      if (warning !== undefined) note(warning);
    }
  }

  /** With no inventory of its own, the Flux Kustomization's status.inventory is the previous one. */
  private importFlux(note: (line: string) => void, preview: boolean): InventoryRecord | undefined {
    if (this.flux.forbidden !== undefined) note(this.flux.forbidden);
    if (this.flux.object === undefined) return undefined;
    const imported = fluxImport(this.flux.object, this.spec.kubeConfig, preview);
    note(imported.note);
    if (imported.entries.length === 0) return undefined;
    return { entries: imported.entries, pending: [], status: this.status('InProgress') };
  }

  /** What the run starts from: confirmed ∪ leftover pending entries (prune looks each one up). */
  get old(): Entry[] {
    return union(this.base, this.leftover);
  }

  /** The owner names the adopted inventory's objects may still carry. */
  get formerOwners(): { name: string; namespace: string }[] {
    if (!this.adopted) return [];
    const [namespace = '', name = ''] = this.adopted.kustomization.split('/');
    return [{ name, namespace }];
  }

  /** This run as the inventory records it, and as ownership is judged. */
  private get claim(): Claim {
    return {
      kustomization: `${this.spec.namespace}/${this.spec.name}`,
      source: this.settings.run.source,
      origin: originOf(this.spec),
    };
  }

  /** Refuses (throws) an inventory recorded by another repository, before anything is applied. */
  private checkOwner(record: InventoryRecord | undefined): void {
    const problem = ownershipProblem(record?.status, `${this.store.namespace}/${this.store.name}`, this.claim);
    if (problem !== undefined) throw new Error(problem);
  }

  /**
   * With no inventory under this Kustomization's name yet: the one this path had under its former
   * name, or (apply only: it needs the build) the one of this Kustomization before its folder moved
   * (predecessor.ts); its objects are this one's from here on.
   */
  private async adopt(note: (line: string) => void, planned?: Entry[]): Promise<InventoryRecord | undefined> {
    const { source } = this.settings.run;
    const found =
      (this.legacy && (await legacyAdoption(this.legacy, this.spec, source, this.claim.kustomization, note))) ??
      (planned && this.spec.origin.kind === 'inputs' && this.settings.name === undefined
        ? await findPredecessor(this.client, this.store, this.spec, source, this.settings.root, planned, note)
        : undefined);
    if (found !== undefined) this.adopted = { store: found.store, kustomization: found.kustomization };
    return found?.record;
  }

  /** A preview reads the inventory to show the prune set; no inventory yet is not an error. */
  async peek(note: (line: string) => void): Promise<void> {
    let record: InventoryRecord | undefined;
    await this.lookForFlux(false, note);
    try {
      record = (await this.store.read()).record ?? (await this.adopt(note)) ?? this.importFlux(note, true);
      this.secretPaths = new Map(Object.entries(record?.secretPaths ?? {}));
    } catch (err) {
      if (isUnreachable(err)) throw err;
      note(
        `The inventory ${this.store.namespace}/${this.store.name} could not be read, so the prune preview is empty: ${(err as Error).message}`,
      );
      return;
    }
    this.checkOwner(record);
    this.lastStatus = record?.status;
    this.base = record?.entries ?? [];
    this.leftover = record?.pending ?? [];
  }

  /**
   * Takes the Kustomization's lock (creating the inventory's namespace if needed); then refuses
   * (throws) while a Flux Kustomization of the same name is not suspended.
   */
  async lock(log: (line: string) => void, note: (line: string) => void): Promise<void> {
    await this.explained(async () => {
      if (await this.store.ensureNamespace()) note(`Created namespace ${this.store.namespace} for the inventory`);
      this.held = await acquireLock(this.client, this.store, this.settings, log);
    });
    // Read once the lock is held (it may have been waited for): Flux's state as it is now.
    await this.lookForFlux(true, note);
  }

  /**
   * Under the lock: reads the inventory and records the planned objects as pending. An inventory
   * recorded by another repository is refused here, before anything is written or applied.
   */
  async record(planned: Entry[], note: (line: string) => void, secretPaths: SecretPaths): Promise<void> {
    this.newSecretPaths = secretPaths;
    await this.explained(async () => {
      const snapshot = await this.store.read();
      const current = snapshot.record;
      this.checkOwner(current);
      const adopted =
        current === undefined ? ((await this.adopt(note, planned)) ?? this.importFlux(note, false)) : undefined;
      this.begun = true;
      await this.store.update((latest) => {
        this.checkOwner(latest);
        const from = latest ?? adopted;
        this.base = from?.entries ?? [];
        this.leftover = from?.pending ?? [];
        this.lastApplied = from?.status.lastAppliedRevision;
        this.secretPaths = new Map(Object.entries(from?.secretPaths ?? {}));
        this.recorded = union(this.leftover, minus(planned, this.base));
        return {
          entries: this.base,
          pending: this.recorded,
          status: this.status('InProgress', undefined, from?.status),
          ...recordSecretPaths(from?.secretPaths, this.newSecretPaths, [...this.base, ...this.recorded]),
        };
      }, snapshot);
    });
  }

  private explained(fn: () => Promise<void>): Promise<void> {
    return explained(this.store, fn);
  }

  async end(
    outcome: RunOutcome,
    next: Entry[],
    error: string | undefined,
    note: (line: string) => void,
  ): Promise<void> {
    const ours = entriesAfter(this.base, next, outcome);
    const result = outcome.kind === 'succeeded' && error === undefined ? 'Succeeded' : 'Failed';
    await this.store.update((latest) => {
      const entries = mergeConcurrent(this.base, latest?.entries ?? [], ours);
      // Leftover pending entries stay pending until a successful run settles them (pruned or kept).
      const pending = pendingAfter({
        succeeded: outcome.kind === 'succeeded',
        leftover: this.leftover,
        recorded: this.recorded,
        latest: latest?.pending ?? [],
        confirmed: ours,
      });
      return {
        entries,
        pending,
        status: this.status(result, error, latest?.status),
        ...recordSecretPaths(latest?.secretPaths, this.newSecretPaths, [...entries, ...pending]),
      };
    });
    // Everything the former inventory held is in the new one now (as entries or pending).
    if (this.adopted) {
      const { store } = this.adopted;
      await store.remove();
      note(`Removed the adopted inventory ${store.namespace}/${store.name}`);
      this.adopted = undefined;
    }
  }

  /**
   * A fan-out job's Kustomization that failed before its run recorded an end (a build or plan
   * error) or was skipped for a dependency: under its lock, its inventory's status says Failed with
   * the reason for this commit (entries and pending kept as they are), so that jobs waiting for it
   * skip at once instead of waiting out their timeout, as Flux's Ready condition says False. A
   * finished run's own record for this commit is left as it is.
   */
  async notApplied(message: string, log: (line: string) => void, note: (line: string) => void): Promise<void> {
    const commit = this.settings.run.commit;
    const ended = (r: InventoryRecord | undefined) =>
      r !== undefined && commit !== undefined && r.status.commit === commit && r.status.result !== 'InProgress';
    if (ended((await this.store.read()).record)) return;
    await this.lock(log, note);
    try {
      await this.explained(async () => {
        await this.store.update((latest) => {
          if (ended(latest)) return latest!;
          this.checkOwner(latest);
          this.lastApplied = latest?.status.lastAppliedRevision;
          return {
            entries: latest?.entries ?? [],
            pending: latest?.pending ?? [],
            status: this.status('Failed', message, latest?.status),
            ...(latest?.secretPaths ? { secretPaths: latest.secretPaths } : {}),
          };
        });
      });
    } finally {
      await this.release();
    }
  }

  /** The checkpoint before each write: rejects (LockLost) once the lock is not this run's any more. */
  readonly checkpoint = async (): Promise<void> => {
    await this.held?.assertHeld();
  };

  /** Why the lock was lost while this run held it, if it was. */
  get lost(): string | undefined {
    return this.held?.lostReason;
  }

  /**
   * A run that lost its lock records nothing (the inventory is the new holder's): of the objects it
   * wrote that still exist, those the new holder's record does not hold (a write already on its way
   * when the lock was taken over), for its report. Reads only.
   */
  async unrecorded(stillThere: Entry[]): Promise<Entry[]> {
    return unrecorded((await this.store.read()).record, stillThere);
  }

  /** The status this run writes; `previous`, the one it replaces, gives failingSince. */
  private status(result: InventoryStatus['result'], message?: string, previous?: InventoryStatus): InventoryStatus {
    const { run } = this.settings;
    const now = this.clock.now();
    const since = failingSince(previous, result, new Date(now).toISOString());
    const applied = result === 'Succeeded' ? run.revision : this.lastApplied;
    return {
      kustomization: `${this.spec.namespace}/${this.spec.name}`,
      source: run.source,
      ...(this.settings.kustomizations.length > 0
        ? { set: setIdentity(run.source, this.settings.kustomizations) }
        : {}),
      origin: originOf(this.spec),
      result,
      // The whole message (bounded), details included, as Flux's Ready condition keeps it.
      ...(message ? { message: truncate(message) } : {}),
      ...(run.revision ? { lastAttemptedRevision: run.revision } : {}),
      ...(applied ? { lastAppliedRevision: applied } : {}),
      ...(run.commit ? { commit: run.commit } : {}),
      ...(result === 'Succeeded' && run.originRevision ? { lastAppliedOriginRevision: run.originRevision } : {}),
      ...(run.sourceRef ? { sourceRef: run.sourceRef } : {}),
      startedAt: new Date(this.started).toISOString(),
      ...(result !== 'InProgress' ? { finishedAt: new Date(now).toISOString(), durationMs: now - this.started } : {}),
      ...(since !== undefined ? { failingSince: since } : {}),
      ...(run.url ? { runUrl: run.url } : {}),
      prune: this.spec.prune,
      ...(impersonatedUser(this.spec, this.settings)
        ? { impersonate: impersonatedUser(this.spec, this.settings) }
        : {}),
      deletionPolicy: this.spec.deletionPolicy,
      timeoutMs: this.spec.timeout,
    };
  }

  async release(): Promise<void> {
    // A cluster that cannot be reached keeps the lease until it expires; the run's error says why.
    await this.held?.release().catch((err: unknown) => {
      if (!isUnreachable(err)) throw err;
    });
  }
}
