// A changed value as text: two long values cut where they differ, a changed list as its elements'
// edits, masks never cut (src/ssa/diff-text.ts).
import { describe, expect, it } from 'vitest';
import { listHunks, renderPair, renderValue, VALUE_WIDTH, type Hunk } from '../../src/ssa/diff-text.js';

const IMAGE = 'registry.example.com/platform/team-a/some-service-with-a-long-name';
const BLOB = (v: number) => JSON.stringify({ replicas: 2, zone: 'europe-west1-b', owner: 'platform-team', version: v });

describe('renderValue', () => {
  it.each<{ why: string; value: unknown; want: string }>([
    { why: 'short string as JSON', value: 'web', want: '"web"' },
    { why: 'number', value: 3, want: '3' },
    { why: 'undefined', value: undefined, want: 'undefined' },
    { why: 'mask bare', value: '*** (before)', want: '*** (before)' },
    { why: 'exactly 80 characters whole', value: 'x'.repeat(78), want: `"${'x'.repeat(78)}"` },
    { why: 'longer cut to 80 with …', value: 'x'.repeat(79), want: `"${'x'.repeat(78)}…` },
    { why: 'a surrogate pair is not split', value: 'x'.repeat(77) + '😀', want: `"${'x'.repeat(77)}…` },
  ])('$why', ({ value, want }) => {
    expect(renderValue(value)).toBe(want);
    expect(renderValue(value).length).toBeLessThanOrEqual(VALUE_WIDTH);
  });
});

describe('renderPair', () => {
  it.each<{ why: string; before: unknown; after: unknown; want: [string, string] }>([
    { why: 'short values whole', before: 1, after: 3, want: ['1', '3'] },
    {
      why: 'one long side, difference in the head: cut as renderValue cuts',
      before: 'short',
      after: 'x'.repeat(100),
      want: ['"short"', `"${'x'.repeat(78)}…`],
    },
    {
      why: 'difference past the head: both cut 20 characters before it',
      before: `${IMAGE}:v1.2.3@sha256:0123456789abcdef0123`,
      after: `${IMAGE}:v1.2.4@sha256:0123456789abcdef0123`,
      want: [
        '…th-a-long-name:v1.2.3@sha256:0123456789abcdef0123"',
        '…th-a-long-name:v1.2.4@sha256:0123456789abcdef0123"',
      ],
    },
    {
      why: 'a long list with an entry added: the end of both shown',
      before: Array.from({ length: 12 }, (_, i) => `item-${i}`),
      after: [...Array.from({ length: 12 }, (_, i) => `item-${i}`), 'item-new'],
      want: ['…,"item-10","item-11"]', '…,"item-10","item-11","item-new"]'],
    },
    {
      why: 'the part after the window cut with … too',
      before: 'a'.repeat(100) + 'B' + 'c'.repeat(100),
      after: 'a'.repeat(100) + 'D' + 'c'.repeat(100),
      want: [`…${'a'.repeat(20)}B${'c'.repeat(57)}…`, `…${'a'.repeat(20)}D${'c'.repeat(57)}…`],
    },
    {
      why: 'a JSON blob in an annotation',
      before: BLOB(1),
      after: BLOB(2),
      want: ['…-team\\",\\"version\\":1}"', '…-team\\",\\"version\\":2}"'],
    },
    {
      why: 'difference just inside the head: not moved',
      before: 'x'.repeat(50) + 'a' + 'y'.repeat(50),
      after: 'x'.repeat(50) + 'b' + 'y'.repeat(50),
      want: [`"${'x'.repeat(50)}a${'y'.repeat(27)}…`, `"${'x'.repeat(50)}b${'y'.repeat(27)}…`],
    },
    {
      why: 'masked sides bare, never windowed',
      before: '*** (before)',
      after: '*** (after)',
      want: ['*** (before)', '*** (after)'],
    },
    {
      why: 'a masked side beside a long one: nothing picked out of either',
      before: '***',
      after: 'x'.repeat(100),
      want: ['***', `"${'x'.repeat(78)}…`],
    },
  ])('$why', ({ before, after, want }) => {
    const got = renderPair(before, after);
    expect(got).toEqual(want);
    for (const side of got) expect(side.length).toBeLessThanOrEqual(VALUE_WIDTH);
  });
});

describe('listHunks', () => {
  const h = (removed: [number, unknown][], added: [number, unknown][]): Hunk => ({
    removed: removed.map(([index, value]) => ({ index, value })),
    added: added.map(([index, value]) => ({ index, value })),
  });
  it.each<{ why: string; a: unknown[]; b: unknown[]; max?: number; want: Hunk[] }>([
    { why: 'equal', a: [1, 2], b: [1, 2], want: [] },
    { why: 'appended', a: ['a', 'b'], b: ['a', 'b', 'c'], want: [h([], [[2, 'c']])] },
    { why: 'prepended', a: ['a', 'b'], b: ['z', 'a', 'b'], want: [h([], [[0, 'z']])] },
    { why: 'removed in the middle', a: [1, 2, 3, 4], b: [1, 2, 4], want: [h([[2, 3]], [])] },
    {
      why: 'two edits apart: two runs, indexes of their own lists',
      a: ['a', 'b', 'c', 'd', 'e'],
      b: ['a', 'x', 'c', 'd', 'e', 'f'],
      want: [h([[1, 'b']], [[1, 'x']]), h([], [[5, 'f']])],
    },
    {
      why: 'maps compared deeply',
      a: [{ name: 'A', v: 1 }, { name: 'B' }],
      b: [{ name: 'A', v: 2 }, { name: 'B' }, { name: 'C' }],
      want: [h([[0, { name: 'A', v: 1 }]], [[0, { name: 'A', v: 2 }]]), h([], [[2, { name: 'C' }]])],
    },
    {
      why: 'past maxCells the middle is one run',
      a: [0, 1, 2, 3, 9],
      b: [0, 3, 2, 1, 7, 9],
      max: 4,
      want: [
        h(
          [
            [1, 1],
            [2, 2],
            [3, 3],
          ],
          [
            [1, 3],
            [2, 2],
            [3, 1],
            [4, 7],
          ],
        ),
      ],
    },
  ])('$why', ({ a, b, max, want }) => {
    expect(listHunks(a, b, max)).toEqual(want);
  });
});
