/** A JSON object (not an array, not null). */
export function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** One key as a JSON pointer segment (RFC 6901): `~` becomes `~0`, `/` becomes `~1`. */
export function escapePointer(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

/** Calls `fn` with each string leaf of `v` and its JSON pointer (below `path`). */
export function forEachString(v: unknown, fn: (value: string, path: string) => void, path = ''): void {
  if (typeof v === 'string') fn(v, path);
  else if (Array.isArray(v))
    v.forEach((x, i) => {
      forEachString(x, fn, `${path}/${i}`);
    });
  else if (isMap(v)) for (const [k, x] of Object.entries(v)) forEachString(x, fn, `${path}/${escapePointer(k)}`);
}
