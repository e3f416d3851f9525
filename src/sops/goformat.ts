/**
 * Go's parsing and formatting of scalars (`strconv`, `time`), which the plaintext sops writes and
 * the MAC it hashes depend on.
 */
import type { Plain } from './tree.js';

/** Go's `strconv.ParseBool`. */
export function goParseBool(s: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(s)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(s)) return false;
  return undefined;
}

/** Go's `strconv.ParseFloat(s, 64)` for decimal text, infinities and NaN; undefined where Go fails. */
export function goParseFloat(text: string): number | undefined {
  const lower = text.toLowerCase();
  if (/^[+]?inf(inity)?$/.test(lower)) return Infinity;
  if (/^-inf(inity)?$/.test(lower)) return -Infinity;
  if (/^[+-]?nan$/.test(lower)) return NaN;
  if (/^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/i.test(text)) return Number(text);
  return undefined;
}

/** Go's `strconv.FormatFloat(f, 'f', -1, 64)`: shortest round-trip digits, never an exponent. */
export function goFormatFloatF(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return '+Inf';
  if (n === -Infinity) return '-Inf';
  if (Object.is(n, -0)) return '-0';
  const s = String(n);
  const m = /^(-?)(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(s);
  if (!m) return s;
  const [, sign, intPart, frac = '', expText] = m;
  const digits = intPart! + frac;
  const point = intPart!.length + Number(expText);
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** `stores.ValToString`, for values that are not strings. */
export function goValToString(v: Plain): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') {
    if (Number.isNaN(v)) return 'NaN';
    if (!Number.isFinite(v)) return v > 0 ? '+Inf' : '-Inf';
    // FormatFloat 'G' -1, then at least one decimal when it looks like an integer
    const abs = Math.abs(v);
    let s: string;
    if (abs !== 0 && (abs < 1e-4 || abs >= 1e21)) {
      s = v
        .toExponential()
        .toUpperCase()
        .replace(/E([+-])(\d)$/, 'E$10$2');
    } else {
      s = goFormatFloatF(v);
    }
    return s.includes('.') || s.includes('E') ? s : `${s}.0`;
  }
  return String(v);
}

/** `time.Time.Format(time.RFC3339)` of the parsed `lastmodified`: the MAC's additional data. */
export function goRfc3339(text: string): string {
  const m = /^(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}:\d{2})(?:\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.exec(text);
  if (!m) return text;
  const zone = /^(?:[Zz]|[+-]00:00)$/.test(m[3]!) ? 'Z' : m[3]!;
  return `${m[1]!}T${m[2]!}${zone}`;
}
