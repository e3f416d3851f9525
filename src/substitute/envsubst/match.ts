/*
 * Glob matching of envsubst's fork of Go's path.Match (drone/envsubst's match.go), used by the trim operators
 * (`${v#p}` ...). Returns undefined for a malformed pattern, which is only detected when the matcher reaches the
 * malformed part while there is still input to match.
 */

import { REPLACEMENT, decodeRune } from './utf8.js';

export function globMatch(pattern: string, name: string): boolean | undefined {
  let rest = pattern;
  let input = name;
  nextChunk: while (rest.length > 0) {
    const { star, chunk, after } = splitChunk(rest);
    rest = after;
    if (star && chunk === '') return true;
    const here = matchChunk(chunk, input);
    if (here.ok && (here.rest.length === 0 || rest.length > 0)) {
      input = here.rest;
      continue;
    }
    if (here.malformed) return undefined;
    if (star) {
      for (let skip = 1; skip <= input.length; skip++) {
        const there = matchChunk(chunk, input.slice(skip));
        if (there.ok) {
          if (rest.length === 0 && there.rest.length > 0) continue;
          input = there.rest;
          continue nextChunk;
        }
        if (there.malformed) return undefined;
      }
    }
    return false;
  }
  return input.length === 0;
}

/** Splits off leading stars and the following run of single-rune matchers. */
function splitChunk(pattern: string): { star: boolean; chunk: string; after: string } {
  let from = 0;
  while (pattern.charCodeAt(from) === 0x2a) from++;
  let inRange = false;
  let i = from;
  scan: for (; i < pattern.length; i++) {
    switch (pattern[i]) {
      case '\\':
        if (i + 1 < pattern.length) i++;
        break;
      case '[':
        inRange = true;
        break;
      case ']':
        inRange = false;
        break;
      case '*':
        if (!inRange) break scan;
    }
  }
  return { star: from > 0, chunk: pattern.slice(from, i), after: pattern.slice(i) };
}

interface ChunkResult {
  ok: boolean;
  rest: string;
  malformed: boolean;
}

const NO_MATCH: ChunkResult = { ok: false, rest: '', malformed: false };
const MALFORMED: ChunkResult = { ok: false, rest: '', malformed: true };

function matchChunk(chunk: string, input: string): ChunkResult {
  let c = chunk;
  let s = input;
  while (c.length > 0) {
    if (s.length === 0) return NO_MATCH;
    switch (c[0]) {
      case '[': {
        const [rune, width] = decodeRune(s, 0);
        s = s.slice(width);
        c = c.slice(1);
        const negated = c[0] === '^';
        if (negated) c = c.slice(1);
        let matched = false;
        for (let ranges = 0; ; ranges++) {
          if (c[0] === ']' && ranges > 0) {
            c = c.slice(1);
            break;
          }
          const lo = classRune(c);
          if (lo === undefined) return MALFORMED;
          let hiRune = lo.rune;
          c = lo.after;
          if (c[0] === '-') {
            const hi = classRune(c.slice(1));
            if (hi === undefined) return MALFORMED;
            hiRune = hi.rune;
            c = hi.after;
          }
          if (lo.rune <= rune && rune <= hiRune) matched = true;
        }
        if (matched === negated) return NO_MATCH;
        break;
      }
      case '?':
        s = s.slice(decodeRune(s, 0)[1]);
        c = c.slice(1);
        break;
      case '\\':
        c = c.slice(1);
        if (c.length === 0) return MALFORMED;
        if (c[0] !== s[0]) return NO_MATCH;
        s = s.slice(1);
        c = c.slice(1);
        break;
      default:
        if (c[0] !== s[0]) return NO_MATCH;
        s = s.slice(1);
        c = c.slice(1);
    }
  }
  return { ok: true, rest: s, malformed: false };
}

/** One (possibly escaped) rune of a character class; undefined when malformed. */
function classRune(chunk: string): { rune: number; after: string } | undefined {
  let c = chunk;
  if (c.length === 0 || c[0] === '-' || c[0] === ']') return undefined;
  if (c[0] === '\\') {
    c = c.slice(1);
    if (c.length === 0) return undefined;
  }
  const [rune, width] = decodeRune(c, 0);
  const after = c.slice(width);
  if ((rune === REPLACEMENT && width === 1) || after.length === 0) return undefined;
  return { rune, after };
}
