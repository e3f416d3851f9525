/**
 * The tag a GitRepository's spec.ref.semver chooses, as source-controller chooses it with
 * Masterminds/semver v3: every tag that parses as a version (leniently: `v1.2.3`, `1.2`, `1`) and
 * satisfies the constraint, the highest wins. Constraints as Masterminds reads them: `||` between
 * alternatives, commas or spaces between the parts of one, hyphen ranges (`1.2 - 1.4.5`), the
 * operators `=`, `!=`, `>`, `<`, `>=` (`=>`), `<=` (`=<`), `~` (`~>`) and `^`, wildcards `x`, `X`, `*`
 * and missing parts (`1.2` is `1.2.x` after an operator that is not a comparison). A version with a
 * prerelease matches only a constraint part that has one. Pure.
 */

export interface Version {
  major: number;
  minor: number;
  patch: number;
  prerelease: string;
}

const VERSION =
  /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;

/** A tag as Masterminds' NewVersion reads it, or undefined. */
export function parseVersion(text: string): Version | undefined {
  const m = VERSION.exec(text);
  if (!m) return undefined;
  const n = (s: string | undefined) => (s === undefined ? 0 : Number(s));
  const v = { major: n(m[1]), minor: n(m[2]), patch: n(m[3]), prerelease: m[4] ?? '' };
  return [v.major, v.minor, v.patch].every(Number.isSafeInteger) ? v : undefined;
}

function comparePrerelease(a: string, b: string): number {
  if (a === b) return 0;
  if (a === '') return 1;
  if (b === '') return -1;
  const x = a.split('.');
  const y = b.split('.');
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    if (x[i] === undefined) return -1;
    if (y[i] === undefined) return 1;
    const xn = /^\d+$/.test(x[i]!);
    const yn = /^\d+$/.test(y[i]!);
    if (xn && yn) {
      const d = Number(x[i]) - Number(y[i]);
      if (d !== 0) return Math.sign(d);
    } else if (xn !== yn) {
      return xn ? -1 : 1;
    } else if (x[i] !== y[i]) {
      return x[i]! < y[i]! ? -1 : 1;
    }
  }
  return 0;
}

/** Semantic version order (build metadata ignored). */
export function compareVersions(a: Version, b: Version): number {
  return (
    Math.sign(a.major - b.major) ||
    Math.sign(a.minor - b.minor) ||
    Math.sign(a.patch - b.patch) ||
    comparePrerelease(a.prerelease, b.prerelease)
  );
}

/** One part of a constraint: an operator and a version whose trailing parts may be wildcards. */
interface Part {
  op: string;
  v: Version;
  /** Which parts were left out or wildcards: none, patch, minor (and patch), or all. */
  dirty: 'none' | 'patch' | 'minor' | 'all';
}

const PART =
  /^(=|!=|>=|=>|<=|=<|>|<|~>|~|\^)?\s*v?(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-.]+)?$/;
const isX = (s: string | undefined) => s === 'x' || s === 'X' || s === '*';

function parsePart(text: string): Part {
  const m = PART.exec(text);
  if (!m) throw new Error(`"${text}" is not a version constraint`);
  const [, op = '', major, minor, patch, prerelease = ''] = m;
  const dirty = isX(major)
    ? 'all'
    : minor === undefined || isX(minor)
      ? 'minor'
      : patch === undefined || isX(patch)
        ? 'patch'
        : 'none';
  const num = (s: string | undefined) => (s === undefined || isX(s) ? 0 : Number(s));
  return {
    op: op === '=>' ? '>=' : op === '=<' ? '<=' : op === '~>' ? '~' : op,
    v: { major: num(major), minor: num(minor), patch: num(patch), prerelease },
    dirty,
  };
}

/** Same major (and minor, unless only the major was given): the range a dirty `=` or a `~` allows. */
function withinTilde(v: Version, c: Part): boolean {
  if (c.dirty === 'all') return true;
  // ~0.0.0 accepts every version (>= 0.0.0).
  if (c.dirty === 'none' && c.v.major === 0 && c.v.minor === 0 && c.v.patch === 0) return true;
  if (v.major !== c.v.major) return false;
  return c.dirty === 'minor' || v.minor === c.v.minor;
}

function matches(v: Version, c: Part): boolean {
  // A prerelease is only matched by a part that has one (Masterminds v3).
  if (v.prerelease !== '' && c.v.prerelease === '') return false;
  const cmp = compareVersions(v, c.v);
  switch (c.op) {
    case '':
    case '=':
      return c.dirty === 'none' ? cmp === 0 : cmp >= 0 && withinTilde(v, c);
    case '!=':
      return c.dirty === 'none' ? cmp !== 0 : !(cmp >= 0 && withinTilde(v, c));
    case '>':
      if (c.dirty === 'all') return false;
      if (c.dirty === 'minor') return v.major > c.v.major;
      if (c.dirty === 'patch') return v.major > c.v.major || (v.major === c.v.major && v.minor > c.v.minor);
      return cmp > 0;
    case '<':
      return c.dirty === 'all' ? false : cmp < 0;
    case '>=':
      return cmp >= 0;
    case '<=':
      if (c.dirty === 'all') return true;
      if (c.dirty === 'minor') return v.major <= c.v.major;
      if (c.dirty === 'patch') return v.major < c.v.major || (v.major === c.v.major && v.minor <= c.v.minor);
      return cmp <= 0;
    case '~':
      return cmp >= 0 && withinTilde(v, c);
    case '^': {
      if (cmp < 0) return false;
      if (c.dirty === 'all') return true;
      if (c.v.major > 0 || c.dirty === 'minor') return v.major === c.v.major;
      if (c.v.minor > 0 || c.dirty === 'patch') return v.major === 0 && v.minor === c.v.minor;
      return v.major === 0 && v.minor === 0 && v.patch === c.v.patch;
    }
    default:
      return false;
  }
}

export type Constraint = Part[][];

/**
 * Hyphen ranges rewritten: `1.2 - 1.4.5` is `>=1.2,<=1.4.5`. Word by word, not with a regular
 * expression, so that a long range from the tree is read in linear time.
 */
export function hyphenRanges(group: string): string {
  const words = group.split(/\s+/);
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    if (words[i + 1] === '-' && words[i + 2] !== undefined && words[i] !== '' && words[i + 2] !== '') {
      out.push(`>=${words[i]},<=${words[i + 2]}`);
      i += 2;
    } else out.push(words[i]!);
  }
  return out.join(' ');
}

/** A Masterminds constraint; throws naming the part it cannot read. */
export function parseConstraint(text: string): Constraint {
  const groups = text.split('||').map((g) => g.trim());
  if (groups.some((g) => g === '')) throw new Error(`"${text}" has an empty alternative`);
  return groups.map((group) => {
    const ranged = hyphenRanges(group);
    // Operators may be followed by spaces: `>= 1.2`.
    const joined = ranged.replace(/(!=|>=|=>|<=|=<|~>|[=<>~^])\s+/g, '$1');
    return joined
      .split(/[\s,]+/)
      .filter((p) => p !== '')
      .map(parsePart);
  });
}

export function satisfies(v: Version, constraint: Constraint): boolean {
  return constraint.some((group) => group.every((part) => matches(v, part)));
}

/** The tag with the highest version that satisfies `range`, or undefined. Throws on a bad range. */
export function pickTag(tags: readonly string[], range: string): string | undefined {
  const constraint = parseConstraint(range);
  let best: { tag: string; v: Version } | undefined;
  for (const tag of tags) {
    const v = parseVersion(tag);
    if (v === undefined || !satisfies(v, constraint)) continue;
    if (best === undefined || compareVersions(v, best.v) > 0) best = { tag, v };
  }
  return best?.tag;
}
