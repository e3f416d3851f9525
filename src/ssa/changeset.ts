import type { FieldChange } from './diff.js';

/** What applying one object did (or would do, in a preview), with Flux's action words. */
export type Action = 'created' | 'configured' | 'unchanged' | 'skipped';

export interface ChangeSetEntry {
  /** `Kind/namespace/name` or `Kind/name`, as Flux prints it. */
  subject: string;
  action: Action;
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  /** For `configured`: the field changes between the live object and the dry-run (Secret values masked). */
  diff?: FieldChange[];
  /**
   * For `configured`: the change as unified diff lines of the object's YAML (live → dry-run, secret
   * values masked), for reviewers; `diff` stays the field list (check-run annotations, JSON).
   */
  yamlDiff?: string[];
  /** How the action was found when not by a dry-run (a preview of an object in a namespace yet to be created). */
  note?: string;
  /**
   * The Kustomization (`namespace/name`) whose object this was: its owner labels named it before
   * this apply (the object moved here from its build, or that Kustomization was renamed to this one).
   */
  movedFrom?: string;
  /** For `created` by force: the object existed and is deleted and created again, for these immutable fields. */
  recreated?: string[];
}

export function countActions(changeset: readonly ChangeSetEntry[]): Record<Action, number> {
  const counts: Record<Action, number> = { created: 0, configured: 0, unchanged: 0, skipped: 0 };
  for (const e of changeset) counts[e.action]++;
  return counts;
}
