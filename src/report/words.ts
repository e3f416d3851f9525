/**
 * The words of a rendering for its mode: a preview (or a drift check that corrected nothing) says
 * what would happen, an apply what happened. The job summary, the PR comment and the check run
 * share them, so that they never disagree about whether anything was applied. Also the result of a
 * Kustomization, the tally of failed and skipped Kustomizations, and whether an error already names
 * an object's health. Pure.
 */
import type { Report } from './model.js';
import { mdText } from '../util/markdown.js';
import { cutChars, FIRST_LINE_MAX } from './text.js';

export interface Words {
  title: string;
  /** After a count: `3 to create`, `3 created`. */
  create: string;
  configure: string;
  delete: string;
  /** A table column's title: `To create`, `Created`. */
  createCol: string;
  configureCol: string;
  deleteCol: string;
  createHead: string;
  configureHead: string;
  pruneHead: string;
  /** An object's action: `would create`, `created`. */
  created: string;
  configured: string;
  deleted: string;
  changed: string;
  /** `would move`, `moved` (to another Kustomization). */
  moved: string;
}

export const PLANNED: Words = {
  title: 'preview',
  create: 'to create',
  configure: 'to configure',
  delete: 'to delete',
  createCol: 'To create',
  configureCol: 'To configure',
  deleteCol: 'To delete',
  createHead: 'Would create',
  configureHead: 'Would configure',
  pruneHead: '⚠️ Would prune',
  created: 'would create',
  configured: 'would configure',
  deleted: 'would delete',
  changed: 'would change',
  moved: 'would move',
};

export const DONE: Words = {
  title: 'apply',
  create: 'created',
  configure: 'configured',
  delete: 'deleted',
  createCol: 'Created',
  configureCol: 'Configured',
  deleteCol: 'Deleted',
  createHead: 'Created',
  configureHead: 'Configured',
  pruneHead: 'Pruned',
  created: 'created',
  configured: 'configured',
  deleted: 'deleted',
  changed: 'changed',
  moved: 'moved',
};

/** The words for a report: done for an apply or a corrected drift check, planned for the rest. */
export function wordsFor(report: Pick<Report, 'mode'>): Words {
  const planned = isPlanned(report);
  if (report.mode === 'drift')
    return planned ? { ...PLANNED, title: 'drift check' } : { ...DONE, title: 'drift check (corrected)' };
  return planned ? PLANNED : DONE;
}

/** Whether a report says what would happen (a preview, a drift check that corrected nothing), not what was done. */
export function isPlanned(report: Pick<Report, 'mode'>): boolean {
  const corrected = (report as { drift?: { corrected?: boolean } }).drift?.corrected === true;
  return report.mode === 'preview' || (report.mode === 'drift' && !corrected);
}

/** An object's action in the words of the mode (`would create` in a preview); `skipped`, `unchanged` as they are. */
export function actionWord(action: string, w: Words): string {
  return action === 'created' ? w.created : action === 'configured' ? w.configured : mdText(action);
}

/** Whether a Kustomization was skipped (a dependency not ready, the cluster unreachable) rather than failed. */
export function wasSkipped(k: Pick<Report, 'ok' | 'failure'>): boolean {
  return !k.ok && k.failure?.stage === 'dependency';
}

/**
 * A Kustomization's result as a table cell: `❌ <first line of its error>` (`telling`: the line that
 * tells what failed, tellingLine), `⏭️ skipped: …` for
 * one skipped, `🔄 would change` (or `changed`), `✅ no changes`.
 */
export function resultCell(
  k: Pick<Report, 'ok' | 'failure' | 'error' | 'counts' | 'pruned' | 'before'>,
  deletes: number,
  w: Words,
  telling = false,
): string {
  if (!k.ok) {
    const line = (telling ? tellingLine : firstOf)(k.error ?? 'failed');
    const { text, cut } = cutChars(line, FIRST_LINE_MAX);
    const before = k.before?.result === 'Failed' ? `<br><sub>⚠️ ${mdText(failingOnMain(k.before))}</sub>` : '';
    return `${wasSkipped(k) ? '⏭️' : '❌'} ${mdText(cut > 0 ? `${text}…` : text)}${before}`;
  }
  if (k.counts.created + k.counts.configured + deletes > 0) return `🔄 ${w.changed}`;
  // Objects that left for another Kustomization's build change nothing here, but are worth a word.
  const moved = (k.pruned ?? []).filter((p) => p.action === 'moved').length;
  return moved > 0 ? `↪️ ${moved.toLocaleString('en-US')} ${w.moved} to another Kustomization` : '✅ no changes';
}

/** The first line of a text. */
const firstOf = (text: string): string => text.split(/\r?\n/, 1)[0] ?? '';

/**
 * The line of an error that tells what failed: its first, but when that only introduces the next
 * (`1 object of the apply stage failed the dry-run; …:`), the next one.
 */
export function tellingLine(error: string): string {
  const [first = '', second] = error.split(/\r?\n/, 2);
  return first.trimEnd().endsWith(':') && second !== undefined && second.trim() !== '' ? second.trim() : first;
}

/**
 * What a failing Kustomization's inventory recorded before this run: `also failing on main since
 * 2026-11-20 14:03 UTC` (the first of its failed runs in a row), or without a time when it has none.
 * Plain text.
 */
export function failingOnMain(before: NonNullable<Report['before']>): string {
  const at = before.since === undefined ? undefined : minuteOf(before.since);
  return `also failing on main${at === undefined ? '' : ` since ${at}`}`;
}

/** An ISO time to the minute, in UTC (`2026-11-20 14:03 UTC`); undefined for anything that is not a time. */
function minuteOf(iso: string): string | undefined {
  const t = Date.parse(iso);
  if (!Number.isFinite(t)) return undefined;
  return `${new Date(t).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/**
 * How many of a report's Kustomizations failed and how many were skipped, counted apart: `1
 * failed, 2 skipped of 4 Kustomizations`; undefined when none did or the report has none.
 */
export function tally(report: Pick<Report, 'kustomizations'>): string | undefined {
  const all = report.kustomizations ?? [];
  const skipped = all.filter(wasSkipped).length;
  const failed = all.filter((k) => !k.ok).length - skipped;
  if (failed + skipped === 0) return undefined;
  const parts = [...(failed > 0 ? [`${failed} failed`] : []), ...(skipped > 0 ? [`${skipped} skipped`] : [])];
  return `${parts.join(', ')} of ${all.length} Kustomization${all.length === 1 ? '' : 's'}`;
}

/**
 * Whether an error already gives an object's health: a line of it starts with the object's subject
 * (a health check failure lists each object not ready, `  Deployment/ns/web status: 'InProgress': …`).
 * A rendering shows such an object's health once, in the error, and not again in its health list.
 */
export function namedInError(error: string | undefined, subject: string): boolean {
  if (error === undefined || error === '') return false;
  return error.split(/\r?\n/).some((l) => {
    const t = l.trimStart();
    return t === subject || t.startsWith(`${subject} `) || t.startsWith(`${subject}:`);
  });
}
