/**
 * Waiting: `sleep`, and `pollUntil` for the loops that look at something until it is so or a deadline
 * passes. The clock is injectable so that tests run without waiting.
 */

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** The time and the waiting a poll uses; tests pass a fake one. */
export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const systemClock: Clock = { now: () => Date.now(), sleep };

export interface PollOptions<T> {
  /** When to stop, in the clock's milliseconds (e.g. `clock.now() + timeoutMs`). */
  deadline: number;
  /** Pause between looks; never past the deadline. */
  intervalMs: number;
  /** The result once a look after the deadline still found nothing (it may throw instead). */
  timedOut: () => T;
  clock?: Clock;
}

/**
 * Calls `look` until it returns a value (not undefined), which is returned; after a look at or past
 * the deadline, returns `timedOut()`. Between looks it sleeps `intervalMs`, or less when the deadline
 * is nearer, so the last look is at the deadline.
 */
export async function pollUntil<T>(look: () => Promise<T | undefined>, opts: PollOptions<T>): Promise<T> {
  const clock = opts.clock ?? systemClock;
  for (;;) {
    const found = await look();
    if (found !== undefined) return found;
    if (clock.now() >= opts.deadline) return opts.timedOut();
    await clock.sleep(Math.min(opts.intervalMs, Math.max(0, opts.deadline - clock.now())));
  }
}
