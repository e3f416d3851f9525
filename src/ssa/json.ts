/** A JSON object (not an array, not null). */
export function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** One key as a JSON pointer segment (RFC 6901): `~` becomes `~0`, `/` becomes `~1`. */
export function escapePointer(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}
