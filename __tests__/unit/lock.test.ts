// The lock's checkpoint (assertHeld) with an injected monotonic clock and a scripted API server:
// when it renews, and when it stops the run.
import { describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { ApiError } from '../../src/cluster/errors.js';
import { LAST_HOLDER_ANNOTATION, Lock, LockLost } from '../../src/inventory/lock.js';

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
