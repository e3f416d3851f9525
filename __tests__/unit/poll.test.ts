// pollUntil with a fake clock: when it looks, how long it sleeps, and what a timeout returns.
import { describe, expect, it } from 'vitest';
import { pollUntil, type Clock } from '../../src/util/poll.js';

/** A clock whose sleeps only move its time on, recording each. */
function fakeClock(start = 1_000) {
  let t = start;
  const sleeps: number[] = [];
  const clock: Clock = {
    now: () => t,
    sleep: (ms) => {
      sleeps.push(ms);
      t += ms;
      return Promise.resolve();
    },
  };
  return { clock, sleeps, advance: (ms: number) => (t += ms) };
}

describe('pollUntil', () => {
  it.each<[string, number, number, number | undefined, number[], number | string]>([
    ['found at once: no sleep', 1_000, 250, 1, [], 'found 1'],
    ['found at the third look', 1_000, 250, 3, [250, 250], 'found 3'],
    [
      'never found: sleeps up to the deadline, looks once more there',
      600,
      250,
      undefined,
      [250, 250, 100],
      'timed out',
    ],
    ['a zero timeout: one look', 0, 250, undefined, [], 'timed out'],
  ])('%s', async (_, timeoutMs, intervalMs, foundAt, wantSleeps, want) => {
    const { clock, sleeps } = fakeClock();
    let looks = 0;
    const got = await pollUntil(() => Promise.resolve(++looks === foundAt ? `found ${looks}` : undefined), {
      deadline: clock.now() + timeoutMs,
      intervalMs,
      clock,
      timedOut: () => 'timed out',
    });
    expect(got).toBe(want);
    expect(sleeps).toEqual(wantSleeps);
  });

  it('a look that takes time counts against the deadline', async () => {
    const { clock, sleeps, advance } = fakeClock();
    const got = await pollUntil(
      () => {
        advance(400);
        return Promise.resolve(undefined);
      },
      { deadline: clock.now() + 1_000, intervalMs: 250, clock, timedOut: () => 'late' },
    );
    expect(got).toBe('late');
    expect(sleeps).toEqual([250]);
  });

  it('timedOut may throw, and a throwing look ends the poll', async () => {
    const { clock } = fakeClock();
    const opts = { deadline: clock.now(), intervalMs: 10, clock };
    await expect(
      pollUntil(() => Promise.resolve(undefined), {
        ...opts,
        timedOut: () => {
          throw new Error('gave up');
        },
      }),
    ).rejects.toThrow('gave up');
    await expect(pollUntil(() => Promise.reject(new Error('broken')), { ...opts, timedOut: () => 0 })).rejects.toThrow(
      'broken',
    );
  });
});
