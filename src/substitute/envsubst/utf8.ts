/*
 * Byte strings and Go-style UTF-8 (Go's unicode/utf8, for the envsubst port). A "byte string" is a JS string whose
 * char codes are bytes (0-255), so that slicing and comparing it are Go's byte-level string operations.
 */

import { Buffer, isUtf8 } from 'node:buffer';

export const REPLACEMENT = 0xfffd;

export function toBytes(text: string): string {
  return Buffer.from(text, 'utf8').toString('latin1');
}

/** Go's `utf8.DecodeRuneInString`: [rune, width]; an invalid or truncated sequence is [U+FFFD, 1]. */
export function decodeRune(bytes: string, at: number): [number, number] {
  if (at >= bytes.length) return [REPLACEMENT, 0];
  const b0 = bytes.charCodeAt(at);
  if (b0 < 0x80) return [b0, 1];
  let size: number;
  let lo = 0x80;
  let hi = 0xbf;
  if (b0 >= 0xc2 && b0 <= 0xdf) size = 2;
  else if (b0 >= 0xe0 && b0 <= 0xef) {
    size = 3;
    if (b0 === 0xe0) lo = 0xa0;
    if (b0 === 0xed) hi = 0x9f;
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    size = 4;
    if (b0 === 0xf0) lo = 0x90;
    if (b0 === 0xf4) hi = 0x8f;
  } else return [REPLACEMENT, 1];
  if (at + size > bytes.length) return [REPLACEMENT, 1];
  const b1 = bytes.charCodeAt(at + 1);
  if (b1 < lo || b1 > hi) return [REPLACEMENT, 1];
  let rune = b0 & (0xff >> (size + 1));
  rune = (rune << 6) | (b1 & 0x3f);
  for (let k = 2; k < size; k++) {
    const b = bytes.charCodeAt(at + k);
    if (b < 0x80 || b > 0xbf) return [REPLACEMENT, 1];
    rune = (rune << 6) | (b & 0x3f);
  }
  return [rune, size];
}

export function runesOf(bytes: string): number[] {
  const runes: number[] = [];
  for (let at = 0; at < bytes.length;) {
    const [rune, width] = decodeRune(bytes, at);
    runes.push(rune);
    at += width;
  }
  return runes;
}

export function encodeRune(rune: number): string {
  return toBytes(String.fromCodePoint(rune));
}

/** Renders a Go string: valid UTF-8 as is, each invalid byte as U+FFFD. */
export function fromBytes(bytes: string): string {
  // Fast path: pure ASCII.
  if (!/[\x80-\xff]/.test(bytes)) return bytes;
  const buffer = Buffer.from(bytes, 'latin1');
  if (isUtf8(buffer)) return buffer.toString('utf8');
  const runes = runesOf(bytes);
  let out = '';
  for (let i = 0; i < runes.length; i += 4096) out += String.fromCodePoint(...runes.slice(i, i + 4096));
  return out;
}
