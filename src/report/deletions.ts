/** Deletions that reach beyond one object, in words for the reports (pure). */
import type { PrunedObject } from './model.js';
import type { ChangeSetEntry } from '../ssa/changeset.js';

/** What a changeset line says after the action: how it was found, and where the object moved from. */
export function entryNote(e: Pick<ChangeSetEntry, 'note' | 'movedFrom'>): string {
  return [e.note, e.movedFrom && `moved from ${e.movedFrom}`].filter(Boolean).join('; ');
}

/**
 * What deleting `subject` takes with it, for the deletions that reach beyond one object: a Namespace
 * (everything in it, naming how many of the listed deletions are in it) and a CRD (every object of
 * its kind, in the whole cluster); undefined for any other object.
 */
export function takesWithIt(subjectText: string, all: readonly PrunedObject[]): string | undefined {
  const [kind, ...rest] = subjectText.split('/');
  if (kind === 'Namespace' && rest.length === 1) {
    const inside = all.filter((o) => o.subject.split('/').length === 3 && o.subject.split('/')[1] === rest[0]);
    const listed =
      inside.length > 0 ? ` (${inside.length.toLocaleString('en-US')} of the objects listed here are in it)` : '';
    return `a Namespace: everything in it is deleted with it, whoever manages it${listed}`;
  }
  if (kind === 'CustomResourceDefinition') {
    return 'a CustomResourceDefinition: every object of its kind, in every namespace, is deleted with it';
  }
  return undefined;
}
