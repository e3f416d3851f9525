/**
 * Which Kustomizations a change affects, from the files each one's build reads (src/kustomize/
 * reads.ts) and where its source comes from. Pure: the edge gives the changed files and the reads.
 */
import type { Reads } from '../kustomize/reads.js';
import { readsFile } from '../kustomize/reads.js';
import type { KustomizationSpec } from '../flux/types.js';
import type { ChildChanged } from './parent-builds.js';
import type { Affects } from './plan.js';

/** What a Kustomization's build depends on in this repository. */
export type Inputs =
  /** Built from the checkout: the files its build reads. */
  | { kind: 'reads'; reads: Reads }
  /** Built from elsewhere (another repository, a registry, a bucket): only these files of this one (its source's definition). */
  | { kind: 'files'; files: string[]; what: string }
  /** Any change may change it (an artifact made from this checkout; reads that could not be worked out). */
  | { kind: 'any'; why: string };

/** The name git uses for a path (`/`-separated, no `./`). */
const clean = (p: string) => p.replace(/^\.\//, '');

/**
 * A change of `changed` (paths relative to the root, added, modified, deleted or renamed: both
 * names) seen through each Kustomization's inputs: the reason it is affected, or undefined.
 */
export function affectsOf(changed: readonly string[], inputs: (spec: KustomizationSpec) => Inputs): Affects {
  const files = changed.map(clean);
  return (spec) => {
    const own = spec.origin.kind === 'file' ? clean(spec.origin.file) : undefined;
    if (own !== undefined && files.includes(own)) return `its file ${own} changed`;
    if (files.length === 0) return undefined;
    const i = inputs(spec);
    switch (i.kind) {
      case 'any':
        return `${i.why} (${files[0]} changed)`;
      case 'files': {
        const hit = files.find((f) => i.files.includes(f));
        return hit === undefined ? undefined : `${hit} changed (${i.what})`;
      }
      case 'reads': {
        // Which files are in the artifact at all is decided by the .sourceignore files.
        const ignore = files.find((f) => f === '.sourceignore' || f.endsWith('/.sourceignore'));
        if (ignore !== undefined) return `${ignore} changed (it decides which files are in the source)`;
        const hit = files.find((f) => readsFile(i.reads, f));
        return hit === undefined ? undefined : `reads ${hit}, which changed`;
      }
    }
  };
}

/**
 * `affects`, and a child whose parent (the Kustomization whose build reads its file, see
 * reconcile/children.ts) is affected by a change the child's object can come from: the parent's own
 * file, or any file its build reads other than the other Kustomization files it builds (a sibling's
 * ks.yaml changes that sibling, not this child). Under Flux such a change reaches the child through
 * the object the parent applies; here the child is built from it.
 */
export function withParents(
  changed: readonly string[],
  inputs: (spec: KustomizationSpec) => Inputs,
  parentsOf: (spec: KustomizationSpec) => readonly KustomizationSpec[],
  kustomizationFiles: ReadonlySet<string>,
  childChanged: ChildChanged = () => undefined,
): Affects {
  const own = affectsOf(changed, inputs);
  const fileOf = (s: KustomizationSpec) => (s.origin.kind === 'file' ? clean(s.origin.file) : undefined);
  return (spec, cluster) => {
    const direct = own(spec, cluster);
    if (direct !== undefined) return direct;
    for (const parent of parentsOf(spec)) {
      const relevant = changed.map(clean).filter((f) => !kustomizationFiles.has(f) || f === fileOf(parent));
      const why = affectsOf(relevant, inputs)(parent, cluster);
      if (why === undefined) continue;
      // The parent's own file changed: its patches or substitutions may change every child.
      if (relevant.includes(fileOf(parent) ?? ''))
        return `its parent Kustomization ${parent.namespace}/${parent.name} is affected: ${why}`;
      // Else only when the object the parent's build makes of this child changed (or that is not known).
      const changedHere = childChanged(parent, spec);
      if (changedHere === false) continue;
      return changedHere === true
        ? `its object in the build of its parent Kustomization ${parent.namespace}/${parent.name} changed: its parent ${why}`
        : `its parent Kustomization ${parent.namespace}/${parent.name} is affected: ${why}`;
    }
    return undefined;
  };
}
