// The differential check of the builds computed without kustomize (plain.ts, overlay.ts) against
// the build with the real kustomize binary.
import { expect } from 'vitest';
import type { KubeObject } from '../../src/objects/kube.js';
import { build } from '../../src/kustomize/build.js';
import type { SpecFields } from '../../src/kustomize/kustomization.js';
import { KUSTOMIZE } from './paths.js';

const KUSTOMIZATION_FILE = /(?:^|\/)(?:kustomization\.ya?ml|Kustomization)$/;

/**
 * Checks that `fast`, an answer computed without kustomize, is what the build of `path` with
 * kustomize gives: kustomize does not fail, and the objects (values, key order, their order) and
 * origins are the same. `what` names the case in failures.
 */
export async function expectKustomizesAnswer(
  fast: { objects: KubeObject[]; origins: Map<string, string> },
  root: string,
  path: string,
  what: string,
  spec: SpecFields = {},
): Promise<void> {
  const slow = await build({ root, path, kustomizeBin: KUSTOMIZE, plain: false, traceOrigins: true, ...spec }).catch(
    (err: unknown) => err,
  );
  expect(slow, `${what}: kustomize fails where the build without it answers`).not.toBeInstanceOf(Error);
  const built = slow as Awaited<ReturnType<typeof build>>;
  // JSON text compares the order of keys too; toEqual tells -0 from 0.
  expect(JSON.stringify(fast.objects, null, 1), what).toBe(JSON.stringify(built.objects, null, 1));
  expect(fast.objects, what).toEqual(built.objects);
  // Origins: the same file, but where a patch replaced the annotations (and kustomize's origin
  // annotation with them) kustomize names the kustomization whose transformer did it, and the build
  // without it the file the object came from.
  expect([...fast.origins.keys()], what).toEqual([...built.origins.keys()]);
  for (const [key, file] of fast.origins) {
    const theirs = built.origins.get(key);
    if (theirs === file) continue;
    expect(KUSTOMIZATION_FILE.test(theirs ?? '') && !KUSTOMIZATION_FILE.test(file), `${what}: origin of ${key}`).toBe(
      true,
    );
  }
}
