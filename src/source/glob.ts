/**
 * The two glob dialects an ArtifactGenerator's copy operations use, as source-watcher uses them:
 * Go's path.Match / fs.Glob for `from` (`*` and `?` stay within one path segment, `**` is just `*`,
 * `[...]` classes negated with `^`), and doublestar for `exclude` and the Extract strategy's `from`
 * (`**` as a whole segment spans any number of directories, `{a,b}` alternatives, `[!...]` too).
 * Pure: the caller lists the tree.
 *
 * The patterns come from the tree a pull request controls, so they are matched in linear time: each
 * is translated to an RE2 expression and run by re2js (no backtracking), never by a JS RegExp, where
 * `*a*a*a…b` against a long name would take minutes.
 */
import { RE2JS } from 're2js';
import { byBytes } from '../util/order.js';
import { UserError } from '../util/user-error.js';

/** Thrown for a pattern Go (or doublestar) would refuse as malformed. */
export class BadPattern extends UserError {}

const escapeRe = (c: string) => c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** A character class starting at `pattern[i]` (just after `[`): its regex and where it ends. */
function charClass(pattern: string, i: number, negations: string): { re: string; end: number } {
  let j = i;
  let negate = false;
  if (j < pattern.length && negations.includes(pattern[j]!)) {
    negate = true;
    j++;
  }
  let body = '';
  let first = true;
  while (j < pattern.length && (pattern[j] !== ']' || first)) {
    first = false;
    let c = pattern[j]!;
    if (c === '\\') {
      j++;
      if (j >= pattern.length) throw new BadPattern(`unterminated escape in ${JSON.stringify(pattern)}`);
      c = pattern[j]!;
    }
    if (c === '/') throw new BadPattern(`a class cannot hold "/" in ${JSON.stringify(pattern)}`);
    body += escapeRe(c);
    if (pattern[j + 1] === '-' && pattern[j + 2] !== undefined && pattern[j + 2] !== ']') {
      let hi = pattern[j + 2]!;
      j += 2;
      if (hi === '\\') {
        j++;
        if (j >= pattern.length) throw new BadPattern(`unterminated escape in ${JSON.stringify(pattern)}`);
        hi = pattern[j]!;
      }
      if (hi < c) throw new BadPattern(`bad range ${c}-${hi} in ${JSON.stringify(pattern)}`);
      body += `-${escapeRe(hi)}`;
    }
    j++;
  }
  if (j >= pattern.length) throw new BadPattern(`unterminated [ in ${JSON.stringify(pattern)}`);
  if (body === '') throw new BadPattern(`empty class in ${JSON.stringify(pattern)}`);
  return { re: negate ? `[^/${body}]` : `[${body}]`, end: j };
}

/**
 * A glob as the body of a regular expression: `*` and `?` within one path segment, `[...]` classes
 * (negated by any of `negations`), `\\` escapes; with `braces`, doublestar's `{a,b}` alternatives.
 */
function globBody(pattern: string, negations: string, braces: boolean): string {
  let re = '';
  let depth = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '[') {
      const cls = charClass(pattern, i + 1, negations);
      re += cls.re;
      i = cls.end;
    } else if (braces && c === '{') {
      depth++;
      re += '(?:';
    } else if (braces && c === '}' && depth > 0) {
      depth--;
      re += ')';
    } else if (braces && c === ',' && depth > 0) re += '|';
    else if (c === '\\') {
      i++;
      if (i >= pattern.length) throw new BadPattern(`trailing \\ in ${JSON.stringify(pattern)}`);
      re += escapeRe(pattern[i]!);
    } else re += escapeRe(c);
  }
  if (depth > 0) throw new BadPattern(`unterminated { in ${JSON.stringify(pattern)}`);
  return re;
}

const compiled = new Map<string, RE2JS>();

/** The RE2 expression `source` compiled once (a bounded cache); a refusal of RE2 is a BadPattern. */
function re2(source: string, pattern: string): RE2JS {
  let re = compiled.get(source);
  if (re === undefined) {
    try {
      re = RE2JS.compile(source, RE2JS.DOTALL);
    } catch (err) {
      throw new BadPattern(`${JSON.stringify(pattern)} cannot be matched: ${(err as Error).message}`, { cause: err });
    }
    if (compiled.size >= 10_000) compiled.clear();
    compiled.set(source, re);
  }
  return re;
}

/** Go's path.Match as a linear-time matcher (`*` never crosses `/`); throws BadPattern when malformed. */
export function goPattern(pattern: string): RE2JS {
  return re2(`^${globBody(pattern, '^', false)}$`, pattern);
}

/** Go's path.Match(pattern, name). */
export function goMatch(pattern: string, name: string): boolean {
  return goPattern(pattern).test(name);
}

/** Whether a pattern holds glob metacharacters (source-watcher's test: any of `*?[]`). */
export const hasGlob = (p: string): boolean => /[*?[\]]/.test(p);

/** One segment of a doublestar pattern as a regex (`*`, `?`, classes with `!` or `^`, `{a,b}`). */
function doublestarSegment(seg: string): string {
  return globBody(seg, '!^', true);
}

/**
 * A doublestar pattern as a linear-time matcher: a `**` segment spans zero or more directories;
 * throws BadPattern when malformed.
 */
export function doublestarPattern(pattern: string): RE2JS {
  const segs = pattern.split('/');
  let re = '';
  segs.forEach((seg, i) => {
    const last = i === segs.length - 1;
    if (seg === '**') {
      // Zero or more whole segments, with the slash that follows them (or ends the path).
      re += last ? (i === 0 ? '.*' : '(?:/.*)?') : i === 0 ? '(?:[^/]*/)*' : '(?:/[^/]*)*/';
      return;
    }
    const prevStar = i > 0 && segs[i - 1] === '**';
    if (i > 0 && !prevStar) re += '/';
    re += doublestarSegment(seg);
  });
  return re2(`^${re}$`, pattern);
}

/** doublestar.Match(pattern, path). */
export function doublestarMatch(pattern: string, path: string): boolean {
  return doublestarPattern(pattern).test(path);
}

/** An entry of a listed tree: its slash-separated path from the root and whether it is a directory. */
export interface Listed {
  path: string;
  dir: boolean;
}

/**
 * Go's fs.Glob over a listed tree: a pattern without metacharacters names the entry itself when it
 * exists; otherwise each segment is matched against the entries of the directories matched so far
 * (names in byte order, `**` no different from `*`).
 */
export function goGlob(entries: readonly Listed[], pattern: string): string[] {
  goPattern(pattern); // refuses a malformed pattern, as fs.Glob does
  let end = pattern.length;
  while (end > 0 && pattern[end - 1] === '/') end--; // not /\/+$/: quadratic over a long run of slashes
  const clean = pattern.slice(0, end);
  const byPath = new Map(entries.map((e) => [e.path, e]));
  if (!hasGlob(clean)) return byPath.has(clean) ? [clean] : [];
  const children = new Map<string, string[]>();
  for (const e of entries) {
    const cut = e.path.lastIndexOf('/');
    const parent = cut < 0 ? '' : e.path.slice(0, cut);
    const list = children.get(parent) ?? [];
    list.push(e.path.slice(cut + 1));
    children.set(parent, list);
  }
  for (const list of children.values()) list.sort(byBytes);
  let dirs = [''];
  const segs = clean.split('/');
  segs.forEach((seg, i) => {
    const re = goPattern(seg);
    const next: string[] = [];
    for (const d of dirs) {
      if (d !== '' && byPath.get(d)?.dir !== true) continue;
      for (const name of children.get(d) ?? []) {
        if (!(hasGlob(seg) ? re.test(name) : name === seg)) continue;
        next.push(d === '' ? name : `${d}/${name}`);
      }
    }
    dirs = i === segs.length - 1 ? next : next.filter((p) => byPath.get(p)?.dir === true);
  });
  return dirs;
}
