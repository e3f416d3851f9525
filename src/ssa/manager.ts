/**
 * The resource manager: one cluster's client and discovery, the field manager, the concurrency and
 * the run's progress lines, held once, with the run's I/O on objects as its methods (as fluxcd/pkg's
 * ssa.ResourceManager). What each method does is in the module it calls: the staged apply in
 * apply.ts, the prune in delete.ts, the health wait in kstatus/wait.ts, the Namespace lists in
 * cluster/contents.ts; the decisions they make (plans, policies, kstatus rules, prune guards) stay
 * pure functions there. A run's context holds one (reconcile/context.ts); `with` gives the same
 * manager over another client (impersonating the Kustomization's account, guarded by its lock, or of
 * a remote cluster) or with other lines.
 */
import type { ClusterClient } from '../cluster/client.js';
import type { Discovery } from '../cluster/discovery.js';
import type { ManagedCluster } from '../cluster/managed.js';
import { namespaceContents, type NamespaceContents } from '../cluster/contents.js';
import { isNotFound } from '../cluster/errors.js';
import { get } from '../cluster/verbs.js';
import { refOf, type Entry } from '../objects/id.js';
import type { KubeObject } from '../objects/kube.js';
import { waitForHealth, type HealthTarget, type WaitOptions, type WaitOutcome } from '../kstatus/wait.js';
import { applyAll, type ApplyOptions } from './apply.js';
import type { ChangeSetEntry } from './changeset.js';
import { deleteStale, waitForTermination, type DeleteOptions, type PruneResult } from './delete.js';

/** What a manager is made with besides its cluster. */
export interface ManagerOptions {
  fieldManager: string;
  concurrency: number;
  log: (line: string) => void;
}

export class ResourceManager implements ManagedCluster {
  readonly fieldManager: string;
  readonly concurrency: number;
  readonly log: (line: string) => void;

  constructor(
    readonly client: ClusterClient,
    readonly discovery: Discovery,
    options: ManagerOptions,
  ) {
    this.fieldManager = options.fieldManager;
    this.concurrency = options.concurrency;
    this.log = options.log;
  }

  /**
   * The same manager with `change` (another client of the same cluster keeps the discovery; a
   * client of another cluster comes with its own).
   */
  with(change: Partial<Pick<ManagedCluster, 'client' | 'discovery' | 'log'>>): ResourceManager {
    return new ResourceManager(change.client ?? this.client, change.discovery ?? this.discovery, {
      fieldManager: this.fieldManager,
      concurrency: this.concurrency,
      log: change.log ?? this.log,
    });
  }

  /** The same manager acting as `user` (impersonated by name alone), or itself without one. */
  actingAs(user: string | undefined): ResourceManager {
    return user === undefined ? this : this.with({ client: this.client.impersonating(user) });
  }

  /** Staged server-side apply (apply.ts applyAll); in a preview, dry-runs only. Throws ApplyError. */
  apply(objects: readonly KubeObject[], opts: ApplyOptions): Promise<ChangeSetEntry[]> {
    return applyAll(this, objects, opts);
  }

  /** Deletes stale objects, in the order given (delete.ts deleteStale). Throws PruneStopped. */
  delete(stale: readonly Entry[], opts: DeleteOptions): Promise<PruneResult[]> {
    return deleteStale(this, stale, opts);
  }

  /** Waits for the targets' health, kstatus rules and healthCheckExprs (kstatus/wait.ts). */
  wait(targets: readonly HealthTarget[], opts: WaitOptions): Promise<WaitOutcome> {
    return waitForHealth(this, targets, opts);
  }

  /** Waits (every 2s) until the objects are gone; the subjects still there at the timeout. */
  waitGone(entries: readonly Entry[], timeoutMs: number): Promise<string[]> {
    return waitForTermination(this, entries, timeoutMs);
  }

  /** What lives in each of `namespaces`, by metadata-only lists (cluster/contents.ts). */
  namespaceContents(namespaces: readonly string[], note: (line: string) => void): Promise<NamespaceContents[]> {
    return namespaceContents(this, namespaces, note);
  }

  /**
   * Which of `entries` exist in the cluster now (an entry whose kind is not served does not; one
   * whose read fails otherwise is kept: not known to be gone, a later run looks it up again).
   */
  async existing(entries: readonly Entry[]): Promise<Entry[]> {
    const found: Entry[] = [];
    for (const entry of entries) {
      const ref = refOf(entry);
      const resource = await this.discovery.mapping(ref.apiVersion, ref.kind).catch(() => undefined);
      if (resource === undefined) continue;
      try {
        await get(this.client, { resource, namespace: ref.namespace, name: ref.name });
        found.push(entry);
      } catch (err) {
        if (!isNotFound(err)) found.push(entry);
      }
    }
    return found;
  }
}
