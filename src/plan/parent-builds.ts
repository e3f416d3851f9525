/**
 * What a parent's build makes of each child's file, at a change's base and at its head (the edge:
 * git, the build service). A change that only the parent's build reads (a namespace folder's
 * kustomization.yaml that lists one more app, a file of the parent's overlay) reaches a child only
 * when the object the parent's build makes of that child's file is not the same at both: under Flux
 * the parent applies the same object again and the child is not reconciled anew. The parents are
 * built as their reconcile would build them, without postBuild (there is no cluster here: the
 * substitutions come from the parent's own file, whose change counts for every child, or from the
 * cluster, which no change of the repository touches).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { KustomizationSpec } from '../flux/types.js';
import { isFluxKustomization } from '../reconcile/children.js';
import { Builds } from '../reconcile/builds.js';
import type { Settings } from '../options/settings.js';
import { objectKey, type KubeObject } from '../objects/kube.js';
import { deepEqual } from '../ssa/drift.js';
import { commitTree } from '../source/commit-tree.js';

/** Whether the object `parent`'s build makes of `child`'s file changed; undefined when that cannot be told. */
export type ChildChanged = (parent: KustomizationSpec, child: KustomizationSpec) => boolean | undefined;

const fileOf = (s: KustomizationSpec) => (s.origin.kind === 'file' ? s.origin.file : undefined);

/** For each parent, the Flux Kustomization objects its build makes, by the file each came from (undefined: no build). */
async function childObjects(
  settings: Settings,
  root: string,
  parents: readonly KustomizationSpec[],
): Promise<Map<KustomizationSpec, Map<string, KubeObject[]> | undefined>> {
  const { untrustedTree: _untrusted, ...rest } = settings;
  const builds = await Builds.open({
    settings: { ...rest, root },
    all: parents,
    sources: new Map(),
    secret: () => undefined,
    log: () => undefined,
  });
  const out = new Map<KustomizationSpec, Map<string, KubeObject[]> | undefined>();
  try {
    for (const parent of parents) {
      const { postBuild: _postBuild, ...spec } = parent;
      try {
        const built = await builds.objects(spec, { decrypt: false });
        // The build's order is kustomize's (legacy, by id): the same objects come in the same order.
        const byFile = new Map<string, KubeObject[]>();
        for (const o of built.objects) {
          const file = isFluxKustomization(o) ? built.origins.get(objectKey(o)) : undefined;
          if (file !== undefined) byFile.set(file, [...(byFile.get(file) ?? []), o]);
        }
        out.set(parent, byFile);
      } catch {
        out.set(parent, undefined);
      }
    }
  } finally {
    await builds.close();
  }
  return out;
}

/**
 * ChildChanged for `parents` between the merge base of `base` and `head` and the checkout (head).
 * Every answer is undefined when the base cannot be taken out of git.
 */
export async function parentComparison(
  settings: Settings,
  change: { base: string; head: string },
  parents: readonly KustomizationSpec[],
): Promise<ChildChanged> {
  const unknown: ChildChanged = () => undefined;
  if (parents.length === 0) return unknown;
  let mergeBase: string;
  try {
    const { stdout } = await promisify(execFile)(
      'git',
      ['-C', settings.root, 'merge-base', '--end-of-options', change.base, change.head],
      { timeout: 60_000 },
    );
    mergeBase = stdout.trim();
  } catch {
    return unknown;
  }
  const base = await commitTree(settings.root, mergeBase).catch(() => undefined);
  if (base === undefined) return unknown;
  try {
    const before = await childObjects(settings, base.tree, parents);
    const after = await childObjects(settings, settings.root, parents);
    return (parent, child) => {
      const file = fileOf(child);
      const b = before.get(parent);
      const a = after.get(parent);
      if (file === undefined || b === undefined || a === undefined) return undefined;
      return !deepEqual(b.get(file), a.get(file));
    };
  } finally {
    await base.remove();
  }
}
