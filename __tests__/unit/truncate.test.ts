import { describe, expect, it } from 'vitest';
import { clip, DEFAULT_LIMITS, truncate } from '../../src/util/truncate.js';

describe('truncate', () => {
  it.each([
    ['a text within the limits', 'short', { chars: 10 }, 'short'],
    ['a text exactly at the character limit', 'abcde', { chars: 5 }, 'abcde'],
    ['one long line', 'abcdefghij', { chars: 4 }, 'abcd [… 6 more characters left out]'],
    ['one character over', 'abcdef', { chars: 5 }, 'abcde [… 1 more character left out]'],
    ['lines over the line limit', 'a\nb\nc\nd\n', { lines: 2 }, 'a\nb [… 2 more lines (5 characters) left out]'],
    ['one line over the line limit', 'a\nb\nc', { lines: 2 }, 'a\nb [… 1 more line (2 characters) left out]'],
    [
      'a cut inside a line with whole lines after it',
      'abcdef\nxy\nz',
      { chars: 3 },
      'abc [… 2 more lines (8 characters) left out]',
    ],
    ['trailing blanks before the cut', 'ab   cdef', { chars: 4 }, 'ab [… 7 more characters left out]'],
    ['a surrogate pair at the cut', 'a😀b', { chars: 2 }, 'a [… 3 more characters left out]'],
    ['nothing kept', 'abc', { chars: 0 }, '[… 3 more characters left out]'],
    ['large counts with separators', 'x'.repeat(12_345), { chars: 0 }, '[… 12,345 more characters left out]'],
  ])('%s', (_, text, limits, expected) => {
    expect(truncate(text, limits)).toBe(expected);
  });

  it('uses the default limits when none are given', () => {
    const long = 'y'.repeat(DEFAULT_LIMITS.chars + 50);
    expect(truncate(long)).toBe(`${'y'.repeat(DEFAULT_LIMITS.chars)} [… 50 more characters left out]`);
    const tall = Array.from({ length: DEFAULT_LIMITS.lines + 3 }, (_, i) => `line ${i}`).join('\n');
    const cut = truncate(tall);
    expect(cut.split('\n')).toHaveLength(DEFAULT_LIMITS.lines);
    expect(cut).toMatch(/\[… 3 more lines \(\d+ characters\) left out\]$/);
  });
});

describe('clip', () => {
  it.each([
    ['short', 10, false, 'short'],
    ['exactly10!', 10, false, 'exactly10!'],
    ['a longer value', 8, false, 'a longer…'],
    ['a longer value', 8, true, 'a longer… (14 characters)'],
  ])('%j cut to %i (counted: %s) is %j', (text, max, counted, want) => {
    expect(clip(text, max, counted)).toBe(want);
  });
});
