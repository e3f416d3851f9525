/**
 * The pull-request face of a report: the sticky PR comment, and (re-exported from check.ts) a check
 * run's conclusion and output. Pure: the caller posts them (src/github/publish.ts).
 *
 * The parts: view.ts (the report as the renderings see it), budget.ts (GitHub's limits and the
 * tiers: full, truncated, list, summary), sections.ts (the Markdown sections), check.ts (the check
 * run), annotations.ts (its annotations), text.ts (Markdown text helpers). Lengths are JS string
 * lengths (UTF-16 code units), never fewer than the characters GitHub counts.
 */
import { createHash } from 'node:crypto';
import { COMMENT_LIMIT, errorCap, normaliseLimit, pick, summaryTier, type Tier } from './budget.js';
import type { Report } from './model.js';
import { compose, heading, table, topError } from './sections.js';
import { cutChars } from './text.js';
import { view } from './view.js';

export { CHECK_TEXT_LIMIT, COMMENT_LIMIT, MIN_DIFF_CHARS, type Tier } from './budget.js';
export { checkConclusion, renderCheckOutput } from './check.js';

export interface CommentOptions {
  /** The first line of the body, from commentMarker. */
  marker: string;
  /** Link to the job summary / run page for what the comment leaves out. */
  runUrl?: string;
  /** Maximum body length; COMMENT_LIMIT by default. */
  limit?: number;
  /** The commit previewed, shown under the heading. */
  revision?: string;
}

/** Longest sanitised key kept verbatim in a marker; a longer one is cut and given a hash of the whole. */
const MARKER_KEY_MAX = 200;

/**
 * The hidden first line that identifies our sticky comment for a set of Kustomizations: `&`, `<`
 * and `>` become entities and control characters numeric references, so the key can neither close
 * the HTML comment nor break the line; a key longer than 200 characters is cut and ends in a hash
 * of the whole key, so different keys keep different markers.
 */
export function commentMarker(key: string): string {
  let safe = key
    .replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'))
    .replace(/[\p{Cc}\u2028\u2029]/gu, (c) => `&#${c.codePointAt(0) ?? 0};`);
  if (safe.length > MARKER_KEY_MAX) {
    const hash = createHash('sha256').update(key).digest('hex').slice(0, 16);
    safe = `${cutChars(safe, MARKER_KEY_MAX - hash.length - 1).text}…${hash}`;
  }
  return `<!-- kustomize-reconcile: ${safe} -->`;
}

/**
 * The PR comment: the marker, a heading, the error, a table per Kustomization, then the objects.
 * With several Kustomizations: a tally, the table of those that change or fail (unchanged ones
 * folded into one line), then each one's section in reading order (standing.ts), a failure's error
 * with its Kustomization, and notes shared by several said once.
 */
export function renderComment(report: Report, opts: CommentOptions): { body: string; tier: Tier } {
  const limit = normaliseLimit(opts.limit, COMMENT_LIMIT);
  const v = view(report);
  const render = (tier: Tier, diffCap: number, rowCap = v.rows.length, max = limit): string | undefined =>
    compose(
      max,
      (head) => {
        head.push(opts.marker);
        heading(head, v, opts.revision);
        const errorCut = topError(head, v, tier, errorCap(tier, limit));
        // The unchanged Kustomizations' names go first when room runs short, before any diff is cut.
        table(head, v, rowCap, tier === 'full');
        return { errorCut, rowsCut: v.rows.length - rowCap };
      },
      tier,
      diffCap,
      v,
      limit,
      opts.runUrl,
    );
  const picked = pick(render, limit);
  if (picked) return { body: picked.text, tier: picked.tier };
  return { body: summaryTier((rowCap, max) => render('summary', 0, rowCap, max), v, limit), tier: 'summary' };
}
