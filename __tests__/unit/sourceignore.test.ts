import { describe, expect, it } from 'vitest';
import {
  globMatch,
  isIgnored,
  parsePattern,
  readPatterns,
  sourcePatterns,
  type IgnorePattern,
} from '../../src/kustomize/sourceignore.js';

/** Patterns as `.sourceignore` files: `{ 'dir/sub': 'text' }`, '' for the root, in Flux's load order. */
function load(files: Record<string, string>): IgnorePattern[] {
  return sourcePatterns(
    Object.entries(files).flatMap(([dir, text]) => readPatterns(text, dir === '' ? [] : dir.split('/'))),
  );
}

/**
 * Each row was also run through Flux's own matcher (fluxcd/pkg/sourceignore v0.18.0 with
 * source-controller's SourceIgnoreFilter), which gave the same answers.
 */
export const CASES: { why: string; files: Record<string, string>; path: string; dir?: boolean; ignored: boolean }[] = [
  // Defaults, without any .sourceignore.
  { why: 'default: .git/ below the root', files: {}, path: '.git/config', ignored: true },
  { why: 'default: .github/ anywhere', files: {}, path: 'apps/.github/workflows/ci.yaml', ignored: true },
  { why: 'default: *.png anywhere', files: {}, path: 'docs/logo.png', ignored: true },
  { why: 'default: *.tar.gz', files: {}, path: 'a.tar.gz', ignored: true },
  { why: 'default: **/.sops.yaml at any depth', files: {}, path: 'clusters/prod/.sops.yaml', ignored: true },
  { why: 'default: cloudbuild.yaml', files: {}, path: 'cloudbuild.yaml', ignored: true },
  { why: 'default: a manifest is kept', files: {}, path: 'apps/web.yaml', ignored: false },
  { why: 'default: .gitignore', files: {}, path: 'apps/.gitignore', ignored: true },
  // With a .sourceignore, only the VCS defaults remain.
  { why: 'with a .sourceignore, *.png is no longer excluded', files: { '': 'x\n' }, path: 'logo.png', ignored: false },
  {
    why: 'with a .sourceignore, .github/ is no longer excluded',
    files: { '': 'x\n' },
    path: '.github/workflows/ci.yaml',
    ignored: false,
  },
  { why: 'with a .sourceignore, .git/ still is', files: { '': 'x\n' }, path: '.git/HEAD', ignored: true },
  { why: 'a comment line is not a pattern', files: { '': '# a.yaml\n' }, path: 'a.yaml', ignored: false },
  // Plain names match any component.
  { why: 'a name matches at any depth', files: { '': 'values.yaml\n' }, path: 'apps/web/values.yaml', ignored: true },
  { why: 'a name matches a directory and below', files: { '': 'charts\n' }, path: 'apps/charts/x.yaml', ignored: true },
  { why: 'a glob name', files: { '': '*.txt\n' }, path: 'a/b/notes.txt', ignored: true },
  { why: 'a glob name, no match', files: { '': '*.txt\n' }, path: 'a/b/notes.yaml', ignored: false },
  { why: '? matches one character', files: { '': 'v?.yaml\n' }, path: 'v1.yaml', ignored: true },
  { why: '? matches exactly one', files: { '': 'v?.yaml\n' }, path: 'v10.yaml', ignored: false },
  { why: 'a class', files: { '': 'v[0-9].yaml\n' }, path: 'v7.yaml', ignored: true },
  { why: 'a negated class', files: { '': 'v[^0-9].yaml\n' }, path: 'v7.yaml', ignored: false },
  { why: 'a malformed class matches nothing', files: { '': 'v[.yaml\n' }, path: 'v[.yaml', ignored: false },
  { why: 'an escaped star is literal', files: { '': 'a\\*.yaml\n' }, path: 'ab.yaml', ignored: false },
  { why: 'trailing spaces are dropped', files: { '': 'a.yaml   \n' }, path: 'a.yaml', ignored: true },
  { why: 'CRLF line ends', files: { '': 'a.yaml\r\nb.yaml\r\n' }, path: 'b.yaml', ignored: true },
  // Directory-only patterns.
  { why: 'dir/ matches a directory', files: { '': 'tmp/\n' }, path: 'tmp', dir: true, ignored: true },
  { why: 'dir/ does not match a file of that name', files: { '': 'tmp/\n' }, path: 'a/tmp', ignored: false },
  { why: 'dir/ matches what lies below it', files: { '': 'tmp/\n' }, path: 'a/tmp/x.yaml', ignored: true },
  // Anchored patterns.
  { why: '/name is anchored at the root', files: { '': '/a.yaml\n' }, path: 'a.yaml', ignored: true },
  { why: '/name does not match deeper', files: { '': '/a.yaml\n' }, path: 'sub/a.yaml', ignored: false },
  { why: 'a/b is anchored', files: { '': 'apps/values.yaml\n' }, path: 'apps/values.yaml', ignored: true },
  {
    why: 'a/b is anchored, not deeper',
    files: { '': 'apps/values.yaml\n' },
    path: 'x/apps/values.yaml',
    ignored: false,
  },
  { why: '/dir matches below it', files: { '': '/deploy\n' }, path: 'deploy/a/b.yaml', ignored: true },
  { why: '/dir/ does not match a file', files: { '': '/deploy/\n' }, path: 'deploy', ignored: false },
  // **.
  { why: '**/name at any depth', files: { '': '**/values.yaml\n' }, path: 'a/b/c/values.yaml', ignored: true },
  { why: '**/name at the top', files: { '': '**/values.yaml\n' }, path: 'values.yaml', ignored: true },
  { why: 'a/**/b', files: { '': 'apps/**/secret.yaml\n' }, path: 'apps/x/y/secret.yaml', ignored: true },
  { why: 'a/**/b, other top', files: { '': 'apps/**/secret.yaml\n' }, path: 'infra/x/secret.yaml', ignored: false },
  { why: 'a/** matches below a', files: { '': 'apps/**\n' }, path: 'apps/x.yaml', ignored: true },
  { why: 'a/**/*.md', files: { '': '/deploy/**/*.md\n' }, path: 'deploy/a/README.md', ignored: true },
  { why: '** inside a component matches nothing', files: { '': 'a/b**/c\n' }, path: 'a/bx/c', ignored: false },
  // Negation: the last matching pattern decides.
  { why: 'negation re-includes', files: { '': '*.yaml\n!keep.yaml\n' }, path: 'keep.yaml', ignored: false },
  { why: 'negation, other files stay out', files: { '': '*.yaml\n!keep.yaml\n' }, path: 'drop.yaml', ignored: true },
  {
    why: 'a later pattern wins over a negation',
    files: { '': '!keep.yaml\n*.yaml\n' },
    path: 'keep.yaml',
    ignored: true,
  },
  {
    why: 'unlike git, a file under an excluded directory can be re-included',
    files: { '': 'deploy/\n!deploy/keep.yaml\n' },
    path: 'deploy/keep.yaml',
    ignored: false,
  },
  {
    why: 'exclude all, include one directory (the docs example)',
    files: { '': '/*\n!/deploy\n/deploy/**/*.md\n' },
    path: 'deploy/apps/web.yaml',
    ignored: false,
  },
  {
    why: 'exclude all, include one directory: others out',
    files: { '': '/*\n!/deploy\n/deploy/**/*.md\n' },
    path: 'other/web.yaml',
    ignored: true,
  },
  { why: 'a negation overrules a default', files: { '': '!*.png\n' }, path: 'logo.png', ignored: false },
  // Nested .sourceignore files are scoped to their directory.
  {
    why: 'nested: applies below its directory',
    files: { apps: 'values.yaml\n' },
    path: 'apps/a/values.yaml',
    ignored: true,
  },
  { why: 'nested: not elsewhere', files: { apps: 'values.yaml\n' }, path: 'infra/values.yaml', ignored: false },
  {
    why: 'nested: anchored at its directory',
    files: { apps: '/values.yaml\n' },
    path: 'apps/values.yaml',
    ignored: true,
  },
  {
    why: 'nested: anchored, not deeper',
    files: { apps: '/values.yaml\n' },
    path: 'apps/x/values.yaml',
    ignored: false,
  },
  {
    why: 'nested: a deeper file re-includes what the root excluded',
    files: { '': '*.yaml\n', apps: '!keep.yaml\n' },
    path: 'apps/keep.yaml',
    ignored: false,
  },
  { why: 'nested: never matches its own directory', files: { apps: '*\n' }, path: 'apps', dir: true, ignored: false },
];

describe('isIgnored, as source-controller archives a tree', () => {
  it.each(CASES)('$why', ({ files, path, dir, ignored }) => {
    expect(isIgnored(load(files), path.split('/'), dir ?? false)).toBe(ignored);
  });
});

describe('globMatch (Go filepath.Match on one component)', () => {
  it.each([
    ['*', 'anything', true],
    ['*.yaml', '.yaml', true],
    ['a?c', 'abc', true],
    ['a?c', 'ac', false],
    ['[a-c]x', 'bx', true],
    ['[^a-c]x', 'bx', false],
    ['[\\]]', ']', true],
    ['[]]', ']', false],
    ['[a-', 'a', false],
    ['x\\', 'x', false],
    ['é?', 'éü', true],
    ['[z-a]', 'q', false],
  ])('%s against %s: %s', (glob, name, want) => {
    expect(globMatch(glob, name)).toBe(want);
  });
});

describe('parsePattern', () => {
  it.each([
    { line: '!a/b/', want: { parts: ['a', 'b'], inclusion: true, dirOnly: true, anchored: true } },
    { line: 'name', want: { parts: ['name'], inclusion: false, dirOnly: false, anchored: false } },
    { line: '/name', want: { parts: ['', 'name'], inclusion: false, dirOnly: false, anchored: true } },
    { line: 'x\\ ', want: { parts: ['x\\ '], inclusion: false, dirOnly: false, anchored: false } },
  ])('$line', ({ line, want }) => {
    expect(parsePattern(line, ['d'])).toEqual({ domain: ['d'], ...want });
  });
});

// A `.sourceignore` comes from the tree: its globs are matched in linear time. Under a backtracking
// RegExp each row with 30 stars and 5,000 characters takes minutes, so a hang fails by the timeout.
describe('globs that backtrack, matched in linear time', () => {
  const stars = `${'*a'.repeat(30)}*b`;
  const long = 'a'.repeat(5000);
  it.each([
    ['30 stars, no b', stars, long, false],
    ['30 stars, b at the end', stars, `${long}b`, true],
    ['classes and stars', `${'[a-z]*'.repeat(30)}!`, long, false],
    ['a reversed range matches nothing', '[z-a]', 'q', false],
    ['a negated reversed range matches any character', '[^z-a]', 'q', true],
    ['a negated reversed range is still one character', '[^z-a]', 'qq', false],
    ['? is one rune, even outside the BMP', 'x?', 'x😀', true],
  ])('%s', (_, glob, name, want) => {
    expect(globMatch(glob, name)).toBe(want);
  });

  it.each([
    ['a name pattern', `${stars}\n`, ['apps', long], false],
    ['an anchored pattern', `apps/**/${stars}\n`, ['apps', 'x', `${long}b`], true],
  ])('isIgnored with %s', (_, text, path, want) => {
    expect(isIgnored(readPatterns(text, []), path, false)).toBe(want);
  });
});

describe('long lines are read in linear time', () => {
  // `/ +$/` over 200,000 spaces followed by a letter is quadratic: minutes; the row fails by the timeout.
  it.each([
    ['spaces inside a pattern are kept', `a${' '.repeat(200_000)}b`, [`a${' '.repeat(200_000)}b`]],
    ['trailing spaces are dropped', `a${' '.repeat(200_000)}`, ['a']],
  ])('%s', (_, line, parts) => {
    expect(parsePattern(line, []).parts).toEqual(parts);
  });
});
