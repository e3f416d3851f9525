/**
 * The one retry policy of the HTTP clients, and the helper that applies it (as actions/checkout's
 * RetryHelper): which answers are worth another try (a 429 or a 5xx but 501, and a network error the
 * caller names), how long to wait before it (the answer's Retry-After, at most MAX_RETRY_AFTER_MS,
 * else a backoff that doubles from 200 ms to 5 s, with up to 100 ms of jitter), and how many tries
 * (HTTP_RETRY: two, the first and one more). S3 (source/s3.ts), the KMS key services
 * (sops/kms/common.ts) and the OCI registry (source/registry.ts) retry through `retrying`; the
 * cluster client keeps its own loop, which also owns a request deadline, write guards and a circuit
 * breaker, but takes its statuses, its backoff and its Retry-After from here. Pure but for the
 * pause, which a policy may replace (tests pass an instant one).
 */

/** Statuses worth another try: the server was busy (429) or broke on its side (5xx but 501). */
export const RETRY_STATUS: ReadonlySet<number> = new Set([429, 500, 502, 503, 504]);

/** The longest Retry-After honoured: a longer one is cut to it. */
export const MAX_RETRY_AFTER_MS = 30_000;

/** Whether an answer with `status` is worth another try. */
export function retryable(status: number): boolean {
  return RETRY_STATUS.has(status);
}

/** The pause before try `attempt + 1` when the answer asked for none: 200 ms doubling to 5 s, plus jitter. */
export function backoffMs(attempt: number, jitter: () => number = Math.random): number {
  return Math.min(200 * 2 ** (attempt - 1), 5000) + Math.floor(jitter() * 100);
}

/**
 * A Retry-After header's pause in milliseconds: delay-seconds, or an HTTP date (`now` in ms), cut to
 * MAX_RETRY_AFTER_MS; undefined when it is absent, unreadable, zero or past.
 */
export function retryAfterMs(header: string | null | undefined, now: number = Date.now()): number | undefined {
  const value = header?.trim() ?? '';
  if (value === '') return undefined;
  const ms = /^\d+(\.\d+)?$/.test(value) ? Number(value) * 1000 : Date.parse(value) - now;
  return Number.isFinite(ms) && ms > 0 ? Math.min(ms, MAX_RETRY_AFTER_MS) : undefined;
}

/** How many tries, and how a pause is waited (tests pass an instant one). */
export interface RetryPolicy {
  /** Tries in all, the first included. */
  readonly attempts: number;
  /** Waits `ms`; rejects with the signal's reason when `signal` aborts first. */
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** A pause that ends early, rejecting, when `signal` aborts. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The HTTP clients' policy: the first try and one more. */
export const HTTP_RETRY: RetryPolicy = { attempts: 2, sleep: abortableSleep };

/** What makes a try's outcome worth another. */
export interface RetryRules<T> {
  /**
   * An answer worth another try: undefined to take it; else the pause it asks for (Retry-After,
   * ms), or `{}` for the backoff. Never asked about the last try's answer, which is taken.
   */
  again: (value: T) => { afterMs?: number } | undefined;
  /** Whether a thrown error is worth another try (never once `signal` aborted); none is by default. */
  againAfter?: (err: unknown) => boolean;
  /** Lets go of an answer that is not taken (e.g. cancels its body). */
  drop?: (value: T) => Promise<void>;
  /** The caller's deadline: no try after it aborts, and a pause ends with it. */
  signal?: AbortSignal;
  policy?: RetryPolicy;
}

/**
 * Runs `run` (given the try's number, from 1) until its outcome is not worth another try or the
 * policy's tries are spent: returns the answer taken, or throws the last error.
 */
export async function retrying<T>(run: (attempt: number) => Promise<T>, rules: RetryRules<T>): Promise<T> {
  const policy = rules.policy ?? HTTP_RETRY;
  for (let attempt = 1; ; attempt++) {
    const last = attempt >= policy.attempts;
    let value: T;
    try {
      value = await run(attempt);
    } catch (err) {
      if (last || rules.signal?.aborted === true || rules.againAfter?.(err) !== true) throw err;
      await policy.sleep(backoffMs(attempt), rules.signal);
      continue;
    }
    const again = last ? undefined : rules.again(value);
    if (again === undefined) return value;
    await rules.drop?.(value);
    await policy.sleep(again.afterMs ?? backoffMs(attempt), rules.signal);
  }
}

/** The rule for an HTTP answer: worth another try by its status (`retryable`), after its Retry-After or the backoff. */
export function againByStatus(res: { status: number; headers: Headers }): { afterMs?: number } | undefined {
  if (!retryable(res.status)) return undefined;
  const afterMs = retryAfterMs(res.headers.get('retry-after'));
  return afterMs === undefined ? {} : { afterMs };
}
