/**
 * How a report of several Kustomizations is laid out for a reviewer: each Kustomization's standing
 * (changed, failing with this change, skipped, already failing before it, unchanged), the order
 * they come in (what changes first, unchanged ones last and folded), the tally of them, the notes
 * that several Kustomizations share said once, and the part of a combined error that no
 * Kustomization's own error explains. Pure.
 */
import type { Report } from './model.js';
import { clusterLabel, clusterNameOf } from './clusters.js';
import { combinedError } from './combine.js';
import { wasSkipped } from './words.js';

/**
 * - changed: it creates, configures or deletes objects, or hands some over (moved);
 * - failed: it failed, and its inventory recorded no failure before (this change's);
 * - skipped: a dependency was not ready, and its inventory recorded no failure before;
 * - failing-before: it failed, and so did the last run its inventory recorded (Report.before);
 * - unchanged: the rest.
 */
export type Standing = 'changed' | 'failed' | 'skipped' | 'failing-before' | 'unchanged';

/** The order a reviewer reads them in: what the change does, what it breaks, what was broken, the rest. */
export const STANDINGS: readonly Standing[] = ['changed', 'failed', 'skipped', 'failing-before', 'unchanged'];

type Judged = Pick<Report, 'ok' | 'failure' | 'before' | 'counts' | 'pruned'>;

export function standingOf(k: Judged): Standing {
  if (!k.ok) return k.before?.result === 'Failed' ? 'failing-before' : wasSkipped(k) ? 'skipped' : 'failed';
  const pruned = k.pruned ?? [];
  const deletes = pruned.filter((p) => p.action === 'deleted').length;
  const moved = pruned.filter((p) => p.action === 'moved').length;
  const c = k.counts;
  // A report file's counts may be anything: only numbers count.
  const n = [c.created, c.configured].reduce((a, x) => a + (typeof x === 'number' ? x : 0), 0);
  return n + deletes + moved > 0 ? 'changed' : 'unchanged';
}

/** The items in reading order (STANDINGS), each standing's items in the order they were given. */
export function inReadingOrder<T>(items: readonly T[], standing: (x: T) => Standing): T[] {
  const rank = (x: T) => STANDINGS.indexOf(standing(x));
  return items
    .map((x, i) => ({ x, i, r: rank(x) }))
    .sort((a, b) => a.r - b.r || a.i - b.i)
    .map((e) => e.x);
}

/** How many Kustomizations have each standing. */
export function standingCounts(standings: readonly Standing[]): Record<Standing, number> {
  const out: Record<Standing, number> = { changed: 0, failed: 0, skipped: 0, 'failing-before': 0, unchanged: 0 };
  for (const s of standings) out[s]++;
  return out;
}

/**
 * The tally line of several Kustomizations, in the words of the mode (`planned`: a preview):
 * `🔄 **1** would change · ❌ **2** fail with this change · ⚠️ **3** already failing on main · ✅ **74** unchanged`;
 * a standing no Kustomization has is left out.
 */
export function tallyLine(counts: Record<Standing, number>, planned: boolean): string {
  const parts: [number, string][] = [
    [counts.changed, `🔄 **${counts.changed}** ${planned ? 'would change' : 'changed'}`],
    [
      counts.failed,
      `❌ **${counts.failed}** ${planned ? (counts.failed === 1 ? 'fails' : 'fail') + ' with this change' : 'failed'}`,
    ],
    [counts.skipped, `⏭️ **${counts.skipped}** skipped`],
    [counts['failing-before'], `⚠️ **${counts['failing-before']}** already failing on main`],
    [counts.unchanged, `✅ **${counts.unchanged}** unchanged`],
  ];
  return parts
    .filter(([n]) => n > 0)
    .map(([, t]) => t)
    .join(' · ');
}

/** A note said once, with the Kustomizations it is about (none: a note of the whole run). */
export interface SharedNote {
  text: string;
  owners: string[];
}

/**
 * The notes of a report of several Kustomizations (each Kustomization's as `[name] note`), each
 * text once with the Kustomizations (of `names`) that gave it, in the order they first appear. A
 * note of anything else (a report file, the whole run) stays as it is, and is never merged.
 */
export function sharedNotes(notes: readonly string[], names: ReadonlySet<string>): SharedNote[] {
  const out: SharedNote[] = [];
  const byText = new Map<string, SharedNote>();
  for (const note of notes) {
    const m = /^\[([^\]\r\n]+)\] ([\s\S]*)$/.exec(note);
    if (m === null || !names.has(m[1]!)) {
      out.push({ text: note, owners: [] });
      continue;
    }
    const [, owner, text] = m as unknown as [string, string, string];
    const known = byText.get(text);
    if (known === undefined) {
      const shared = { text, owners: [owner] };
      byText.set(text, shared);
      out.push(shared);
    } else if (!known.owners.includes(owner)) known.owners.push(owner);
  }
  return out;
}

/**
 * What a combined error (combine.ts: `Kustomization a: …`, `Kustomizations a, b: …` for each failed
 * Kustomization's error) says beyond its Kustomizations' own errors: what the run or the merge added
 * (removed Kustomizations, report files, missing jobs); '' when nothing.
 */
export function unexplainedError(error: string | undefined, failed: readonly Pick<Report, 'error'>[]): string {
  let rest = error ?? '';
  for (const e of new Set(failed.map((k) => k.error ?? 'failed'))) {
    for (;;) {
      const at = findOwnError(rest, e);
      if (at === undefined) break;
      rest = rest.slice(0, at.start) + rest.slice(at.end).replace(/^\r?\n/, '');
    }
  }
  return rest.trim();
}

/** Where `Kustomization… <names>: <error>` is in `text`, from the start of its line; undefined when not. */
function findOwnError(text: string, error: string): { start: number; end: number } | undefined {
  let from = 0;
  for (;;) {
    const i = text.indexOf(`: ${error}`, from);
    if (i < 0) return undefined;
    const start = text.lastIndexOf('\n', i) + 1;
    const end = i + 2 + error.length;
    const endsLine = end === text.length || text[end] === '\n' || text[end] === '\r';
    if (/^Kustomizations? /.test(text.slice(start, i)) && endsLine) return { start, end };
    from = i + 1;
  }
}

/**
 * A report of several Kustomizations' error in two: what fails with this change (with what the run
 * added, a removed Kustomization's failure or a report file's), and what failed before it
 * (Report.before), each Kustomization's error in reading order; '' for none.
 */
export function failuresApart(report: Report): { caused: string; before: string } {
  const failed = inReadingOrder(
    (report.kustomizations ?? []).filter((k) => !k.ok),
    standingOf,
  );
  const name = (k: Report) => clusterLabel(clusterNameOf(k), k.kustomization);
  const old = failed.filter((k) => standingOf(k) === 'failing-before');
  const fresh = failed.filter((k) => standingOf(k) !== 'failing-before');
  const caused = [
    ...(fresh.length > 0 ? [combinedError(fresh, name)] : []),
    unexplainedError(report.error, failed),
  ].filter((e) => e !== '');
  return {
    caused: caused.join('\n'),
    before: old.length > 0 ? combinedError(old, name) : '',
  };
}
