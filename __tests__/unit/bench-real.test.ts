// The benchmark's pure helpers for --runs (bench/run/median.ts), and its trees written as repositories
// write them (bench/run/real.ts): kustomize builds each of them, before and after the scenarios'
// edits, into as many objects as the tree says it holds.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { median, medianRows } from '../../bench/run/median.ts';
import type { Row } from '../../bench/run/model.ts';
import { REPO80_NAMESPACES, repo80Apps, withDependents } from '../../bench/run/repo80.ts';
import { writeTree, type Shape } from '../../bench/run/tree.ts';
import { heavyFile } from '../helpers/heavy.js';
import { KUSTOMIZE } from '../helpers/paths.js';

heavyFile();

describe('median', () => {
  it.each([
    ['no values', [], undefined],
    ['only undefined', [undefined, undefined], undefined],
    ['one value', [7], 7],
    ['an odd count, unsorted', [5, 1, 3], 3],
    ['an even count: the mean of the middle two', [4, 1, 3, 2], 2.5],
    ['undefined left out', [9, undefined, 1, 5], 5],
    ['five rounds', [1200, 900, 4000, 1000, 1100], 1100],
  ])('%s', (_, values: (number | undefined)[], want: number | undefined) => {
    expect(median(values)).toBe(want);
  });
});

const row = (tool: string, scenario: string, wallMs: number, more: Partial<Row> = {}): Row => ({
  objects: 100,
  tool,
  scenario,
  command: tool,
  exitCode: 0,
  ok: true,
  wallMs,
  firstRequestMs: undefined,
  requests: 10,
  requestsByKind: {},
  requestsByTarget: {},
  peakRssMiB: undefined,
  toolCpuMs: undefined,
  apiserverCpuMs: undefined,
  etcdCpuMs: undefined,
  ...more,
});

describe('medianRows', () => {
  it.each([
    ['one row stands for itself', [row('a', 'x', 5)], [{ tool: 'a', scenario: 'x', wallMs: 5, runs: 1 }]],
    [
      'rounds of one tool and scenario: each figure its median, the note from the row nearest the median wall',
      [
        row('a', 'x', 300, { requests: 12, peakRssMiB: 100, note: 'slow', round: 1 }),
        row('a', 'x', 100, { requests: 10, peakRssMiB: 90, note: 'fast', round: 2 }),
        row('a', 'x', 200, { requests: 11, peakRssMiB: 95, note: 'typical', round: 3 }),
      ],
      [{ tool: 'a', wallMs: 200, requests: 11, peakRssMiB: 95, note: 'typical', runs: 3, round: 3 }],
    ],
    [
      'a failed round fails the median row, with its exit code',
      [row('a', 'x', 100), row('a', 'x', 110, { ok: false, exitCode: 2 }), row('a', 'x', 120)],
      [{ ok: false, exitCode: 2, wallMs: 110 }],
    ],
    [
      'groups by tool and scenario, in the order they first appear (interleaved rounds)',
      [row('a', 'x', 1), row('b', 'x', 2), row('a', 'y', 3), row('a', 'x', 5), row('b', 'x', 4)],
      [
        { tool: 'a', scenario: 'x', wallMs: 3, runs: 2 },
        { tool: 'b', scenario: 'x', wallMs: 3, runs: 2 },
        { tool: 'a', scenario: 'y', wallMs: 3, runs: 1 },
      ],
    ],
    [
      'kustomize builds: the median of the rounds that counted them',
      [row('a', 'x', 1, { kustomizeBuilds: 0 }), row('a', 'x', 2, { kustomizeBuilds: 20 }), row('a', 'x', 3)],
      [{ kustomizeBuilds: 10 }],
    ],
  ])('%s', (_, rows: Row[], want: Partial<Row>[]) => {
    const got = medianRows(rows);
    expect(got).toHaveLength(want.length);
    want.forEach((w, i) => {
      expect(got[i]).toMatchObject(w);
    });
  });
});

/** Apps depending on the apps at the given indices (only dependsOn is read). */
const graph = (...deps: number[][]) =>
  deps.map((dependsOn, i) => ({ app: `a${String(i)}`, ns: 'x', dir: '', dependsOn }));

describe('withDependents (the Kustomizations a change to one app should affect)', () => {
  it.each([
    ['no dependents: the app alone', graph([], [0], [1]), 2, [2]],
    ['a chain: every app after it', graph([], [0], [1]), 0, [0, 1, 2]],
    ['a diamond: both sides and the bottom, once', graph([], [0], [0], [1, 2]), 0, [0, 1, 2, 3]],
    ['a side of the diamond: the bottom only', graph([], [0], [0], [1, 2]), 1, [1, 3]],
    [
      "repo80's bumped app40: its column and the odd column left of it, level by level",
      repo80Apps(),
      40,
      [40, 48, 49, 57, 58, 66, 67, 75, 76],
    ],
  ])('%s', (_, apps, i, want) => {
    expect([...withDependents(apps, i)].sort((a, b) => a - b)).toEqual(want);
  });
});

const roots: string[] = [];
afterAll(async () => {
  await Promise.all(roots.map((r) => rm(r, { recursive: true, force: true })));
});

/** Objects kustomize builds from `dir`, and the kinds (apiVersion/kind) it builds. */
function built(dir: string): string[] {
  const r = spawnSync(KUSTOMIZE, ['build', dir], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return [...r.stdout.matchAll(/^kind: (.*)$/gm)].map((m) => m[1]!);
}

describe('the trees written as repositories write them build with kustomize', () => {
  it.each<[Shape, number]>([
    ['real', 60],
    ['realrepo', 200],
    ['repo80', 500],
  ])('%s of %i objects, before and after the scenarios edit it', async (shape, n) => {
    const dir = await mkdtemp(join(os.tmpdir(), 'kr-bench-real-'));
    roots.push(dir);
    const tree = await writeTree(dir, n, 'kr', shape, 8);
    // repo80: the parent's build (the plain directory apps/, which Flux builds over each namespace's
    // kustomization.yaml) is the children's Kustomizations and their Namespaces; each child builds
    // its app (apps/<ns>/appNN/app).
    const dirs = () =>
      shape === 'repo80' ? repo80Apps().map((a) => join(dir, a.dir, 'app')) : tree.units.map((u) => join(dir, u.path));
    const count = () =>
      dirs().reduce((sum, d) => sum + built(d).length, shape === 'repo80' ? REPO80_NAMESPACES.length : 0);
    expect(count()).toBe(tree.objects);
    if (shape === 'repo80') {
      expect(existsSync(join(dir, 'apps', 'kustomization.yaml'))).toBe(false);
      const parent = REPO80_NAMESPACES.flatMap((ns) => built(join(dir, 'apps', ns)));
      expect(parent.filter((k) => k === 'Kustomization')).toHaveLength(80);
      expect(parent.filter((k) => k === 'Namespace')).toHaveLength(REPO80_NAMESPACES.length);
    } else {
      const kinds = built(join(dir, tree.units[0]!.path));
      for (const k of ['Namespace', 'Deployment', 'Service', 'ConfigMap', 'Secret', 'ServiceAccount']) {
        expect(kinds, k).toContain(k);
      }
    }
    await tree.change();
    const gone = await tree.removeTenth();
    expect(gone).toBeGreaterThan(0);
    expect(count()).toBe(tree.objects - gone);
  });
});
