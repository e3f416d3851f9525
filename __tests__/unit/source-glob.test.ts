import { describe, expect, it } from 'vitest';
import { BadPattern, doublestarMatch, goGlob, goMatch, type Listed } from '../../src/source/glob.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

describe('goMatch (Go path.Match)', () => {
  it.each<[string, string, boolean]>([
    ['*.yaml', 'a.yaml', true],
    ['*.yaml', 'dir/a.yaml', false],
    ['*', '.hidden', true],
    ['**', 'a', true],
    ['**', 'a/b', false],
    ['a?c', 'abc', true],
    ['a?c', 'a/c', false],
    ['[abc].yaml', 'b.yaml', true],
    ['[^abc].yaml', 'b.yaml', false],
    ['[^abc].yaml', 'd.yaml', true],
    ['[a-c]x', 'bx', true],
    ['[a-c]x', 'dx', false],
    ['\\*.yaml', '*.yaml', true],
    ['\\*.yaml', 'a.yaml', false],
    ['a.b', 'axb', false],
    ['(x)|y', '(x)|y', true],
  ])('%s against %s: %s', (pattern, name, want) => {
    expect(goMatch(pattern, name)).toBe(want);
  });

  it.each(['[', '[a', 'a\\', '[]', '[z-a]'])('refuses %s', (pattern) => {
    expect(() => goMatch(pattern, 'x')).toThrow(BadPattern);
  });
});

describe('doublestarMatch', () => {
  it.each<[string, string, boolean]>([
    ['**', 'a/b/c', true],
    ['*.md', 'README.md', true],
    ['*.md', 'docs/README.md', false],
    ['**/*.md', 'README.md', true],
    ['**/*.md', 'docs/a/README.md', true],
    ['**/testdata/**', 'x/testdata/y.yaml', true],
    ['**/testdata/**', 'testdata/y.yaml', true],
    ['**/testdata/**', 'x/testdata', true],
    ['subdir/**', 'subdir/a/b', true],
    ['subdir/**', 'subdir', true],
    ['subdir/**', 'other/a', false],
    ['a/**/b', 'a/b', true],
    ['a/**/b', 'a/x/y/b', true],
    ['a/**/b', 'a/x/y/c', false],
    ['*.{yaml,yml}', 'a.yml', true],
    ['*.{yaml,yml}', 'a.json', false],
    ['[!a]*', 'b.yaml', true],
    ['[!a]*', 'a.yaml', false],
  ])('%s against %s: %s', (pattern, path, want) => {
    expect(doublestarMatch(pattern, path)).toBe(want);
  });
});

const tree: Listed[] = [
  { path: 'apps', dir: true },
  { path: 'apps/base', dir: true },
  { path: 'apps/base/podinfo', dir: true },
  { path: 'apps/base/podinfo/release.yaml', dir: false },
  { path: 'apps/production', dir: true },
  { path: 'apps/production/values.yaml', dir: false },
  { path: 'apps/README.md', dir: false },
  { path: 'top.yaml', dir: false },
  { path: '.hidden.yaml', dir: false },
];

describe('goGlob (Go fs.Glob)', () => {
  it.each<[string, string[]]>([
    // `**` is `*` in Go: one level, directories included, in byte order (upper case first).
    ['apps/**', ['apps/README.md', 'apps/base', 'apps/production']],
    ['apps/*/*.yaml', ['apps/production/values.yaml']],
    ['apps/**/*.yaml', ['apps/production/values.yaml']],
    ['*.yaml', ['.hidden.yaml', 'top.yaml']],
    ['apps/base', ['apps/base']],
    ['apps/base/', ['apps/base']],
    ['nowhere/*', []],
    ['top.yaml/*', []],
    ['missing.yaml', []],
  ])('%s', (pattern, want) => {
    expect(goGlob(tree, pattern)).toEqual(want);
  });
});

// A tree's patterns are matched in linear time: under a backtracking RegExp each of these takes
// minutes (30 stars against 5,000 characters), so a hang here fails the test by its timeout.
describe('patterns that backtrack are matched in linear time', () => {
  const stars = `${'*a'.repeat(30)}*b`;
  const long = 'a'.repeat(5000);
  const braces = `${'{a,a}'.repeat(30)}b`;
  it.each<[string, (p: string, n: string) => boolean, string, string, boolean]>([
    ['goMatch, no b', goMatch, stars, long, false],
    ['goMatch, b at the end', goMatch, stars, `${long}b`, true],
    ['goMatch, too few a', goMatch, stars, `${'a'.repeat(29)}b`, false],
    ['goMatch, classes', goMatch, `${'[a-z]*'.repeat(30)}!`, long, false],
    ['doublestarMatch, no b', doublestarMatch, stars, long, false],
    ['doublestarMatch, b at the end', doublestarMatch, stars, `${long}b`, true],
    ['doublestarMatch, below **', doublestarMatch, `**/${stars}`, `x/y/${long}`, false],
    ['doublestarMatch, alternatives', doublestarMatch, braces, long, false],
    ['doublestarMatch, alternatives that match', doublestarMatch, braces, `${'a'.repeat(30)}b`, true],
    ['doublestarMatch, many **', doublestarMatch, `${'**/a/'.repeat(20)}b`, `${'a/'.repeat(2500)}c`, false],
  ])('%s', (_, match, pattern, name, want) => {
    expect(match(pattern, name)).toBe(want);
  });

  it('goGlob over a directory holding a long name', () => {
    const entries: Listed[] = [
      { path: 'd', dir: true },
      { path: `d/${long}`, dir: false },
      { path: `d/${long}b`, dir: false },
    ];
    expect(goGlob(entries, `d/${stars}`)).toEqual([`d/${long}b`]);
  });

  it('a pattern with a long run of slashes inside (`/\\/+$/` would be quadratic)', () => {
    expect(goGlob(tree, `apps${'/'.repeat(100_000)}x/`)).toEqual([]);
    expect(goGlob(tree, `apps/base${'/'.repeat(100_000)}`)).toEqual(['apps/base']);
  });

  it('a rune is one character for ? (as Go matches runes)', () => {
    expect(goMatch('?.yaml', '😀.yaml')).toBe(true);
    expect(doublestarMatch('x/?', 'x/é')).toBe(true);
  });
});
