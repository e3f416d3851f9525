/**
 * A check run's face of a report: its conclusion and its output (title, summary, text), each within
 * GitHub's limit. Pure: src/github/publish.ts creates the run; its annotations are annotations.ts's.
 */
import { CHECK_TEXT_LIMIT, errorCap, normaliseLimit, Out, pick, SLACK, summaryTier, within } from './budget.js';
import type { HeadFacts, Tier } from './budget.js';
import type { Report } from './model.js';
import { compose, table, topError } from './sections.js';
import { tallyLine } from './standing.js';
import { clusterLabel, clusterNameOf } from './clusters.js';
import { isPlanned } from './words.js';
import { plainText } from '../util/markdown.js';
import { clamp, firstLine, FIRST_LINE_MAX, fmt } from './text.js';
import { view, type View } from './view.js';

/**
 * A check run's conclusion: failure when the run failed; neutral when a preview or drift check found
 * something to create, configure or delete (prune, or a removed Kustomization's objects); else success.
 */
export function checkConclusion(report: Report): 'success' | 'failure' | 'neutral' {
  if (!report.ok || report.kustomizations?.some((k) => !k.ok)) return 'failure';
  if (report.mode === 'apply') return 'success';
  const deletes =
    (report.pruned ?? []).some((p) => p.action === 'deleted') ||
    (report.removed ?? []).some((r) => r.action === 'deleted');
  return report.counts.created + report.counts.configured > 0 || deletes ? 'neutral' : 'success';
}

/**
 * A check run's output: the title (`3 to create, 2 to configure, 1 to delete`, `No changes` or
 * `Failed: <first line of the error>`), the summary (headline, error and table) and the text (the
 * objects, in the same tiers as the comment), each at most `limit` characters.
 */
export function renderCheckOutput(
  report: Report,
  opts: { runUrl?: string; limit?: number },
): { title: string; summary: string; text: string } {
  const limit = normaliseLimit(opts.limit, CHECK_TEXT_LIMIT);
  const v = view(report);
  return { title: checkTitle(v), summary: checkSummary(v, limit), text: checkText(v, limit, opts.runUrl) };
}

function checkTitle(v: View): string {
  const r = v.report;
  if (!r.ok) {
    // With several Kustomizations, the first in reading order: one this change makes fail before one that failed before it.
    const failed = v.groups.find((g) => v.multi && !g.k.ok)?.k;
    const error = failed
      ? `Kustomization ${clusterLabel(clusterNameOf(failed), failed.kustomization)}: ${failed.error ?? 'failed'}`
      : (r.error ?? 'unknown error');
    // The title is plain text to GitHub: one line, with nothing in it that could mention or link.
    return `Failed: ${plainText(firstLine(error, FIRST_LINE_MAX))}`;
  }
  const parts: [number, string][] = [
    [r.counts.created, v.words.create],
    [r.counts.configured, v.words.configure],
    [v.deletes, v.words.delete],
  ];
  const said = parts.filter(([n]) => n > 0).map(([n, w]) => `${fmt(n)} ${w}`);
  return said.length > 0 ? said.join(', ') : 'No changes';
}

/** The headline, the error and the table; the error and then rows cut as needed. */
function checkSummary(v: View, limit: number): string {
  const render = (cap: number, rowCap: number, max: number): string | undefined =>
    within(max, () => {
      const out = new Out(max + SLACK);
      out.push(headline(v), '');
      if (v.multi) out.push(tallyLine(v.standings, isPlanned(v.report)), '');
      // With several Kustomizations, each one's error is with its section in the text.
      topError(out, v, rowCap < v.rows.length ? 'summary' : 'full', cap);
      table(out, v, rowCap, rowCap === v.rows.length);
      return out.text();
    });
  const whole = render(Infinity, v.rows.length, limit) ?? render(errorCap('truncated', limit), v.rows.length, limit);
  if (whole !== undefined) return whole;
  const cap = errorCap('summary', limit);
  return summaryTier((rowCap, max) => render(cap, rowCap, max), v, limit);
}

/** The objects in the highest tier that fits, or only the notice of how many were left out. */
function checkText(v: View, limit: number, runUrl: string | undefined): string {
  const head = (): HeadFacts => ({ errorCut: 0, rowsCut: 0 });
  const render = (tier: Tier, diffCap: number, max = limit): string | undefined =>
    compose(max, head, tier, diffCap, v, limit, runUrl);
  const picked = pick(render, limit);
  const text = picked?.text ?? render('summary', 0, Infinity) ?? '';
  if (text.trim() === '') return 'No objects to create, configure or delete.\n';
  return clamp(text, limit);
}

function headline(v: View): string {
  const c = v.report.counts;
  const parts = [
    `**${fmt(c.created)}** ${v.words.create}`,
    `**${fmt(c.configured)}** ${v.words.configure}`,
    `**${fmt(v.deletes)}** ${v.words.delete}`,
    `**${fmt(c.unchanged)}** unchanged`,
  ];
  if (c.skipped > 0) parts.push(`**${fmt(c.skipped)}** skipped`);
  const removed = v.removed.length;
  if (removed > 0) parts.push(`**${fmt(removed)}** Kustomization${removed === 1 ? '' : 's'} removed from Git`);
  const icon = !v.report.ok ? '❌' : checkConclusion(v.report) === 'neutral' ? '🔄' : '✅';
  return `${icon} ${parts.join(' · ')}`;
}
