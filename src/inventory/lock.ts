/**
 * A Lease per Kustomization, so that two runs never reconcile the same Kustomization at once: taken
 * before anything is applied, renewed while the run works, released at the end. A second run waits;
 * a lease not renewed within its duration (a cancelled job) is taken over; a Lease whose claim no run
 * of this tool would write is bounded or refused at once (judgeClaim in src/inventory/lease.ts). The
 * holder checks its lease before each write (assertHeld; a Kustomization's client calls it before
 * every attempt of every write, see ClusterClient.guarded) and stops once another run took it over
 * or it could not be renewed before it ran out (see src/inventory/lease.ts).
 */
import type { ClusterClient } from '../cluster/client.js';
import { ApiError, isNotFound } from '../cluster/errors.js';
import { create, get, LEASES, remove, replace, type Ref } from '../cluster/verbs.js';
import { sleep } from '../util/poll.js';
import { formatDuration } from '../util/duration.js';
import { truncate } from '../util/truncate.js';
import { onSignalCleanup } from '../util/lifecycle.js';
import { RESERVED_KEY_PREFIX } from './reserved.js';
import {
  afterRenewal,
  claimBounds,
  judgeClaim,
  leaseCheck,
  leaseSeconds,
  LOCK_LABELS,
  markedOurs,
  type LeaseSpec,
  type RenewalOutcome,
} from './lease.js';

export { leaseFree } from './lease.js';

interface Lease {
  metadata: {
    name: string;
    namespace: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec?: LeaseSpec;
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

/** A holder as a message quotes it: one line, bounded (it is whatever the Lease says). */
const quoted = (holder: string) => JSON.stringify(truncate(holder, { chars: 200, lines: 1 }));

/** LOCK_LABELS as a selector reads. */
const labelText = () =>
  Object.entries(LOCK_LABELS)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');

/** The command that deletes a Lease, for a message. */
const deleteCommand = (namespace: string, name: string) => `kubectl delete lease --namespace ${namespace} ${name}`;

/** The lock was lost while the run held it: the run must stop writing. */
export class LockLost extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LockLost';
  }
}

/** Kept on a released lease: who held it last, so that a run that lost it can name who took it. */
export const LAST_HOLDER_ANNOTATION = `${RESERVED_KEY_PREFIX}last-holder`;

export class Lock {
  private timer: NodeJS.Timeout | undefined;
  private lost: string | undefined;
  /** Released (or removed): every later checkpoint refuses. */
  private released = false;
  private renewing: Promise<void> | undefined;
  /** Monotonic time at which the last successful renewal (or the acquisition) was sent. */
  private renewedAt: number;
  /** Removes the release that a signal ending the process runs (util/lifecycle.ts). */
  private readonly forgetOnSignal: () => void;

  private constructor(
    private readonly client: ClusterClient,
    private readonly ref: Ref,
    private readonly label: string,
    private lease: Lease,
    private readonly opts: LockOptions,
    sentAt: number,
  ) {
    this.renewedAt = sentAt;
    // A cancelled run (SIGINT, SIGTERM, SIGHUP) frees its lease before it ends, so that the next run
    // does not wait for it to run out.
    this.forgetOnSignal = onSignalCleanup(() => this.release());
  }

  private get monotonic(): () => number {
    return this.opts.monotonic ?? (() => performance.now());
  }

  private get durationMs(): number {
    return (this.lease.spec?.leaseDurationSeconds ?? leaseSeconds(this.opts.leaseMs)) * 1000;
  }

  /**
   * Takes the lease `name` in `namespace`, waiting for another holder up to `opts.waitMs`; refuses
   * (throws) at once a Lease whose claim it cannot trust (judgeClaim in src/inventory/lease.ts).
   */
  static async acquire(client: ClusterClient, namespace: string, name: string, opts: LockOptions): Promise<Lock> {
    // The lock's own requests are never guarded: they are what the guard asks.
    const raw = client.unguarded();
    const now = opts.now ?? Date.now;
    const ref: Ref = { resource: LEASES, namespace, name };
    const label = `${namespace}/${name}`;
    const bounds = claimBounds(opts.leaseMs);
    const deadline = now() + opts.waitMs;
    let waitingFor: string | undefined;
    /** The Lease as last seen (its resourceVersion) and when this run first saw it so. */
    let seen: { version: string; at: number } | undefined;
    for (;;) {
      let current: Lease | undefined;
      try {
        current = await get<Lease>(raw, ref);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      const t = now();
      const version = current?.metadata.resourceVersion ?? JSON.stringify(current?.spec ?? null);
      const fresh = seen?.version !== version;
      if (fresh) seen = { version, at: t };
      const holder = current?.spec?.holderIdentity ?? '';
      const verdict = judgeClaim(current?.spec, markedOurs(current?.metadata.labels, holder), t, seen?.at ?? t, bounds);
      if (verdict.kind === 'untrusted') {
        throw new Error(
          `the lock ${label} is a Lease this run does not trust, held by ${quoted(holder)}: ${verdict.absurd.join('; ')}, ` +
            `and it is not marked as a lock of kustomize-reconcile (label ${labelText()}) nor held by a run of it ` +
            `(a workflow run URL, or "host pid N"). It was neither waited for nor taken over. ` +
            `If it is not a run of kustomize-reconcile, delete it: ${deleteCommand(namespace, name)}`,
        );
      }
      if (verdict.absurd && fresh) {
        const capped = `its duration capped at ${bounds.maxDurationMs / 1000}s, its renewTime at most ${bounds.maxAheadMs / 1000}s after this run first saw it`;
        opts.log?.(
          `Warning: the lock ${label}, held by ${quoted(holder)}, claims more than a run of kustomize-reconcile ever does: ` +
            `${verdict.absurd.join('; ')}. ` +
            (verdict.kind === 'held'
              ? `It is judged as held until ${new Date(verdict.untilMs).toISOString()} at most (${capped}), and taken over then unless renewed. `
              : `Judged so (${capped}), it has run out. `) +
            `If it is not a run of kustomize-reconcile, delete it: ${deleteCommand(namespace, name)}`,
        );
      }
      if (!current || verdict.kind === 'free') {
        if (current?.spec?.holderIdentity) {
          opts.log?.(`Taking over the expired lock ${label} from ${current.spec.holderIdentity}`);
        }
        const spec = {
          holderIdentity: opts.holder,
          leaseDurationSeconds: leaseSeconds(opts.leaseMs),
          acquireTime: microTime(t),
          renewTime: microTime(t),
          leaseTransitions: (current?.spec?.leaseTransitions ?? 0) + (current?.spec?.holderIdentity ? 1 : 0),
        };
        try {
          const sentAt = (opts.monotonic ?? (() => performance.now()))();
          const lease = current
            ? await replace<Lease>(raw, ref, {
                ...current,
                metadata: { ...current.metadata, labels: { ...current.metadata.labels, ...LOCK_LABELS } },
                spec,
              })
            : await create<Lease>(raw, ref, {
                apiVersion: 'coordination.k8s.io/v1',
                kind: 'Lease',
                metadata: { name, namespace, labels: { ...LOCK_LABELS } },
                spec,
              });
          const lock = new Lock(raw, ref, label, lease, opts, sentAt);
          lock.startRenewing();
          return lock;
        } catch (err) {
          // Someone else took it in between: look again.
          if (!(err instanceof ApiError && err.status === 409)) throw err;
          continue;
        }
      }
      if (t >= deadline) {
        throw new Error(
          `another run holds the lock ${label}: ${holder} (last renewed ${current.spec?.renewTime ?? 'never'}); ` +
            `gave up after waiting ${formatDuration(opts.waitMs)} (input lock-timeout)`,
        );
      }
      if (waitingFor !== holder) {
        waitingFor = holder;
        opts.log?.(`Waiting for the lock ${label}, held by ${holder}`);
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
    if (this.released && this.lost === undefined) throw new LockLost(`released the lock ${this.label}`);
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
    this.forgetOnSignal();
    if (this.timer) clearInterval(this.timer);
    await this.renewing;
    this.released = true;
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
