/**
 * The rules between options: what one option allows of another. Each option alone is checked by its
 * declaration (table.ts, parse.ts); these are the rest. Errors name both options.
 */
import { UserError } from '../util/user-error.js';
import type { ParsedSettings } from './shape.js';

type Rule = (s: ParsedSettings, files: boolean) => string | undefined;

/** Each rule gives its error when broken; `files`: the run reads Kustomization files (kustomizations). */
const RULES: readonly Rule[] = [
  (s, files) =>
    files && s.path !== '.'
      ? `set either path ("${s.path}") or kustomizations, not both: a Flux Kustomization file names its own spec.path`
      : undefined,
  (s, files) =>
    files && s.name
      ? 'name applies to path; with kustomizations, each Kustomization file names itself (metadata.name)'
      : undefined,
  (s, files) =>
    files && s.targetNamespace
      ? 'target-namespace applies to path; with kustomizations, set spec.targetNamespace in the Kustomization files'
      : undefined,
  (s, files) =>
    files && (s.prune || s.force)
      ? 'prune and force apply to path; with kustomizations, set spec.prune and spec.force in the Kustomization files'
      : undefined,
  (s, files) =>
    files && (s.wait || s.timeout !== undefined)
      ? 'wait and timeout apply to path; with kustomizations, set spec.wait and spec.timeout in the Kustomization files'
      : undefined,
  (s, files) =>
    s.removedKustomizations === 'delete' && !files
      ? 'removed-kustomizations: delete needs kustomizations: the set of Kustomization files is what a removed one is missing from'
      : undefined,
  (s) =>
    s.driftCorrection && s.mode !== 'drift'
      ? `drift-correction applies to mode: drift; this run's mode is ${s.mode}`
      : undefined,
  (s, files) =>
    !files && (s.cluster || s.select.length > 0)
      ? `${s.cluster ? 'cluster' : 'select'} needs kustomizations: it picks among the Kustomization files`
      : undefined,
];

/** Throws the first broken rule's error. */
export function checkRules(settings: ParsedSettings): void {
  const files = settings.kustomizations.length > 0;
  for (const rule of RULES) {
    const error = rule(settings, files);
    if (error !== undefined) throw new UserError(error);
  }
}
