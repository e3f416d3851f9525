/**
 * The scalar rules shared by the two readers of plain YAML files (plain-yaml.ts, through the yaml
 * package's documents, and plain-lines.ts, line by line): which plain scalars yaml.v3 and the yaml
 * package's core schema read alike, and which keys kustomize's yaml.v2 sorts in a known order.
 */
export const CORE_NULL = new Set(['', '~', 'null', 'Null', 'NULL']);
export const CORE_BOOL = new Set(['true', 'True', 'TRUE', 'false', 'False', 'FALSE']);
/** Plain scalars yaml.v3 reads as null, a boolean, a special float or a merge key. */
const V3_WORDS = new Set([
  ...CORE_NULL,
  ...CORE_BOOL,
  '<<',
  ...['.nan', '.NaN', '.NAN'],
  ...['', '+', '-'].flatMap((s) => [`${s}.inf`, `${s}.Inf`, `${s}.INF`]),
]);
/** Numbers written the same way in every reader: no sign but `-`, no leading zero, no `_`. */
export const PLAIN_NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?$/;

/**
 * True when yaml.v3 might read the plain scalar `s` as something other than a string (a superset):
 * a timestamp (four digits and `-`), an integer in any base strconv.ParseInt takes, or a float,
 * after removing underscores as yaml.v3 does.
 */
export function v3MayReadAsNonString(s: string): boolean {
  if (V3_WORDS.has(s)) return true;
  if (!/^[-+.0-9]/.test(s)) return false;
  if (/^[0-9]{4}-/.test(s)) return true;
  const p = s.replaceAll('_', '');
  return (
    /^[-+]?(?:0[xXoObB][0-9a-fA-F]*|[0-9]+)$/.test(p) ||
    /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/.test(p)
  );
}

/** A key kustomize's yaml.v2 sorts in an order {@link v2KeyLess} computes: printable ASCII, digit runs short. */
export function keyProblem(key: string): string | undefined {
  if (!/^[\x20-\x7E]*$/.test(key)) return `the key ${JSON.stringify(key)} (not ASCII)`;
  if (/[0-9]{16}/.test(key)) return `the key ${key} (a long digit run)`;
  if (key === '__proto__' || key === '<<') return `the key ${key}`;
  return undefined;
}
