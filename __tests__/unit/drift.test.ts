import { describe, expect, it } from 'vitest';
import { deepEqual, hasDrifted } from '../../src/ssa/drift.js';

const base = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'a', namespace: 'n', resourceVersion: '7', labels: { x: '1' }, annotations: { y: '2' } },
  data: { k: 'v' },
};
const withMeta = (m: Record<string, unknown>) => ({ ...base, metadata: { ...base.metadata, ...m } });

describe('hasDrifted', () => {
  it.each([
    { why: 'no live object: new', dryRun: base, live: undefined, want: true },
    {
      why: 'dry-run without resourceVersion: new',
      dryRun: withMeta({ resourceVersion: undefined }),
      live: base,
      want: true,
    },
    { why: 'identical', dryRun: base, live: base, want: false },
    { why: 'a label differs', dryRun: withMeta({ labels: { x: '2' } }), live: base, want: true },
    { why: 'an annotation added', dryRun: withMeta({ annotations: { y: '2', z: '3' } }), live: base, want: true },
    {
      why: 'managedFields and resourceVersion differ only',
      dryRun: withMeta({ managedFields: [{ manager: 'm' }], resourceVersion: '8' }),
      live: base,
      want: false,
    },
    { why: 'data differs', dryRun: { ...base, data: { k: 'w' } }, live: base, want: true },
    {
      why: 'status differs only',
      dryRun: { ...base, status: { phase: 'A' } },
      live: { ...base, status: { phase: 'B' } },
      want: false,
    },
    { why: 'a top-level field removed', dryRun: { ...base, data: undefined }, live: base, want: true },
    {
      why: 'missing labels equal empty labels',
      dryRun: withMeta({ labels: undefined }),
      live: withMeta({ labels: {} }),
      want: false,
    },
  ])('$why → $want', ({ dryRun, live, want }) => {
    const json = (v: unknown) => JSON.parse(JSON.stringify(v)) as Record<string, unknown>;
    expect(hasDrifted(json(dryRun), live && json(live))).toBe(want);
  });
});

describe('deepEqual', () => {
  it.each([
    [{ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 }, true],
    [[1, 2], [2, 1], false],
    [{ a: 1 }, { a: 1, b: undefined }, false],
    [null, {}, false],
    ['1', 1, false],
    [[], {}, false],
  ])('%j vs %j → %s', (a, b, want) => {
    expect(deepEqual(a, b)).toBe(want);
  });
});
