import type { ClusterClient } from './client.js';
import type { Discovery } from './discovery.js';

/**
 * One cluster as a resource manager (ssa/manager.ts) holds it, and as the code behind its methods
 * reads it (ssa/apply.ts, ssa/write.ts, ssa/delete.ts, kstatus/wait.ts, cluster/contents.ts): here,
 * so that kstatus/ and cluster/ need not import ssa/.
 */
export interface ManagedCluster {
  /** Every request goes through it (impersonating an account, or guarded by a lock, as the run says). */
  readonly client: ClusterClient;
  /** That cluster's discovery. */
  readonly discovery: Discovery;
  /** The field manager of every server-side apply and of the managed-fields cleanup. */
  readonly fieldManager: string;
  /** Requests of one step in flight at once: dry-runs, writes of one kind, health reads. */
  readonly concurrency: number;
  /** Where the progress lines go: one per object applied, deleted, or whose status changed. */
  readonly log: (line: string) => void;
}
