/**
 * `.sourceignore` as Flux's source-controller applies it when it archives a Git repository
 * (fluxcd/pkg/sourceignore and its gitignore matcher): gitignore-style patterns, each scoped to the
 * directory of the `.sourceignore` file it comes from, matched against every path of the tree; the
 * last pattern that matches decides (`!` re-includes), and unlike git a file can be re-included
 * under an excluded directory. Without any `.sourceignore` pattern, Flux's default exclusions
 * apply; with one, only the VCS ones (source-controller drops the others then). Pure: the caller
 * reads the files. The patterns come from the tree, so each is matched in linear time (translated to
 * an RE2 expression and run by re2js, never by a backtracking JS RegExp).
 */
import { RE2JS } from 're2js';

/** The name of the ignore file, at the root or in any directory. */
export const SOURCEIGNORE_FILE = '.sourceignore';

/** Always excluded (source-controller's ExcludeVCS). */
export const VCS_PATTERNS = ['.git/', '.gitignore', '.gitmodules', '.gitattributes'] as const;

/** Excluded when the tree has no `.sourceignore` pattern (ExcludeExt, ExcludeCI, ExcludeExtra). */
export const DEFAULT_PATTERNS = [
  '*.jpg',
  '*.jpeg',
  '*.gif',
  '*.png',
  '*.wmv',
  '*.flv',
  '*.tar.gz',
  '*.zip',
  '.github/',
  '.circleci/',
  '.travis.yml',
  '.gitlab-ci.yml',
  'appveyor.yml',
  '.drone.yml',
  'cloudbuild.yaml',
  'codeship-services.yml',
  'codeship-steps.yml',
  '**/.goreleaser.yml',
  '**/.sops.yaml',
  '**/.flux.yaml',
] as const;

export interface IgnorePattern {
  /** Path components of the directory the pattern applies below (that of its `.sourceignore`). */
  domain: readonly string[];
  /** The pattern split at `/`, after `!` and a trailing `/` are removed. */
  parts: readonly string[];
  /** `!pattern`: a match re-includes. */
  inclusion: boolean;
  /** `pattern/`: matches directories only (and so everything below them). */
  dirOnly: boolean;
  /** The pattern holds a `/`: matched from the domain on, component by component; else against any one component. */
  anchored: boolean;
}

/** `text` without the `c` characters that end it (a loop: `/ +$/` is quadratic over a long run of spaces). */
function trimEnd(text: string, c: string): string {
  let end = text.length;
  while (end > 0 && text[end - 1] === c) end--;
  return text.slice(0, end);
}

/** One line of a `.sourceignore` (not a comment or blank line) as a pattern scoped to `domain`. */
export function parsePattern(line: string, domain: readonly string[]): IgnorePattern {
  let p = line;
  let inclusion = false;
  if (p.startsWith('!')) {
    inclusion = true;
    p = p.slice(1);
  }
  // Trailing spaces are dropped unless the last one is escaped.
  if (!p.endsWith('\\ ')) p = trimEnd(p, ' ');
  let dirOnly = false;
  if (p.endsWith('/')) {
    dirOnly = true;
    p = p.slice(0, -1);
  }
  return { domain: [...domain], parts: p.split('/'), inclusion, dirOnly, anchored: p.includes('/') };
}

/** The patterns of a `.sourceignore` file's text: lines that are neither blank nor start with `#`. */
export function readPatterns(text: string, domain: readonly string[]): IgnorePattern[] {
  return text
    .split('\n')
    .map((l) => l.replace(/\r$/, ''))
    .filter((l) => !l.startsWith('#') && l.trim() !== '')
    .map((l) => parsePattern(l, domain));
}

type Result = 'exclude' | 'include' | undefined;

/** How one pattern judges `path` (components from the root); undefined when it does not match. */
export function matchPattern(p: IgnorePattern, path: readonly string[], isDir: boolean): Result {
  if (path.length <= p.domain.length) return undefined;
  if (p.domain.some((d, i) => path[i] !== d)) return undefined;
  const rest = path.slice(p.domain.length);
  const matched = p.anchored ? anchoredMatch(p, rest, isDir) : nameMatch(p, rest, isDir);
  if (!matched) return undefined;
  return p.inclusion ? 'include' : 'exclude';
}

/** A pattern without `/`: some component matches it (for a directory-only pattern, a directory). */
function nameMatch(p: IgnorePattern, path: readonly string[], isDir: boolean): boolean {
  const glob = p.parts[0] ?? '';
  for (const [i, name] of path.entries()) {
    if (!globMatch(glob, name)) continue;
    return !(p.dirOnly && !isDir && i === path.length - 1);
  }
  return false;
}

/**
 * A pattern with `/`: its components match the path's leading ones in turn (`**` matches any
 * number of them); what follows the pattern's end lies below the match and is matched too.
 */
function anchoredMatch(p: IgnorePattern, path: readonly string[], isDir: boolean): boolean {
  let rest = path;
  let matched = false;
  let traverse = false;
  for (const [i, part] of p.parts.entries()) {
    if (part === '') {
      traverse = false;
      continue;
    }
    if (part === '**') {
      if (i === p.parts.length - 1) break;
      traverse = true;
      continue;
    }
    if (part.includes('**')) return false;
    if (rest.length === 0) return false;
    if (traverse) {
      traverse = false;
      matched = false;
      while (rest.length > 0) {
        const name = rest[0]!;
        rest = rest.slice(1);
        if (globMatch(part, name)) {
          matched = true;
          break;
        }
      }
    } else {
      if (!globMatch(part, rest[0]!)) return false;
      matched = true;
      rest = rest.slice(1);
    }
  }
  if (matched && p.dirOnly && !isDir && rest.length === 0) return false;
  return matched;
}

/** Matches `path` against patterns in order: the last one that matches decides. */
export function isIgnored(patterns: readonly IgnorePattern[], path: readonly string[], isDir: boolean): boolean {
  for (let i = patterns.length - 1; i >= 0; i--) {
    const r = matchPattern(patterns[i]!, path, isDir);
    if (r !== undefined) return r === 'exclude';
  }
  return false;
}

/**
 * The patterns source-controller matches a tree against, given the `.sourceignore` patterns found
 * in it (root first, then each directory depth first by name): VCS patterns and those, or, when
 * there are none, VCS and default patterns.
 */
export function sourcePatterns(found: readonly IgnorePattern[]): IgnorePattern[] {
  const vcs = VCS_PATTERNS.map((l) => parsePattern(l, []));
  if (found.length > 0) return [...vcs, ...found];
  return [...vcs, ...DEFAULT_PATTERNS.map((l) => parsePattern(l, []))];
}

const globCache = new Map<string, RE2JS | null>();

/** Go's path/filepath.Match for one path component; a malformed pattern matches nothing. */
export function globMatch(glob: string, name: string): boolean {
  let re = globCache.get(glob);
  if (re === undefined) {
    re = globToRegExp(glob);
    if (globCache.size < 10_000) globCache.set(glob, re);
  }
  return re !== null && re.test(name);
}

/** `*` any run of characters, `?` one, `[...]`/`[^...]` a class with ranges, `\` escapes; null when malformed. */
function globToRegExp(glob: string): RE2JS | null {
  const chars = Array.from(glob);
  let out = '';
  let i = 0;
  const esc = (c: string) => c.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
  const escIn = (c: string) => c.replace(/[\\\][^-]/g, '\\$&');
  // One character of a class: refuses an unescaped `-` or `]`, as Go does.
  const classChar = (): string | null => {
    let c = chars[i];
    if (c === undefined || c === '-' || c === ']') return null;
    if (c === '\\') {
      i++;
      c = chars[i];
      if (c === undefined) return null;
    }
    i++;
    return c;
  };
  while (i < chars.length) {
    const c = chars[i]!;
    if (c === '*') {
      out += '[^/]*';
      i++;
    } else if (c === '?') {
      out += '[^/]';
      i++;
    } else if (c === '\\') {
      const next = chars[i + 1];
      if (next === undefined) return null;
      out += esc(next);
      i += 2;
    } else if (c === '[') {
      i++;
      let cls = '';
      if (chars[i] === '^') {
        cls += '^';
        i++;
      }
      let ranges = 0;
      for (;;) {
        if (chars[i] === ']' && ranges > 0) {
          i++;
          break;
        }
        const lo = classChar();
        if (lo === null) return null;
        let hi = lo;
        if (chars[i] === '-') {
          i++;
          const h = classChar();
          if (h === null) return null;
          hi = h;
        }
        // A reversed range matches nothing (Go accepts it); leave it out of the class.
        if (lo.codePointAt(0)! <= hi.codePointAt(0)!) cls += lo === hi ? escIn(lo) : `${escIn(lo)}-${escIn(hi)}`;
        ranges++;
      }
      // A class of reversed ranges only: RE2 has no `[]`, so nothing (or, negated, any character).
      if (cls === '' || cls === '^') out += cls === '' ? '[^\\x00-\\x{10FFFF}]' : '[\\x00-\\x{10FFFF}]';
      else out += `[${cls}]`;
    } else {
      out += esc(c);
      i++;
    }
  }
  try {
    return RE2JS.compile(`^${out}$`);
  } catch {
    return null;
  }
}
