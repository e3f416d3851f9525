// The one retry policy of the HTTP clients (src/util/retry.ts): which answers are worth another try,
// how long to wait before it, and the helper that tries again. Pauses are recorded, never waited.
import { describe, expect, it } from 'vitest';
import {
  abortableSleep,
  againByStatus,
  backoffMs,
  MAX_RETRY_AFTER_MS,
  retryable,
  retryAfterMs,
  retrying,
  type RetryPolicy,
} from '../../src/util/retry.js';

describe('retryable', () => {
  it.each<[number, boolean]>([
    [429, true],
    [500, true],
    [502, true],
    [503, true],
    [504, true],
    [501, false],
    [400, false],
    [401, false],
    [403, false],
    [404, false],
    [409, false],
    [200, false],
  ])('status %i → %s', (status, want) => {
    expect(retryable(status)).toBe(want);
  });
});

describe('retryAfterMs', () => {
  const NOW = Date.parse('2026-01-01T00:00:00Z');
  it.each<[string | null | undefined, number | undefined]>([
    [undefined, undefined],
    [null, undefined],
    ['', undefined],
    ['0', undefined],
    ['1', 1000],
    [' 2 ', 2000],
    ['1.5', 1500],
    ['31', MAX_RETRY_AFTER_MS],
    ['3600', MAX_RETRY_AFTER_MS],
    ['Thu, 01 Jan 2026 00:00:05 GMT', 5000],
    ['Thu, 01 Jan 2026 01:00:00 GMT', MAX_RETRY_AFTER_MS],
    ['Wed, 31 Dec 2025 23:59:00 GMT', undefined],
    ['soon', undefined],
    ['-1', undefined],
  ])('%j → %s', (header, want) => {
    expect(retryAfterMs(header, NOW)).toBe(want);
  });
});

describe('backoffMs', () => {
  it.each<[number, number, number]>([
    [1, 0, 200],
    [2, 0, 400],
    [3, 0, 800],
    [5, 0, 3200],
    [6, 0, 5000],
    [10, 0, 5000],
    [1, 0.999, 299],
  ])('try %i, jitter %d → %i ms', (attempt, jitter, want) => {
    expect(backoffMs(attempt, () => jitter)).toBe(want);
  });
});

describe('retrying', () => {
  /** A policy whose pauses are recorded, not waited. */
  const recording = (attempts: number) => {
    const paused: number[] = [];
    const policy: RetryPolicy = {
      attempts,
      sleep: (ms) => {
        paused.push(ms);
        return Promise.resolve();
      },
    };
    return { paused, policy };
  };
  const answer = (status: number, retryAfter?: string) => ({
    status,
    headers: new Headers(retryAfter === undefined ? {} : { 'retry-after': retryAfter }),
  });

  it.each<[string, number[], number, string, number]>([
    ['a 200 at once', [200], 2, '200', 1],
    ['a 503, then a 200', [503, 200], 2, '200', 2],
    ['a 429, then a 200', [429, 200], 2, '200', 2],
    ['two 503s: the last answer is taken', [503, 503, 200], 2, '503', 2],
    ['a 404 is not tried again', [404, 200], 2, '404', 1],
    ['three tries when the policy says so', [500, 502, 200], 3, '200', 3],
  ])('%s', async (_, statuses, attempts, want, tries) => {
    const { policy } = recording(attempts);
    let n = 0;
    const got = await retrying(() => Promise.resolve(answer(statuses[n++]!)), { again: againByStatus, policy });
    expect(String(got.status)).toBe(want);
    expect(n).toBe(tries);
  });

  it('waits what Retry-After asks, else the backoff', async () => {
    const { paused, policy } = recording(3);
    const answers = [answer(429, '2'), answer(503), answer(200)];
    let n = 0;
    await retrying(() => Promise.resolve(answers[n++]!), { again: againByStatus, policy });
    expect(paused[0]).toBe(2000);
    expect(paused[1]).toBeGreaterThanOrEqual(400);
    expect(paused[1]).toBeLessThan(500);
  });

  it('drops the answers it does not take', async () => {
    const { policy } = recording(2);
    const dropped: number[] = [];
    const answers = [answer(503), answer(200)];
    let n = 0;
    await retrying(() => Promise.resolve(answers[n++]!), {
      again: againByStatus,
      drop: (a) => {
        dropped.push(a.status);
        return Promise.resolve();
      },
      policy,
    });
    expect(dropped).toEqual([503]);
  });

  it.each<[string, boolean, number]>([
    ['an error worth another try', true, 2],
    ['an error that is not', false, 1],
  ])('%s', async (_, worth, tries) => {
    const { policy } = recording(2);
    let n = 0;
    const run = () => {
      n++;
      return n === 1 ? Promise.reject(new Error('ECONNRESET')) : Promise.resolve(answer(200));
    };
    const outcome = retrying(run, { again: againByStatus, againAfter: () => worth, policy });
    if (worth) await expect(outcome).resolves.toMatchObject({ status: 200 });
    else await expect(outcome).rejects.toThrow('ECONNRESET');
    expect(n).toBe(tries);
  });

  it('throws the last error once the tries are spent, and never tries after the signal aborted', async () => {
    const { policy } = recording(3);
    let n = 0;
    await expect(
      retrying(() => Promise.reject(new Error(`try ${++n}`)), { again: againByStatus, againAfter: () => true, policy }),
    ).rejects.toThrow('try 3');
    const aborted = AbortSignal.abort();
    n = 0;
    await expect(
      retrying(() => Promise.reject(new Error(`try ${++n}`)), {
        again: againByStatus,
        againAfter: () => true,
        signal: aborted,
        policy,
      }),
    ).rejects.toThrow('try 1');
  });

  it('abortableSleep ends with the signal', async () => {
    const controller = new AbortController();
    const pause = abortableSleep(60_000, controller.signal);
    controller.abort(new Error('stopped'));
    await expect(pause).rejects.toThrow('stopped');
    await expect(abortableSleep(0)).resolves.toBeUndefined();
  });
});
