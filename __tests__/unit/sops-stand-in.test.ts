// Stand-ins for the values of a SOPS file a change encrypted itself (src/sops/stand-in.ts): the same
// shape, nothing of the value, the same stand-in for the same value within a run.
import { describe, expect, it } from 'vitest';
import { standInPlain, standInText } from '../../src/sops/stand-in.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

describe('standInText', () => {
  it.each([
    ['a password', 'hunter2-Secret!'],
    ['base64 with padding', 'aHVudGVyMg=='],
    ['a dotenv line', 'KEY=value with spaces'],
    ['non-ASCII kept as it is', 'pässwörd'],
    ['empty', ''],
  ])('%s keeps the shape', (_what, value) => {
    const s = standInText(value);
    expect(Array.from(s)).toHaveLength(Array.from(value).length);
    const shape = (t: string) =>
      Array.from(t)
        .map((c) => (/[a-z]/.test(c) ? 'a' : /[A-Z]/.test(c) ? 'A' : /[0-9]/.test(c) ? '9' : c))
        .join('');
    expect(shape(s)).toBe(shape(value));
  });

  it('gives the same stand-in for the same value, another for another', () => {
    expect(standInText('correct horse battery')).toBe(standInText('correct horse battery'));
    expect(standInText('correct horse battery')).not.toBe(standInText('correct horse batterz'));
  });

  it('keeps no three letters of a long value in place (a slice of it is not in the stand-in)', () => {
    const value = 'qwertyuiopasdfghjklzxcvbnmqwertyuiop';
    const s = standInText(value);
    // A random stand-in repeats a slice in place by chance (1 in 26^3 per place, 34 places): a copy
    // would repeat all 34; three or more by chance is about one in a billion.
    const same = [...Array(value.length - 2).keys()].filter((i) => s.slice(i, i + 3) === value.slice(i, i + 3));
    expect(same.length).toBeLessThan(3);
  });
});

describe('standInPlain', () => {
  // The stand-in is random per run: an integer's many values must all keep its number of digits.
  it('keeps the number of digits of every integer (no leading zero)', () => {
    for (let n = 10n; n < 10_000n; n += 7n) expect(String(standInPlain(n))).toHaveLength(String(n).length);
  });

  it.each<[string, string | bigint | number | boolean, string]>([
    ['a string', 'abc123', 'string'],
    ['an integer', 123456789n, 'bigint'],
    ['a negative 19-digit integer', -9223372036854775807n, 'bigint'],
    ['a float', 3.25, 'number'],
    ['a boolean', true, 'boolean'],
  ])('%s keeps its type', (_what, value, type) => {
    const s = standInPlain(value);
    expect(typeof s).toBe(type);
    if (typeof s === 'bigint') {
      expect(s <= 9223372036854775807n && s >= -9223372036854775808n).toBe(true);
      expect(s.toString().length).toBe(value.toString().length);
    }
  });
});
