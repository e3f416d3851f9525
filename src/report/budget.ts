/**
 * The size budget of the PR comment and the check run. GitHub caps a comment body at 65,536
 * characters and a check run's summary and text at 65,535 each, so the object details are rendered
 * in tiers and the highest tier that fits is used:
 * - full: every diff whole, the error in full;
 * - truncated: each diff cut to one per-object budget (the largest that fits, at least
 *   MIN_DIFF_CHARS characters), the error cut to a quarter of the limit;
 * - list: no diff bodies, one line per object with its action and field count;
 * - summary: the heading and the table only, the error cut to a tenth of the limit.
 * Every tier but full says what it left out (notice) and points at the job summary.
 */
import { clamp, fmt, safeUrl } from './text.js';
import type { View } from './view.js';

/** GitHub's maximum issue (and pull request) comment body, in characters. */
export const COMMENT_LIMIT = 65_536;
/** GitHub's maximum check run `output.summary`, and `output.text`, in characters each. */
export const CHECK_TEXT_LIMIT = 65_535;
/** The smallest per-object diff budget of the truncated tier; below it the list tier is used. */
export const MIN_DIFF_CHARS = 100;

export type Tier = 'full' | 'truncated' | 'list' | 'summary';

/** The error's share of the limit in the truncated and list tiers, and in the summary tier. */
const ERROR_SHARE = 1 / 4;
const SUMMARY_ERROR_SHARE = 1 / 10;

/** Room for the blank lines a rendering ends with, which the final text drops. */
export const SLACK = 8;

/** Thrown when an Out would pass its budget. */
class Overflow extends Error {}

/** Lines with a running length (each line counts its newline); pushing past `max` throws Overflow. */
export class Out {
  readonly lines: string[] = [];
  length = 0;
  constructor(readonly max: number) {}
  push(...lines: string[]): void {
    for (const line of lines) {
      this.length += line.length + 1;
      if (this.length > this.max) throw new Overflow();
      this.lines.push(line);
    }
  }
  text(): string {
    return this.lines.map((l) => l + '\n').join('');
  }
}

/**
 * What `write` renders, its trailing blank lines dropped, when that fits in `max`; undefined when
 * not or when one of its Outs overflowed. The Outs only stop hopeless renderings early; the final
 * length decides.
 */
export function within(max: number, write: () => string): string | undefined {
  try {
    const text = write().replace(/\n+$/, '\n');
    return text.length <= max ? text : undefined;
  } catch (err) {
    if (err instanceof Overflow) return undefined;
    throw err;
  }
}

/** `limit` as a whole number of characters, `fallback` when absent or not finite. */
export function normaliseLimit(limit: number | undefined, fallback: number): number {
  return limit === undefined || !Number.isFinite(limit) ? fallback : Math.max(0, Math.floor(limit));
}

/** The highest of the tiers full, truncated and list that fits; undefined when only summary is left. */
export function pick(
  render: (tier: Tier, diffCap: number) => string | undefined,
  limit: number,
): { text: string; tier: Tier } | undefined {
  const full = render('full', Infinity);
  if (full !== undefined) return { text: full, tier: 'full' };
  // Every diff whole and only the error cut; else the largest per-object budget that fits.
  const whole = render('truncated', Infinity);
  if (whole !== undefined) return { text: whole, tier: 'truncated' };
  let best = render('truncated', MIN_DIFF_CHARS);
  if (best !== undefined) {
    let lo = MIN_DIFF_CHARS; // fits
    let hi = limit; // does not: a diff cut to the whole limit leaves no room for the rest
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      const r = render('truncated', mid);
      if (r === undefined) hi = mid;
      else {
        lo = mid;
        best = r;
      }
    }
    return { text: best, tier: 'truncated' };
  }
  const list = render('list', 0);
  return list === undefined ? undefined : { text: list, tier: 'list' };
}

/** The summary tier: as many table rows as fit; past even none, the body cut to the limit. */
export function summaryTier(
  render: (rowCap: number, max: number) => string | undefined,
  v: View,
  limit: number,
): string {
  const all = render(v.rows.length, limit);
  if (all !== undefined) return all;
  let lo = -1; // the most rows known to fit (-1: not even none)
  let hi = v.rows.length;
  let best: string | undefined;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    const r = render(mid, limit);
    if (r === undefined) hi = mid;
    else {
      lo = mid;
      best = r;
    }
  }
  return best ?? clamp(render(0, Infinity) ?? '', limit);
}

export function errorCap(tier: Tier, limit: number): number {
  if (tier === 'full') return Infinity;
  return Math.floor(limit * (tier === 'summary' ? SUMMARY_ERROR_SHARE : ERROR_SHARE));
}

export interface HeadFacts {
  /** Characters of the error left out. */
  errorCut: number;
  /** Table rows left out. */
  rowsCut: number;
}

/** What a tier left out, as a quote under the table. */
export function notice(
  tier: Exclude<Tier, 'full'>,
  facts: HeadFacts & { diffsCut: number },
  v: View,
  limit: number,
  runUrl: string | undefined,
): string {
  const where = runUrl ? `the [job summary](${safeUrl(runUrl)})` : 'the job summary of this workflow run';
  const why = `to stay within ${fmt(limit)} characters`;
  const parts: string[] = [];
  if (tier === 'truncated' && facts.diffsCut > 0)
    parts.push(`${fmt(facts.diffsCut)} of ${fmt(v.diffs)} diffs are cut short`);
  if (tier === 'list' && v.diffs > 0)
    parts.push(`the field diffs of ${fmt(v.diffs)} object${v.diffs === 1 ? '' : 's'} are left out`);
  if (facts.errorCut > 0) parts.push('the error is cut');
  if (v.unchanged.length > 0) parts.push('the unchanged Kustomizations are not named');
  if (facts.rowsCut > 0) parts.push(`${fmt(facts.rowsCut)} table row${facts.rowsCut === 1 ? ' is' : 's are'} left out`);
  const lines: string[] = [];
  if (tier === 'summary') {
    const c = v.report.counts;
    const pruned = v.report.pruned ?? [];
    const shown: [number, string][] = [
      [c.created, v.words.create],
      [c.configured, v.words.configure],
      [v.deletes, v.words.delete],
      [c.skipped + pruned.filter((p) => p.action === 'skipped').length, 'skipped'],
      [pruned.filter((p) => p.action === 'failed').length, 'failed to delete'],
    ];
    const n = c.created + c.configured + c.skipped + pruned.length;
    const breakdown = shown.filter(([k]) => k > 0).map(([k, w]) => `${fmt(k)} ${w}`);
    if (n > 0) {
      lines.push(
        `> ✂️ **${fmt(n)} more object${n === 1 ? '' : 's'}** (${breakdown.join(', ')}) — see ${where}.`,
        `> Objects, diffs and notes are left out ${why}${parts.length > 0 ? `; ${parts.join(', ')}` : ''}.`,
      );
    } else {
      parts.unshift('notes and health results are left out');
      lines.push(`> ✂️ Shortened ${why}: ${parts.join(', ')}. See ${where} for the rest.`);
    }
  } else {
    lines.push(`> ✂️ Shortened ${why}: ${parts.join(', ') || 'details are left out'}. See ${where} for the rest.`);
  }
  return lines.map((l) => l + '\n').join('') + '\n';
}
