// The parity suite: every case of test/parity/corpus reconciled by real Flux (kustomize-controller
// v1.10.1) and by ours, step by step (first apply, no-op, then the case's edits in Git, drift and
// re-runs), compared on outcome, per-object verdicts, inventory, objects as applied and managed fields.
// A case passes when every difference is listed as intended in docs/flux-differences.md.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { ArtifactServer, parseLog, testClusterClient, type FluxLogLine } from '../../test/flux/flux.ts';
import { compareStep, keyOf, knownPatterns, listedAs } from '../../test/parity/compare.ts';
import { loadCases, stepLabel, type Step } from '../../test/parity/corpus.ts';
import { FluxSide, OursSide } from '../../test/parity/sides.ts';
import { REPO } from '../helpers/paths.js';
import { RESULTS, type CaseResult } from './setup.ts';

const cases = await loadCases(process.env['KR_PARITY_CORPUS'] || undefined);
const known = knownPatterns(await readFile(join(REPO, 'docs', 'flux-differences.md'), 'utf8').catch(() => ''));

describe('parity with Flux kustomize-controller', () => {
  it('has a corpus of at least 40 cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(40);
  });

  it.concurrent.each(cases.map((c) => [c.name, c] as const))('%s', { timeout: 600_000 }, async (_name, c) => {
    const world = inject('parity');
    const fluxApi = await testClusterClient(world.fluxKubeconfig);
    const oursApi = await testClusterClient(world.oursKubeconfig);
    const artifacts = ArtifactServer.attach(world.artifacts, world.artifactBase);
    const logLines = async (): Promise<FluxLogLine[]> => parseLog(await readFile(world.fluxLog, 'utf8'));
    const flux = await FluxSide.create(fluxApi, artifacts, logLines, c, world.work);
    const ours = await OursSide.create(oursApi, world.oursKubeconfig, c, world.work);
    const steps: (Step | 'apply' | 'noop')[] = ['apply', 'noop', ...c.steps];
    const fluxSeen = new Set<string>();
    const oursSeen = new Set<string>();
    const result: CaseResult = { case: c.name, differences: [], timings: [] };
    try {
      for (const [i, step] of steps.entries()) {
        const label = stepLabel(step, i);
        const timed = async <T>(p: Promise<T>): Promise<[T, number]> => {
          const t0 = Date.now();
          const v = await p;
          return [v, Date.now() - t0];
        };
        const [[f, fluxMs], [o, oursMs]] = await Promise.all([
          timed(flux.run({ c, step, seen: fluxSeen })),
          timed(ours.run({ c, step, seen: oursSeen })),
        ]);
        result.timings.push({ step: label, fluxMs, oursMs });
        // An object one side has seen is read on the other too, so a deletion or an extra object shows.
        for (const id of fluxSeen) oursSeen.add(id);
        for (const id of oursSeen) fluxSeen.add(id);
        const [fo, oo] = await Promise.all([flux.readSeen(fluxSeen), ours.readSeen(oursSeen)]);
        f.objects = fo;
        o.objects = oo;
        const differences = compareStep(f, o);
        if (differences.length > 0) {
          (result.said ??= []).push({ step: label, flux: f.messages ?? {}, ours: o.messages ?? {} });
        }
        for (const d of differences) {
          const listed = listedAs(d, known);
          result.differences.push({ step: label, ...d, ...(listed ? { listedAs: listed.section } : {}) });
        }
        if (i === 0 && c.expect === 'failed') {
          expect(Object.values(f.outcomes), 'Flux fails the first apply of an expect: failed case').toContain('failed');
        }
        if (i === 0 && c.expect === 'ready') {
          expect(
            Object.values(f.outcomes).every((x) => x === 'ready'),
            `Flux: ${JSON.stringify(f.messages)}`,
          ).toBe(true);
        }
      }
    } finally {
      await mkdir(RESULTS, { recursive: true });
      await writeFile(join(RESULTS, `${c.name}.json`), JSON.stringify(result, null, 2));
      fluxApi.close();
      oursApi.close();
    }
    const unlisted = result.differences.filter((d) => !d.listedAs).map((d) => `${d.step} ${keyOf(d)}: ${d.message}`);
    expect(unlisted, 'differences from Flux that docs/flux-differences.md does not list').toEqual([]);
  });
});
