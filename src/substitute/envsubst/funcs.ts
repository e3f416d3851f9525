/*
 * The string functions behind envsubst's operators (drone/envsubst's funcs.go), on byte strings: case mapping,
 * substrings, replacement and pattern trimming.
 */

import { EnvsubstError } from './errors.js';
import { globMatch } from './match.js';
import { decodeRune, encodeRune, runesOf } from './utf8.js';

// Case mapping: Go's unicode.ToUpper / ToLower are one-rune-to-one-rune ("simple") mappings. JS only has the full
// mappings; where the full mapping yields several runes the simple one is usually "unchanged", except for these.
const SIMPLE_UPPER_EXCEPTIONS = new Map<number, number>([
  ...[0x1f80, 0x1f90, 0x1fa0].flatMap((base) =>
    Array.from({ length: 8 }, (_, k): [number, number] => [base + k, base + k + 8]),
  ),
  [0x1fb3, 0x1fbc],
  [0x1fc3, 0x1fcc],
  [0x1ff3, 0x1ffc],
]);
const SIMPLE_LOWER_EXCEPTIONS = new Map<number, number>([[0x130, 0x69]]);

function simpleCase(rune: number, full: string, exceptions: Map<number, number>): number {
  const exception = exceptions.get(rune);
  if (exception !== undefined) return exception;
  const mapped = full.codePointAt(0);
  return mapped !== undefined && full.length === String.fromCodePoint(mapped).length ? mapped : rune;
}

export function upperRune(rune: number): number {
  return rune < 0x80
    ? rune >= 0x61 && rune <= 0x7a
      ? rune - 0x20
      : rune
    : simpleCase(rune, String.fromCodePoint(rune).toUpperCase(), SIMPLE_UPPER_EXCEPTIONS);
}

export function lowerRune(rune: number): number {
  return rune < 0x80
    ? rune >= 0x41 && rune <= 0x5a
      ? rune + 0x20
      : rune
    : simpleCase(rune, String.fromCodePoint(rune).toLowerCase(), SIMPLE_LOWER_EXCEPTIONS);
}

/** strings.ToUpper/ToLower: rune by rune (an invalid byte becomes U+FFFD). */
export function mapRunes(value: string, map: (rune: number) => number): string {
  return runesOf(value)
    .map((r) => encodeRune(map(r)))
    .join('');
}

export function mapFirstRune(value: string, map: (rune: number) => number): string {
  if (value === '') return value;
  const [rune, width] = decodeRune(value, 0);
  return encodeRune(map(rune)) + value.slice(width);
}

// strconv.Atoi on a 64-bit platform.
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function atoi(text: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(text)) return undefined;
  const n = BigInt(text);
  return n < INT64_MIN || n > INT64_MAX ? undefined : n;
}

function wrapInt64(n: bigint): bigint {
  return BigInt.asIntN(64, n);
}

/** `${v:offset}` / `${v:offset:length}`, in bytes. */
export function substring(value: string, args: string[]): string {
  const size = BigInt(value.length);
  let pos = atoi(args[0] ?? '');
  if (pos === undefined) return value;
  if (pos < 0n) pos = size + pos > 0n ? size + pos : 0n;
  const rest = (): string => (pos < size ? value.slice(Number(pos)) : '');
  if (args.length === 1) return rest();
  const length = atoi(args[1] ?? '');
  if (length === undefined) return value;
  if (length < 0n) {
    const end = size + length;
    return end < pos ? '' : value.slice(Number(pos), Number(end));
  }
  const end = wrapInt64(pos + length);
  if (end >= size) return rest();
  // Only reachable when pos + length overflowed: Go panics on the negative slice bound.
  if (end < 0n) throw new EnvsubstError(`panic: runtime error: slice bounds out of range [:${end.toString()}]`);
  return value.slice(Number(pos), Number(end));
}

/** strings.Replace(s, old, replacement, n); n < 0 means all. An empty `old` matches before every rune and at the end. */
export function replace(s: string, old: string, replacement: string, n: number): string {
  if (old === replacement || n === 0) return s;
  let out = '';
  let start = 0;
  for (let i = 0; n < 0 || i < n; i++) {
    let at: number;
    if (old === '') {
      if (i > 0) {
        if (start >= s.length) break;
        at = start + decodeRune(s, start)[1];
      } else at = 0;
    } else {
      at = s.indexOf(old, start);
      if (at < 0) break;
    }
    out += s.slice(start, at) + replacement;
    start = at + old.length;
  }
  return out + s.slice(start);
}

function reverseRunes(s: string): string {
  return runesOf(s).reverse().map(encodeRune).join('');
}

/**
 * Removes the shortest or longest non-empty prefix of `value` that matches `pattern`. Prefixes are tried at every
 * byte length; a malformed pattern leaves the value unchanged.
 */
export function trimPrefix(value: string, pattern: string, longest: boolean): string {
  let match = '';
  for (let end = value.length; end > 0; end--) {
    const prefix = value.slice(0, end);
    const matched = globMatch(pattern, prefix);
    if (matched === undefined) return value;
    if (matched) {
      match = prefix;
      if (longest) break;
    }
  }
  return value.slice(match.length);
}

export function trimSuffix(value: string, pattern: string, longest: boolean): string {
  return reverseRunes(trimPrefix(reverseRunes(value), reverseRunes(pattern), longest));
}
