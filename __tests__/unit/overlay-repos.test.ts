// The in-process build (src/kustomize/overlay.ts) on trees written the way public repositories
// write them (__tests__/helpers/overlay-repo-trees.ts: app bases, overlays with any mix of the
// fields kustomize users set, components, overlays over overlays), against the real kustomize:
// every tree it answers must be kustomize's answer, object by object and origin by origin.
import { mkdtemp, realpath } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeReal, writeRealRepo } from '../../bench/run/real.js';
import { buildOverlay } from '../../src/kustomize/overlay.js';
import { mapLimit } from '../../src/util/concurrency.js';
import { expectKustomizesAnswer } from '../helpers/differential.js';
import { heavyFile } from '../helpers/heavy.js';
import { repoTree } from '../helpers/overlay-repo-trees.js';
import { tempTree } from '../helpers/plain-trees.js';

heavyFile();

/** KR_OVERLAY_FUZZ=N runs N times as many trees (the other overlay tests read it too). */
const SEEDS = Array.from({ length: 160 * Number(process.env['KR_OVERLAY_FUZZ'] ?? 1) }, (_, i) => 4900 + i);

describe('the in-process build on repository-like trees, differential against kustomize', () => {
  it('answers only with kustomize’s answer, and answers most of them', async () => {
    const ways = await mapLimit(SEEDS, 2, async (seed) => {
      const { files, path } = repoTree(seed);
      const root = await tempTree('kr-overlay-repo-', files);
      const fast = await buildOverlay(root, path, {});
      if (fast === undefined) return 'kustomize';
      await expectKustomizesAnswer(fast, root, path, `repository-like tree, seed ${seed}`);
      return 'overlay';
    });
    const inProcess = ways.filter((w) => w === 'overlay').length;
    console.log(`repository-like trees built in process: ${inProcess} of ${ways.length}`);
    // Every answer was checked above; most such trees must not need the binary at all.
    expect(inProcess).toBeGreaterThanOrEqual(Math.ceil(0.8 * ways.length));
  });

  it.each([
    ['real', (dir: string) => writeReal(dir, 240, 'kr', 40)],
    ['realrepo', (dir: string) => writeRealRepo(dir, 240, 'kr', 5, 40)],
  ] as const)(
    'the benchmark’s %s trees, every Kustomization built in process as kustomize builds it',
    async (_, write) => {
      const dir = await realpath(await mkdtemp(join(tmpdir(), 'kr-overlay-bench-')));
      const tree = await write(dir);
      for (const unit of tree.units) {
        const fast = await buildOverlay(dir, unit.path, {});
        expect(fast, `${unit.path} is built in process`).toBeDefined();
        await expectKustomizesAnswer(fast!, dir, unit.path, `${tree.shape} ${unit.path}`);
      }
      // A change and a tenth removed, as the benchmark makes them, still build in process and equal.
      await tree.change();
      await tree.removeTenth();
      const unit = tree.units[0]!;
      const fast = await buildOverlay(dir, unit.path, {});
      expect(fast).toBeDefined();
      await expectKustomizesAnswer(fast!, dir, unit.path, `${tree.shape} ${unit.path} after the edits`);
    },
  );
});
