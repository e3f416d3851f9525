import { describe, expect, it } from 'vitest';
import { BadPattern, doublestarMatch, goGlob, goMatch, type Listed } from '../../src/source/glob.js';

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
