/**
 * A Lease per Kustomization, so that two runs never reconcile the same Kustomization at once: taken
 * before anything is applied, renewed while the run works, released at the end. A second run waits;
 * a lease not renewed within its duration (a cancelled job) is taken over. The holder checks its
 * lease before each write (assertHeld) and stops once another run took it over or it could not be
 * renewed before it ran out (see src/inventory/lease.ts).
 */
import type { ClusterClient } from '../cluster/client.js';
import { ApiError, isNotFound } from '../cluster/errors.js';
import { create, get, LEASES, remove, replace, type Ref } from '../cluster/verbs.js';
import { sleep } from '../util/poll.js';
import { formatDuration } from '../kstatus/wait.js';
import { afterRenewal, leaseCheck, type RenewalOutcome } from './lease.js';

interface Lease {
  metadata: { name: string; namespace: string; resourceVersion?: string; annotations?: Record<string, string> };
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
  /** Wall clock, for the lease's times. */
  now?: () => number;
  /** Monotonic clock, for judging the lease's expiry by this run's own time (default performance.now). */
  monotonic?: () => number;
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

/** The lock was lost while the run held it: the run must stop writing. */
export class LockLost extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LockLost';
  }
}

/** Kept on a released lease: who held it last, so that a run that lost it can name who took it. */
export const LAST_HOLDER_ANNOTATION = 'kustomize-reconcile/last-holder';

export class Lock {
  private timer: NodeJS.Timeout | undefined;
  private lost: string | undefined;
  private renewing: Promise<void> | undefined;
  /** Monotonic time at which the last successful renewal (or the acquisition) was sent. */
  private renewedAt: number;

  private constructor(
    private readonly client: ClusterClient,
    private readonly ref: Ref,
    private readonly label: string,
    private lease: Lease,
    private readonly opts: LockOptions,
    sentAt: number,
  ) {
    this.renewedAt = sentAt;
  }

  private get monotonic(): () => number {
    return this.opts.monotonic ?? (() => performance.now());
  }

  private get durationMs(): number {
    return (this.lease.spec?.leaseDurationSeconds ?? Math.max(1, Math.round(this.opts.leaseMs / 1000))) * 1000;
  }

  /** Takes the lease `name` in `namespace`, waiting for another holder up to `opts.waitMs`. */
  static async acquire(client: ClusterClient, namespace: string, name: string, opts: LockOptions): Promise<Lock> {
    const now = opts.now ?? Date.now;
    const ref: Ref = { resource: LEASES, namespace, name };
    const deadline = now() + opts.waitMs;
    let waitingFor: string | undefined;
    for (;;) {
      let current: Lease | undefined;
      try {
        current = await get<Lease>(client, ref);
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
          const sentAt = (opts.monotonic ?? (() => performance.now()))();
          const lease = current
            ? await replace<Lease>(client, ref, { ...current, spec })
            : await create<Lease>(client, ref, {
                apiVersion: 'coordination.k8s.io/v1',
                kind: 'Lease',
                metadata: { name, namespace },
                spec,
              });
          const lock = new Lock(client, ref, `${namespace}/${name}`, lease, opts, sentAt);
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
      await sleep(Math.min(1000, Math.max(50, deadline - t)));
    }
  }

  private startRenewing(): void {
    const every = Math.max(200, Math.floor(this.opts.leaseMs / 3));
    this.timer = setInterval(() => {
      void this.renew();
    }, every);
    this.timer.unref();
  }

  /** One renewal at a time: the timer's and a checkpoint's share it. */
  private renew(): Promise<void> {
    this.renewing ??= this.renewOnce().finally(() => {
      this.renewing = undefined;
    });
    return this.renewing;
  }

  private async renewOnce(): Promise<void> {
    if (this.lost) return;
    const sentAt = this.monotonic();
    const now = (this.opts.now ?? Date.now)();
    const renewTime = microTime(now);
    let outcome: RenewalOutcome;
    try {
      this.lease = await replace<Lease>(this.client, this.ref, {
        ...this.lease,
        spec: { ...this.lease.spec, renewTime },
      });
      this.renewedAt = sentAt;
      outcome = { kind: 'renewed' };
    } catch (err) {
      outcome =
        err instanceof ApiError && (err.status === 409 || err.status === 404)
          ? await this.takenBy(err.status === 404, renewTime, sentAt)
          : { kind: 'failed', message: err instanceof Error ? err.message : String(err) };
    }
    const verdict = afterRenewal(outcome, {
      sinceRenewedMs: this.monotonic() - this.renewedAt,
      durationMs: this.durationMs,
    });
    if (verdict.kind === 'lost' && !this.lost) {
      this.lost = `lost the lock ${this.label}: ${verdict.reason}`;
      this.opts.log?.(`Warning: ${this.lost}`);
    }
  }

  /**
   * Who has the lease now that our renewal was refused. Still this run, acquired at the same time,
   * when an earlier try of the same renewal did reach the server (its answer was lost and the
   * request retried): then the lease is ours, renewed when it carries the renewTime sent.
   */
  private async takenBy(gone: boolean, renewTime: string, sentAt: number): Promise<RenewalOutcome> {
    if (gone) return { kind: 'taken', gone: true };
    try {
      const now = await get<Lease>(this.client, this.ref);
      if (now.spec?.holderIdentity === this.opts.holder && now.spec.acquireTime === this.lease.spec?.acquireTime) {
        this.lease = now;
        if (now.spec.renewTime === renewTime) this.renewedAt = sentAt;
        return { kind: 'renewed' };
      }
      const holder = now.spec?.holderIdentity ?? undefined;
      const last = now.metadata.annotations?.[LAST_HOLDER_ANNOTATION];
      return { kind: 'taken', ...(holder ? { holder } : last ? { lastHolder: last } : {}) };
    } catch (err) {
      return isNotFound(err) ? { kind: 'taken', gone: true } : { kind: 'taken' };
    }
  }

  /**
   * The checkpoint before every write: resolves while the lease is surely this run's (renewing it
   * first when a renewal is overdue, as after a stall), throws LockLost once it is not.
   */
  async assertHeld(): Promise<void> {
    const state = () => ({
      ...(this.lost !== undefined ? { lost: this.lost } : {}),
      sinceRenewedMs: this.monotonic() - this.renewedAt,
      durationMs: this.durationMs,
    });
    if (leaseCheck(state()).kind === 'renew') await this.renew();
    // After a renewal attempt: lost when it said so, or when the lease ran out meanwhile.
    const verdict = leaseCheck(state());
    if (verdict.kind === 'lost') throw new LockLost(verdict.reason);
    if (verdict.kind === 'renew' && state().sinceRenewedMs >= this.durationMs) {
      this.lost ??= `lost the lock ${this.label}: it could not be renewed before it ran out`;
      throw new LockLost(this.lost);
    }
  }

  /** Why the lock was lost while the run held it, or undefined. */
  get lostReason(): string | undefined {
    return this.lost;
  }

  /** Releases the lease and deletes it, for a Kustomization that is gone (only if it is still ours). */
  async remove(): Promise<void> {
    const released = await this.release();
    if (!released) return;
    await remove(this.client, this.ref, {
      apiVersion: 'v1',
      kind: 'DeleteOptions',
      preconditions: { resourceVersion: released.metadata.resourceVersion },
    }).catch((err: unknown) => {
      if (!(isNotFound(err) || (err instanceof ApiError && err.status === 409))) throw err;
    });
  }

  /**
   * Stops renewing and frees the lease (only if it is still ours), naming this run as its last
   * holder. Returns the released lease, or undefined when it was not ours any more.
   */
  async release(): Promise<Lease | undefined> {
    if (this.timer) clearInterval(this.timer);
    await this.renewing;
    if (this.lost) return undefined;
    const { metadata, spec } = this.lease;
    const annotations = {
      ...metadata.annotations,
      [LAST_HOLDER_ANNOTATION]: this.opts.holder,
    };
    try {
      return await replace<Lease>(this.client, this.ref, {
        ...this.lease,
        metadata: { ...metadata, annotations },
        spec: { ...spec, holderIdentity: null, renewTime: null, acquireTime: null },
      });
    } catch (err) {
      if (!(err instanceof ApiError && (err.status === 409 || err.status === 404))) throw err;
      return undefined;
    }
  }
}
