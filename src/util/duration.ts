/** Flux's durations (`1m30s`, `1.5h`, `500ms`), as its CRD and Go's time.ParseDuration read them. Pure. */

/** Flux's CRD pattern for durations: a subset of Go's time.ParseDuration (no sign, no `us`/`ns`). */
const DURATION = /^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$/;
const DURATION_PART = /([0-9]+)(?:\.([0-9]+))?(ms|s|m|h)/g;
const NANOS_PER_UNIT: Record<string, bigint> = {
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};
/** Go durations are int64 nanoseconds; longer ones fail to parse in Flux. */
const MAX_DURATION_NANOS = 2n ** 63n - 1n;

/**
 * Parses a Flux duration such as `1m30s`, `1.5h` or `500ms` into milliseconds (fractions kept to the
 * nanosecond, as Go does). Returns undefined for anything Flux's CRD would refuse.
 */
export function parseDuration(text: string): number | undefined {
  if (!DURATION.test(text)) return undefined;
  let nanos = 0n;
  for (const [, whole = '0', fraction = '', unit = 'ms'] of text.matchAll(DURATION_PART)) {
    const perUnit = NANOS_PER_UNIT[unit] ?? 0n;
    nanos += BigInt(whole) * perUnit;
    // Go truncates a fraction below one nanosecond; integer division does the same.
    if (fraction !== '') nanos += (BigInt(fraction) * perUnit) / 10n ** BigInt(fraction.length);
    if (nanos > MAX_DURATION_NANOS) return undefined;
  }
  return Number(nanos) / 1_000_000;
}

/**
 * A duration for a message, as Go's time.Duration prints it (and so as Flux's messages show it), to
 * the second above a minute: `250ms`, `1.5s`, `30s`, `2m0s`, `9m30s`, `1h0m0s`.
 */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${Number((ms / 1000).toFixed(1))}s`;
  const total = Math.round(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  return h > 0 ? `${h}h${m}m${s}s` : `${m}m${s}s`;
}
