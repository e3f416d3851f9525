/** Runs `fn` over `items` with at most `limit` in flight; results keep the input order. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed: unknown;
  const worker = async (): Promise<void> => {
    while (failed === undefined && next < items.length) {
      const i = next++;
      try {
        results[i] = await fn(items[i]!);
      } catch (err) {
        failed ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (failed !== undefined) throw failed instanceof Error ? failed : new Error('a worker failed', { cause: failed });
  return results;
}

/**
 * Runs `fn` over `items` in their order with at most `limit` in flight, starting none once `stopped()`
 * says so (those in flight finish). `fn` reports its own failures: a rejection is a bug, and rethrown
 * once every call in flight has settled.
 */
export async function eachLimit<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
  stopped: () => boolean = () => false,
): Promise<void> {
  let next = 0;
  let failed: unknown;
  const worker = async (): Promise<void> => {
    while (failed === undefined && !stopped() && next < items.length) {
      const i = next++;
      try {
        await fn(items[i]!);
      } catch (err) {
        failed ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (failed !== undefined) throw failed instanceof Error ? failed : new Error('a worker failed', { cause: failed });
}
