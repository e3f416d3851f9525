import type { ChangeSetEntry } from './changeset.js';

/** Entries named before the rest are counted. */
const SHOWN = 20;

/**
 * For a failure in a later stage: what earlier stages already wrote (created or configured), so
 * that the error says what the failed run left in the cluster. Empty when nothing was written. True
 * while the run holds its lock (its record keeps them); a run that lost the lock says instead what
 * src/inventory/lost-run.ts says (ApplyError.detail is its error without this).
 */
export function appliedSoFar(changeset: readonly ChangeSetEntry[]): string {
  const written = changeset.filter((e) => e.action === 'created' || e.action === 'configured');
  if (written.length === 0) return '';
  const shown = written.slice(0, SHOWN).map((e) => `${e.subject} (${e.action})`);
  const more = written.length > SHOWN ? ` and ${written.length - SHOWN} more` : '';
  return `\nAlready applied by this run: ${shown.join(', ')}${more}; they stay in the cluster and in the inventory.`;
}
