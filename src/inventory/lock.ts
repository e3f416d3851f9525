/**
 * A Lease per Kustomization, so that two runs never reconcile the same Kustomization at once: taken
 * before anything is applied, renewed while the run works, released at the end. A second run waits;
 * a lease not renewed within its duration (a cancelled job) is taken over.
 */
import type { ClusterClient } from '../cluster/client.js';
import { ApiError, isNotFound } from '../cluster/errors.js';
import { formatDuration } from '../kstatus/wait.js';

interface Lease {
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec?: {
    holderIdentity?: string | null;
    leaseDurationSeconds?: number;
    acquireTime?: string | null;
    renewTime?: string | null;
    leaseTransitions?: number;
  };
}

export interface LockOptions {
  /** Who holds it: the run's description (run URL, job), shown to a run that has to wait. */
  holder: string;
  /** How long the lease lasts without renewal; renewed every third of it. */
  leaseMs: number;
  /** How long to wait for another holder before failing. */
  waitMs: number;
  log?: (line: string) => void;
  now?: () => number;
}

/** Kubernetes MicroTime: RFC 3339 with microseconds. */
const microTime = (ms: number) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

/** Whether a lease is free to take at `now`: nobody holds it, or its holder stopped renewing it. */
export function leaseFree(spec: Lease['spec'], now: number): boolean {
  if (!spec?.holderIdentity) return true;
  const renewed = Date.parse(spec.renewTime ?? spec.acquireTime ?? '');
  const duration = (spec.leaseDurationSeconds ?? 0) * 1000;
  return !Number.isFinite(renewed) || renewed + duration < now;
}

export class Lock {
  private timer: NodeJS.Timeout | undefined;
  private lost: string | undefined;
  private renewing: Promise<void> | undefined;

  private constructor(
    private readonly client: ClusterClient,
    private readonly path: string,
    private lease: Lease,
    private readonly opts: LockOptions,
  ) {}

  /** Takes the lease `name` in `namespace`, waiting for another holder up to `opts.waitMs`. */
  static async acquire(client: ClusterClient, namespace: string, name: string, opts: LockOptions): Promise<Lock> {
    const now = opts.now ?? Date.now;
    const collection = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`;
    const path = `${collection}/${encodeURIComponent(name)}`;
    const deadline = now() + opts.waitMs;
    let waitingFor: string | undefined;
    for (;;) {
      let current: Lease | undefined;
      try {
        current = await client.request<Lease>('GET', path);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      const t = now();
      const spec = {
        holderIdentity: opts.holder,
        leaseDurationSeconds: Math.max(1, Math.round(opts.leaseMs / 1000)),
        acquireTime: microTime(t),
        renewTime: microTime(t),
        leaseTransitions: (current?.spec?.leaseTransitions ?? 0) + (current?.spec?.holderIdentity ? 1 : 0),
      };
      if (!current || leaseFree(current.spec, t)) {
        if (current?.spec?.holderIdentity) {
          opts.log?.(`Taking over the expired lock ${namespace}/${name} from ${current.spec.holderIdentity}`);
        }
        try {
          const lease = current
            ? await client.request<Lease>('PUT', path, { body: { ...current, spec } })
            : await client.request<Lease>('POST', collection, {
                body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace }, spec },
              });
          const lock = new Lock(client, path, lease, opts);
          lock.startRenewing();
          return lock;
        } catch (err) {
          // Someone else took it in between: look again.
          if (!(err instanceof ApiError && err.status === 409)) throw err;
          continue;
        }
      }
      const holder = current.spec?.holderIdentity ?? '';
      if (t >= deadline) {
        throw new Error(
          `another run holds the lock ${namespace}/${name}: ${holder} (last renewed ${current.spec?.renewTime ?? 'never'}); ` +
            `gave up after waiting ${formatDuration(opts.waitMs)} (input lock-timeout)`,
        );
      }
      if (waitingFor !== holder) {
        waitingFor = holder;
        opts.log?.(`Waiting for the lock ${namespace}/${name}, held by ${holder}`);
      }
      await new Promise((r) => setTimeout(r, Math.min(1000, Math.max(50, deadline - t))));
    }
  }

  private startRenewing(): void {
    const every = Math.max(200, Math.floor(this.opts.leaseMs / 3));
    this.timer = setInterval(() => {
      this.renewing = this.renew();
    }, every);
    this.timer.unref();
  }

  private async renew(): Promise<void> {
    if (this.lost) return;
    const now = (this.opts.now ?? Date.now)();
    try {
      this.lease = await this.client.request<Lease>('PUT', this.path, {
        body: { ...this.lease, spec: { ...this.lease.spec, renewTime: microTime(now) } },
      });
    } catch (err) {
      if (err instanceof ApiError && (err.status === 409 || err.status === 404)) {
        this.lost = `the lock was taken by another run (${err.message})`;
        this.opts.log?.(`Warning: ${this.lost}`);
      }
      // Other errors: the next renewal tries again while the lease lasts.
    }
  }

  /** Why the lock was lost while the run held it, or undefined. */
  get lostReason(): string | undefined {
    return this.lost;
  }

  /** Releases the lease and deletes it, for a Kustomization that is gone. */
  async remove(): Promise<void> {
    await this.release();
    await this.client.request('DELETE', this.path).catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
  }

  /** Stops renewing and frees the lease (only if it is still ours). */
  async release(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.renewing;
    if (this.lost) return;
    try {
      await this.client.request('PUT', this.path, {
        body: { ...this.lease, spec: { ...this.lease.spec, holderIdentity: null, renewTime: null, acquireTime: null } },
      });
    } catch (err) {
      if (!(err instanceof ApiError && (err.status === 409 || err.status === 404))) throw err;
    }
  }
}
