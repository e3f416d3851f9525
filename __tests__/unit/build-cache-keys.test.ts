// The pure parts of the build cache across workflow runs (src/action/build-cache.ts): the Actions
// cache key of a directory's entries, which names are entries, and what the toolkit printed.
import { describe, expect, it } from 'vitest';
import { isEntryName, keyOf, keyPrefix, toolkitLines } from '../../src/action/build-cache.js';

const A = 'a'.repeat(64);
const B = 'b'.repeat(64);

describe('the Actions cache key of the build cache', () => {
  it.each<[string, readonly string[], readonly string[], boolean]>([
    ['the same names in another order', [A, B], [B, A], true],
    ['one name more', [A], [A, B], false],
    ['no names and one', [], [A], false],
  ])('%s: same key %s', (_, one, other, same) => {
    const prefix = keyPrefix('linux', 'x64');
    expect(keyOf(prefix, one) === keyOf(prefix, other)).toBe(same);
    expect(keyOf(prefix, one)).toMatch(/^kustomize-reconcile-builds-linux-x64-[0-9a-f]{32}$/);
  });

  it.each<[string, boolean]>([
    [A, true],
    [`${A}.123.abcdef.tmp`, false],
    ['A'.repeat(64), false],
    ['a'.repeat(63), false],
    ['../etc', false],
  ])('%s is an entry: %s', (name, entry) => {
    expect(isEntryName(name)).toBe(entry);
  });
});

describe("what the toolkit's cache package printed", () => {
  it.each<[string, string, { warnings: string[]; lines: string[] }]>([
    ['debug lines go', '::debug::Resolved Keys:\n::debug::["k"]\n', { warnings: [], lines: [] }],
    [
      'a warning is read back from its escaped form',
      '::warning::Failed to restore: no route%0Ato host%3A x%2C y%25\n',
      { warnings: ['Failed to restore: no route\nto host: x, y%'], lines: [] },
    ],
    [
      'info lines stay, commands of other kinds go',
      'Cache Size: ~0 MB (512 B)\r\n::add-mask::x\nCache restored successfully\n\n',
      { warnings: [], lines: ['Cache Size: ~0 MB (512 B)', 'Cache restored successfully'] },
    ],
    ['an error is a problem too', '::error title=t::broken\n', { warnings: ['broken'], lines: [] }],
  ])('%s', (_, text, expected) => {
    expect(toolkitLines(text)).toEqual(expected);
  });
});
