// The lock's checkpoint (assertHeld) with an injected monotonic clock and a scripted API server:
// when it renews, and when it stops the run. And its acquisition against a Lease someone else put
// there: waited for, taken over once its (bounded) claim ran out, or refused at once.
import { describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { ApiError } from '../../src/cluster/errors.js';
import { LAST_HOLDER_ANNOTATION, Lock, LockLost } from '../../src/inventory/lock.js';
import { LOCK_LABELS, type LeaseSpec } from '../../src/inventory/lease.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

/** An answer, or one made from the lease as acquired and the last body sent. */
type Answer =
  | Record<string, unknown>
  | ApiError
  | ((acquired: Record<string, unknown>, sent: Record<string, unknown>) => Record<string, unknown>);

/** A client whose answers to lease requests after the acquisition are scripted, in order. */
function scripted(answers: Answer[]) {
  const requests: string[] = [];
  let rv = 1;
  let acquired: Record<string, unknown> = {};
  let sent: Record<string, unknown> = {};
  const lease = (spec: Record<string, unknown>, annotations?: Record<string, string>) => ({
    metadata: { name: 'l', namespace: 'ns', resourceVersion: String(rv++), ...(annotations ? { annotations } : {}) },
    spec,
  });
  const client = {
    unguarded: () => client,
    request: (method: string, path: string, opts?: { body?: { spec?: Record<string, unknown> } }) => {
      requests.push(method);
      if (opts?.body?.spec) sent = opts.body.spec;
      if (requests.length === 1) return Promise.reject(new ApiError(404, 'NotFound', 'not found'));
      if (requests.length === 2) {
        acquired = opts?.body?.spec ?? {};
        return Promise.resolve(lease(acquired));
      }
      const next = answers.shift();
      if (next === undefined) return Promise.reject(new Error(`unexpected ${method} ${path}`));
      if (next instanceof ApiError) return Promise.reject(next);
      return Promise.resolve(typeof next === 'function' ? next(acquired, sent) : next);
    },
  } as unknown as ClusterClient;
  return { client, requests, lease };
}

const HELD = { spec: { holderIdentity: 'run-A', leaseDurationSeconds: 30 } };
const conflict = () => new ApiError(409, 'Conflict', 'the object has been modified');
const unavailable = () => new ApiError(503, 'ServiceUnavailable', 'HTTP 503');

describe('Lock.assertHeld', () => {
  it.each<[string, number, Answer[], string[], string | undefined]>([
    ['fresh: no request', 1_000, [], [], undefined],
    ['renewal overdue (half the lease): renews, then goes on', 20_000, [HELD], ['PUT'], undefined],
    [
      'stalled, taken over: names the new holder',
      95_000,
      [conflict(), { metadata: {}, spec: { holderIdentity: 'run-B' } }],
      ['PUT', 'GET'],
      'lost the lock ns/l: it was taken over by run-B, while this run did not renew it for 95s (its lease lasts 30s)',
    ],
    [
      'stalled, taken over and released since: names the last holder',
      95_000,
      [
        conflict(),
        { metadata: { annotations: { [LAST_HOLDER_ANNOTATION]: 'run-B' } }, spec: { holderIdentity: null } },
      ],
      ['PUT', 'GET'],
      'lost the lock ns/l: it was taken over by run-B (released since), while this run did not renew it for 95s (its lease lasts 30s)',
    ],
    [
      'stalled, lease deleted',
      95_000,
      [new ApiError(404, 'NotFound', 'not found')],
      ['PUT'],
      'lost the lock ns/l: it was deleted by another run (its Kustomization was removed), while this run did not renew it for 95s (its lease lasts 30s)',
    ],
    ['renewal fails before the lease runs out: goes on', 20_000, [unavailable()], ['PUT'], undefined],
    [
      'renewal refused because its own earlier try got through (answer lost, retried): still ours',
      95_000,
      [conflict(), (acquired, sent) => ({ metadata: { resourceVersion: '9' }, spec: { ...acquired, ...sent } })],
      ['PUT', 'GET'],
      undefined,
    ],
    [
      'same holder name, acquired anew by another run: lost',
      95_000,
      [conflict(), (acquired) => ({ metadata: {}, spec: { ...acquired, acquireTime: '2000-01-01T00:00:00.000000Z' } })],
      ['PUT', 'GET'],
      'lost the lock ns/l: it was taken over by run-A, while this run did not renew it for 95s (its lease lasts 30s)',
    ],
    [
      'renewal fails after the lease ran out: stops',
      31_000,
      [unavailable()],
      ['PUT'],
      'lost the lock ns/l: it could not be renewed before it ran out, while this run did not renew it for 31s (its lease lasts 30s): HTTP 503',
    ],
  ])('%s', async (_name, elapsed, answers, expected, lost) => {
    const { client, requests } = scripted(answers);
    let clock = 0;
    const lock = await Lock.acquire(client, 'ns', 'l', {
      holder: 'run-A',
      leaseMs: 30_000,
      waitMs: 0,
      monotonic: () => clock,
    });
    clock = elapsed;
    const outcome = await lock.assertHeld().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(requests.slice(2)).toEqual(expected);
    if (lost === undefined) {
      expect(outcome).toBeUndefined();
      expect(lock.lostReason).toBeUndefined();
    } else {
      expect(outcome).toBeInstanceOf(LockLost);
      expect((outcome as Error).message).toBe(lost);
      // Once lost, always lost: no more requests, not even to release or delete the other run's lease.
      await expect(lock.assertHeld()).rejects.toThrow(lost);
      await lock.remove();
      expect(requests.slice(2)).toEqual(expected);
    }
    await lock.release().catch(() => undefined);
  });
});

describe('Lock.assertHeld after release', () => {
  it('refuses: nothing is written for a lock this run let go', async () => {
    const { client, requests } = scripted([{ metadata: { resourceVersion: '3' }, spec: { holderIdentity: null } }]);
    const lock = await Lock.acquire(client, 'ns', 'l', {
      holder: 'run-A',
      leaseMs: 30_000,
      waitMs: 0,
      monotonic: () => 0,
    });
    await lock.release();
    await expect(lock.assertHeld()).rejects.toThrow(new LockLost('released the lock ns/l'));
    expect(requests).toEqual(['GET', 'POST', 'PUT']);
  });
});

type Stored = {
  metadata: { name: string; namespace: string; resourceVersion: string; labels?: Record<string, string> };
  spec: LeaseSpec;
};

/** An API server holding one Lease (or none): GET answers it, POST and PUT store what is sent. */
function leaseServer(initial?: { spec: LeaseSpec; labels?: Record<string, string> }) {
  let rv = 1;
  let lease: Stored | undefined = initial && {
    metadata: {
      name: 'l',
      namespace: 'ns',
      resourceVersion: String(rv++),
      ...(initial.labels ? { labels: initial.labels } : {}),
    },
    spec: initial.spec,
  };
  const requests: string[] = [];
  const client = {
    unguarded: () => client,
    request: (method: string, _path: string, opts?: { body?: Stored }) => {
      requests.push(method);
      if (method === 'GET') {
        return lease
          ? Promise.resolve(structuredClone(lease))
          : Promise.reject(new ApiError(404, 'NotFound', 'not found'));
      }
      const body = opts!.body!;
      lease = { ...body, metadata: { ...body.metadata, resourceVersion: String(rv++) } };
      return Promise.resolve(structuredClone(lease));
    },
  } as unknown as ClusterClient;
  return { client, requests, current: () => lease };
}

describe('Lock.acquire', () => {
  const NOW = Date.parse('2024-05-01T12:00:00.000Z');
  const at = (offsetMs: number) => new Date(NOW + offsetMs).toISOString().replace(/Z$/, '000Z');
  /** A wall clock that moves `stepMs` each time it is read. */
  const stepping = (stepMs: number) => {
    let t = NOW - stepMs;
    return () => (t += stepMs);
  };
  const options = (now: () => number, log: string[], waitMs = 600_000) => ({
    holder: 'run-A',
    leaseMs: 30_000,
    waitMs,
    now,
    monotonic: () => 0,
    log: (l: string) => log.push(l),
  });

  it('creates the Lease marked as this tool’s', async () => {
    const server = leaseServer();
    const lock = await Lock.acquire(
      server.client,
      'ns',
      'l',
      options(() => NOW, []),
    );
    expect(server.current()?.metadata.labels).toEqual(LOCK_LABELS);
    expect(server.current()?.spec).toMatchObject({ holderIdentity: 'run-A', leaseDurationSeconds: 30 });
    await lock.release();
  });

  it.each<[string, LeaseSpec, string]>([
    [
      'renewTime 2099 and a huge duration',
      { holderIdentity: 'attacker', renewTime: '2099-01-01T00:00:00.000000Z', leaseDurationSeconds: 2_147_483_647 },
      'its leaseDurationSeconds 2147483647 is more than the 60s a run of kustomize-reconcile ever writes; ' +
        "its renewTime 2099-01-01T00:00:00.000000Z is 27272 days ahead of this runner's clock (more than the 30s of clock skew tolerated)",
    ],
    [
      'an hour long, renewed now',
      { holderIdentity: 'attacker', renewTime: at(0), leaseDurationSeconds: 3600 },
      'its leaseDurationSeconds 3600 is more than the 60s a run of kustomize-reconcile ever writes',
    ],
  ])('refuses at once an absurd claim on a Lease not marked as ours: %s', async (_name, spec, why) => {
    const server = leaseServer({ spec });
    const log: string[] = [];
    await expect(
      Lock.acquire(
        server.client,
        'ns',
        'l',
        options(() => NOW, log),
      ),
    ).rejects.toThrow(
      `the lock ns/l is a Lease this run does not trust, held by "attacker": ${why}, and it is not marked as a lock of ` +
        'kustomize-reconcile (label app.kubernetes.io/managed-by=kustomize-reconcile) nor held by a run of it (a workflow ' +
        'run URL, or "host pid N"). It was neither waited for nor taken over. If it is not a run of kustomize-reconcile, ' +
        'delete it: kubectl delete lease --namespace ns l',
    );
    // One look: no wait, no write.
    expect(server.requests).toEqual(['GET']);
    expect(log).toEqual([]);
  });

  it('bounds an absurd claim on a Lease marked as ours, and takes it over once that runs out', async () => {
    const server = leaseServer({
      labels: { ...LOCK_LABELS },
      spec: { holderIdentity: 'stuck', renewTime: '2099-01-01T00:00:00.000000Z', leaseDurationSeconds: 2_147_483_647 },
    });
    const log: string[] = [];
    // The clock is read every 50s: the deadline, then looks at 50s (first seen: held until 50 + 30s skew
    // + 60s cap = 140s), 100s (held), 150s (free).
    const lock = await Lock.acquire(server.client, 'ns', 'l', options(stepping(50_000), log));
    expect(log).toEqual([
      'Warning: the lock ns/l, held by "stuck", claims more than a run of kustomize-reconcile ever does: ' +
        'its leaseDurationSeconds 2147483647 is more than the 60s a run of kustomize-reconcile ever writes; ' +
        "its renewTime 2099-01-01T00:00:00.000000Z is 27272 days ahead of this runner's clock (more than the 30s of clock skew tolerated). " +
        'It is judged as held until 2024-05-01T12:02:20.000Z at most (its duration capped at 60s, its renewTime at most 30s ' +
        'after this run first saw it), and taken over then unless renewed. If it is not a run of kustomize-reconcile, ' +
        'delete it: kubectl delete lease --namespace ns l',
      'Waiting for the lock ns/l, held by stuck',
      'Taking over the expired lock ns/l from stuck',
    ]);
    expect(server.requests).toEqual(['GET', 'GET', 'GET', 'PUT']);
    expect(server.current()?.spec).toMatchObject({
      holderIdentity: 'run-A',
      leaseDurationSeconds: 30,
      leaseTransitions: 1,
    });
    await lock.release();
  });

  it('waits for a sane claim, whoever holds it, and names the holder when it gives up', async () => {
    const server = leaseServer({ spec: { holderIdentity: 'someone', renewTime: at(0), leaseDurationSeconds: 30 } });
    const log: string[] = [];
    await expect(Lock.acquire(server.client, 'ns', 'l', options(stepping(10_000), log, 15_000))).rejects.toThrow(
      `another run holds the lock ns/l: someone (last renewed ${at(0)}); gave up after waiting 15s (input lock-timeout)`,
    );
    expect(log).toEqual(['Waiting for the lock ns/l, held by someone']);
  });

  it('takes over a Lease whose holder stopped renewing it, adding the label', async () => {
    const server = leaseServer({
      spec: { holderIdentity: 'killed-run', renewTime: at(-31_000), leaseDurationSeconds: 30 },
    });
    const log: string[] = [];
    const lock = await Lock.acquire(
      server.client,
      'ns',
      'l',
      options(() => NOW, log),
    );
    expect(log).toEqual(['Taking over the expired lock ns/l from killed-run']);
    expect(server.current()?.metadata.labels).toEqual(LOCK_LABELS);
    await lock.release();
  });
});
