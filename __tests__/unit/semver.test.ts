// spec.ref.semver as source-controller reads it (Masterminds/semver v3): versions, constraints and
// the tag chosen, with the examples of Masterminds' documentation.
import { describe, expect, it } from 'vitest';
import {
  compareVersions,
  hyphenRanges,
  parseConstraint,
  parseVersion,
  pickTag,
  satisfies,
} from '../../src/source/semver.js';

describe('parseVersion', () => {
  it.each([
    ['1.2.3', { major: 1, minor: 2, patch: 3, prerelease: '' }],
    ['v1.2.3', { major: 1, minor: 2, patch: 3, prerelease: '' }],
    ['1.2', { major: 1, minor: 2, patch: 0, prerelease: '' }],
    ['v2', { major: 2, minor: 0, patch: 0, prerelease: '' }],
    ['1.2.3-rc.1+build.5', { major: 1, minor: 2, patch: 3, prerelease: 'rc.1' }],
  ])('%s', (text, v) => {
    expect(parseVersion(text)).toEqual(v);
  });

  it.each(['latest', 'release-1.2', '1.2.3.4', 'v', '1.x'])('not a version: %s', (text) => {
    expect(parseVersion(text)).toBeUndefined();
  });

  it('orders prereleases before the release, numerically where numeric', () => {
    const order = [
      '1.0.0-alpha',
      '1.0.0-alpha.1',
      '1.0.0-alpha.beta',
      '1.0.0-beta.2',
      '1.0.0-beta.11',
      '1.0.0-rc.1',
      '1.0.0',
    ];
    const sorted = [...order].reverse().sort((a, b) => compareVersions(parseVersion(a)!, parseVersion(b)!));
    expect(sorted).toEqual(order);
  });
});

describe('satisfies', () => {
  it.each<[string, string, boolean]>([
    ['1.2.3', '1.2.3', true],
    ['1.2.4', '=1.2.3', false],
    ['1.2.9', '1.2', true],
    ['1.3.0', '1.2', false],
    ['1.3.0', '1.2.x', false],
    ['1.9.0', '1.x', true],
    ['2.0.0', '*', true],
    ['1.2.4', '!=1.2.3', true],
    ['1.2.3', '!=1.2.3', false],
    ['1.2.5', '>1.2.3', true],
    ['1.2.9', '>1.2', false],
    ['1.3.0', '>1.2', true],
    ['1.9.0', '>1', false],
    ['1.1.9', '<1.2', true],
    ['1.2.0', '<1.2', false],
    ['1.2.9', '<=1.2', true],
    ['1.3.0', '<=1.2', false],
    ['1.2.3', '>= 1.2.3, < 2', true],
    ['2.0.0', '>= 1.2.3, < 2', false],
    ['1.5.0', '>=1.2 <3.0.0', true],
    ['1.5.0', '=>1.2 =<1.5', true],
    ['1.4.5', '1.2 - 1.4.5', true],
    ['1.4.6', '1.2 - 1.4.5', false],
    ['1.2.9', '~1.2.3', true],
    ['1.3.0', '~1.2.3', false],
    ['1.9.0', '~1', true],
    ['2.3.9', '~2.3', true],
    ['2.4.0', '~>2.3', false],
    ['1.9.9', '^1.2.3', true],
    ['2.0.0', '^1.2.3', false],
    ['0.2.9', '^0.2.3', true],
    ['0.3.0', '^0.2.3', false],
    ['0.0.3', '^0.0.3', true],
    ['0.0.4', '^0.0.3', false],
    ['0.0.9', '^0.0', true],
    ['0.1.0', '^0.0', false],
    ['0.9.0', '^0', true],
    ['3.0.0', '^1 || ^3', true],
    ['2.0.0', '^1 || ^3', false],
    ['1.3.0-rc.1', '>=1.2.0', false],
    ['1.3.0-rc.1', '>=1.3.0-0', true],
    ['5.0.0', '~0.0.0', true],
  ])('%s against %s', (version, constraint, expected) => {
    expect(satisfies(parseVersion(version)!, parseConstraint(constraint))).toBe(expected);
  });

  it.each(['', '>=', '1.2 ||', 'latest', '>= 1.2.3.4'])('refuses the constraint %j', (text) => {
    expect(() => parseConstraint(text)).toThrow();
  });
});

describe('pickTag', () => {
  const tags = ['v0.9.0', 'v1.0.0', 'v1.2.0', 'v1.10.1', 'v2.0.0-rc.1', 'latest', 'v1.3.0-beta'];
  it.each<[string, string | undefined]>([
    ['>=1.0.0 <2.0.0', 'v1.10.1'],
    ['1.2.x', 'v1.2.0'],
    ['~1.0', 'v1.0.0'],
    ['>=2.0.0-0', 'v2.0.0-rc.1'],
    ['>=3.0.0', undefined],
    ['*', 'v1.10.1'],
  ])('%s picks %s', (range, tag) => {
    expect(pickTag(tags, range)).toBe(tag);
  });
});

describe('hyphenRanges', () => {
  it.each([
    ['1.2 - 1.4.5', '>=1.2,<=1.4.5'],
    ['>=1.0 1.2 - 1.4 <2', '>=1.0 >=1.2,<=1.4 <2'],
    ['a - b - c', '>=a,<=b - c'],
    ['1.2 -1.4', '1.2 -1.4'],
    ['1.2\t-\t1.4', '>=1.2,<=1.4'],
    ['- - x', '>=-,<=x'],
    ['1.2.3', '1.2.3'],
  ])('%j is %j', (group, want) => {
    expect(hyphenRanges(group)).toBe(want);
  });

  // A range from the tree, read word by word: `(\S+)\s+-\s+(\S+)` over 200,000 characters without a
  // space backtracks quadratically (minutes); the row fails by its timeout if it does.
  it('a long range without spaces is read in linear time, and refused', () => {
    const long = '1'.repeat(200_000);
    expect(hyphenRanges(long)).toBe(long);
    expect(() => pickTag(['1.0.0'], `${long}x`)).toThrow('is not a version constraint');
  });
});
