/**
 * The pull-request face of a report: the sticky PR comment and a check run's output. Pure: the caller
 * posts them (src/github/publish.ts).
 *
 * GitHub caps a comment body at 65,536 characters and a check run's summary and text at 65,535 each,
 * so the object details are rendered in tiers and the highest tier that fits is used:
 * - full: every diff whole, the error in full;
 * - truncated: each diff cut to one per-object budget (the largest that fits, at least
 *   MIN_DIFF_CHARS characters), the error cut to a quarter of the limit;
 * - list: no diff bodies, one line per object with its action and field count;
 * - summary: the heading and the table only, the error cut to a tenth of the limit.
 * Every tier but full says what it left out and points at the job summary. Lengths are JS string
 * lengths (UTF-16 code units), never fewer than the characters GitHub counts.
 */
import { createHash } from 'node:crypto';
import type { HealthResult } from '../kstatus/wait.js';
import type { ChangeSetEntry } from '../ssa/changeset.js';
import { renderDiff, type FieldChange } from '../ssa/diff.js';
import type { PrunedObject, RemovedKustomization, Report } from './model.js';
import { escapeCode, escapeText } from './render.js';

/** GitHub's maximum issue (and pull request) comment body, in characters. */
export const COMMENT_LIMIT = 65_536;
/** GitHub's maximum check run `output.summary`, and `output.text`, in characters each. */
export const CHECK_TEXT_LIMIT = 65_535;
/** The smallest per-object diff budget of the truncated tier; below it the list tier is used. */
export const MIN_DIFF_CHARS = 100;

export type Tier = 'full' | 'truncated' | 'list' | 'summary';

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
/** The error's share of the limit in the truncated and list tiers, and in the summary tier. */
const ERROR_SHARE = 1 / 4;
const SUMMARY_ERROR_SHARE = 1 / 10;
/** Longest first line of an error in a table cell or a check run title. */
const FIRST_LINE_MAX = 100;

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

/** The PR comment: the marker, a heading, the error, a table per Kustomization, then the objects. */
export function renderComment(report: Report, opts: CommentOptions): { body: string; tier: Tier } {
  const limit = normaliseLimit(opts.limit, COMMENT_LIMIT);
  const v = view(report);
  const render = (tier: Tier, diffCap: number, rowCap = v.rows.length, max = limit): string | undefined =>
    compose(
      max,
      (head) => {
        head.push(opts.marker);
        heading(head, v, opts.revision);
        const errorCut = errorBlock(head, report.error, errorCap(tier, limit));
        table(head, v, rowCap);
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

// ---------------------------------------------------------------------------------------------------
// The view: what the renderings share, computed once.

interface Words {
  title: string;
  create: string;
  configure: string;
  delete: string;
  createHead: string;
  configureHead: string;
  pruneHead: string;
  deleted: string;
  changed: string;
}

const PLANNED: Words = {
  title: 'preview',
  create: 'to create',
  configure: 'to configure',
  delete: 'to delete',
  createHead: 'Would create',
  configureHead: 'Would configure',
  pruneHead: 'Prune',
  deleted: 'would delete',
  changed: 'would change',
};

const DONE: Words = {
  title: 'apply',
  create: 'created',
  configure: 'configured',
  delete: 'deleted',
  createHead: 'Created',
  configureHead: 'Configured',
  pruneHead: 'Prune',
  deleted: 'deleted',
  changed: 'changed',
};

/** What one Kustomization did (or would do) to its objects. */
interface Group {
  /** With several Kustomizations: its `namespace/name`. */
  title?: string;
  created: ChangeSetEntry[];
  configured: ChangeSetEntry[];
  skipped: ChangeSetEntry[];
  pruned: PrunedObject[];
  unhealthy: HealthResult[];
}

/** A Kustomization removed from the repository, with the prune results of its objects. */
interface Removed {
  r: RemovedKustomization;
  pruned: PrunedObject[];
}

interface View {
  report: Report;
  words: Words;
  multi: boolean;
  groups: Group[];
  removed: Removed[];
  /** The table's rows: one per Kustomization, then one per removed Kustomization. */
  rows: string[];
  deletes: number;
  /** Configured objects with a field diff. */
  diffs: number;
}

function view(report: Report): View {
  const corrected = (report as { drift?: { corrected?: boolean } }).drift?.corrected === true;
  const words =
    report.mode === 'apply'
      ? DONE
      : report.mode === 'drift'
        ? corrected
          ? { ...DONE, title: 'drift check (corrected)' }
          : { ...PLANNED, title: 'drift check' }
        : PLANNED;
  const removed = (report.removed ?? []).map((r) => ({
    r,
    pruned: (report.pruned ?? []).filter((p) => ofRemoved(p, r)),
  }));
  const fromRemoved = new Set(removed.flatMap((x) => x.pruned));
  const multi = (report.kustomizations?.length ?? 0) > 0;
  const reports = multi ? report.kustomizations! : [report];
  const groups = reports.map((k) => ({
    ...(multi ? { title: k.kustomization || k.path } : {}),
    created: k.changeset.filter((e) => e.action === 'created'),
    configured: k.changeset.filter((e) => e.action === 'configured'),
    skipped: k.changeset.filter((e) => e.action === 'skipped'),
    pruned: multi ? (k.pruned ?? []) : (k.pruned ?? []).filter((p) => !fromRemoved.has(p)),
    unhealthy: (k.health ?? []).filter((h) => h.status !== 'Current'),
  }));
  const rows = reports.map((k, i) => row(k, groups[i]!, words));
  for (const x of removed) rows.push(removedRow(x, words));
  return {
    report,
    words,
    multi,
    groups,
    removed,
    rows,
    deletes: (report.pruned ?? []).filter((p) => p.action === 'deleted').length,
    diffs: groups.reduce((n, g) => n + g.configured.filter((e) => e.diff?.length).length, 0),
  };
}

/** The prune results src/removed.ts adds for a removed Kustomization's objects. */
function ofRemoved(p: PrunedObject, r: RemovedKustomization): boolean {
  return p.removedWith === r.kustomization;
}

function row(k: Report, g: Group, words: Words): string {
  const deletes = g.pruned.filter((p) => p.action === 'deleted').length;
  const result = !k.ok
    ? `❌ ${escapeText(firstLine(k.error ?? 'failed', FIRST_LINE_MAX))}`
    : k.counts.created + k.counts.configured + deletes > 0
      ? `🔄 ${words.changed}`
      : '✅ no changes';
  const name = escapeCode(cutChars(k.kustomization || k.path || '-', FIRST_LINE_MAX).text);
  const c = k.counts;
  return `| \`${name}\` | ${result} | ${fmt(c.created)} | ${fmt(c.configured)} | ${fmt(deletes)} | ${fmt(c.unchanged)} |`;
}

function removedRow({ r, pruned }: Removed, words: Words): string {
  const deletes = pruned.filter((p) => p.action === 'deleted').length;
  const result = {
    orphaned: '⚠️ removed from Git; objects kept (orphaned)',
    released: 'removed from Git; objects released',
    deleted: `🗑️ removed from Git; ${words.deleted} its objects`,
    failed: '❌ removed from Git; deleting failed',
    refused: '⛔ removed from Git; deleting refused',
  }[r.action];
  const name = escapeCode(cutChars(r.kustomization, FIRST_LINE_MAX).text);
  return `| \`${name}\` (removed) | ${result} | – | – | ${fmt(deletes)} | – |`;
}

// ---------------------------------------------------------------------------------------------------
// Rendering with a budget.

/** Room for the blank lines a rendering ends with, which the final text drops. */
const SLACK = 8;

/** Thrown when an Out would pass its budget. */
class Overflow extends Error {}

/** Lines with a running length (each line counts its newline); pushing past `max` throws Overflow. */
class Out {
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

interface HeadFacts {
  /** Characters of the error left out. */
  errorCut: number;
  /** Table rows left out. */
  rowsCut: number;
}

/**
 * One rendering: `head` (marker, heading, error, table: whatever the caller writes), the notice of
 * what the tier left out, then the objects. Undefined when it does not fit in `max`.
 */
function compose(
  max: number,
  head: (out: Out) => HeadFacts,
  tier: Tier,
  diffCap: number,
  v: View,
  limit: number,
  runUrl: string | undefined,
): string | undefined {
  try {
    // The Outs only stop hopeless renderings early; the final length decides (blank lines at the end go).
    const top = new Out(max + SLACK);
    const facts = head(top);
    const body = new Out(max + SLACK - top.length);
    const diffsCut = tier === 'summary' ? 0 : objects(body, v, tier === 'list' ? 'none' : diffCap);
    const note = tier === 'full' ? '' : notice(tier, { ...facts, diffsCut }, v, limit, runUrl);
    const text = (top.text() + note + body.text()).replace(/\n+$/, '\n');
    return text.length <= max ? text : undefined;
  } catch (err) {
    if (err instanceof Overflow) return undefined;
    throw err;
  }
}

/** The highest of the tiers full, truncated and list that fits; undefined when only summary is left. */
function pick(
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
function summaryTier(render: (rowCap: number, max: number) => string | undefined, v: View, limit: number): string {
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

function errorCap(tier: Tier, limit: number): number {
  if (tier === 'full') return Infinity;
  return Math.floor(limit * (tier === 'summary' ? SUMMARY_ERROR_SHARE : ERROR_SHARE));
}

function heading(out: Out, v: View, revision: string | undefined): void {
  const r = v.report;
  const changes =
    r.counts.created + r.counts.configured + v.deletes > 0 || v.removed.some((x) => x.r.action === 'deleted');
  const icon = !r.ok ? '❌' : changes ? '🔄' : '✅';
  const n = r.kustomizations?.length ?? 0;
  const what = v.multi ? `${n} Kustomization${n === 1 ? '' : 's'}` : `\`${escapeCode(cutChars(r.path, 200).text)}\``;
  out.push(`### ${icon} kustomize-reconcile ${v.words.title}: ${what}`);
  const meta: string[] = [];
  if (!v.multi && r.kustomization) meta.push(`Kustomization \`${escapeCode(cutChars(r.kustomization, 200).text)}\``);
  if (revision) meta.push(`revision \`${escapeCode(cutChars(revision, 80).text)}\``);
  if (meta.length > 0) {
    const line = meta.join(' · ');
    out.push('', line.charAt(0).toUpperCase() + line.slice(1));
  }
  out.push('');
}

/** The error in a text block, at most `cap` characters of it; returns how many were left out. */
function errorBlock(out: Out, error: string | undefined, cap: number): number {
  if (error === undefined) return 0;
  const { text, cut } = cutChars(error, cap);
  out.push('**Error:**', '', '```text', ...fence(text).split(/\r?\n/), '```');
  if (cut > 0) out.push('', `_… ${fmt(cut)} more characters of the error left out; the job summary has all of it._`);
  out.push('');
  return cut;
}

function table(out: Out, v: View, rowCap: number): void {
  out.push(
    '| Kustomization | Result | Create | Configure | Delete (prune) | Unchanged |',
    '| --- | --- | ---: | ---: | ---: | ---: |',
    ...v.rows.slice(0, rowCap),
  );
  const rest = v.rows.length - rowCap;
  if (rest > 0) out.push(`| … ${fmt(rest)} more Kustomization${rest === 1 ? '' : 's'} | | | | | |`);
  out.push('');
}

/** What a tier left out, as a quote under the table. */
function notice(
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

/**
 * The objects, per Kustomization: created, configured (diffs whole, cut to `diffCap` characters each,
 * or 'none' for a list), skipped, prune results, unhealthy; then removed Kustomizations and notes.
 * Returns how many diffs were cut.
 */
function objects(out: Out, v: View, diffCap: number | 'none'): number {
  const w = v.words;
  let cut = 0;
  const section = (title: string, n: number): void => {
    out.push(`**${title} (${fmt(n)})**`, '');
  };
  for (const g of v.groups) {
    const empty =
      g.created.length + g.configured.length + g.skipped.length + g.pruned.length + g.unhealthy.length === 0;
    if (empty) continue;
    if (g.title !== undefined) out.push(`#### \`${escapeCode(cutChars(g.title, 200).text)}\``, '');
    if (g.created.length > 0) {
      section(w.createHead, g.created.length);
      for (const e of g.created) out.push(`- ${subject(e.subject)}`);
      out.push('');
    }
    if (g.configured.length > 0) {
      section(w.configureHead, g.configured.length);
      const bare = g.configured.filter((e) => !e.diff?.length);
      const diffed = g.configured.filter((e) => e.diff?.length);
      if (diffCap === 'none') {
        for (const e of g.configured) out.push(`- ${subject(e.subject)} — ${fields(e.diff?.length ?? 0)}`);
        out.push('');
      } else {
        for (const e of bare) out.push(`- ${subject(e.subject)} — no field changes to show`);
        if (bare.length > 0) out.push('');
        for (const e of diffed) if (diffBlock(out, e, diffCap)) cut++;
      }
    }
    if (g.skipped.length > 0) {
      section('Skipped', g.skipped.length);
      for (const e of g.skipped) out.push(`- ${subject(e.subject)}`);
      out.push('');
    }
    if (g.pruned.length > 0) {
      section(w.pruneHead, g.pruned.length);
      for (const p of g.pruned) out.push(`- ${prunedLine(p, w, '')}`);
      out.push('');
    }
    if (g.unhealthy.length > 0) {
      section('Not healthy', g.unhealthy.length);
      for (const h of g.unhealthy)
        out.push(`- ${subject(h.subject)} — ${h.status}${h.message ? `: ${escapeText(oneLine(h.message))}` : ''}`);
      out.push('');
    }
  }
  if (v.removed.length > 0) {
    if (v.multi) out.push('#### Removed from the repository', '');
    else section('Removed from the repository', v.removed.length);
    for (const { r, pruned } of v.removed) {
      const what = r.action === 'deleted' ? w.deleted : r.action;
      out.push(
        `- ${subject(r.kustomization)} — ${what} (deletionPolicy ${r.deletionPolicy}, ${fmt(r.objects)} object${r.objects === 1 ? '' : 's'}, inventory ${subject(r.inventory)})${r.reason ? `: ${escapeText(oneLine(r.reason))}` : ''}`,
      );
      for (const p of pruned) out.push(`  - ${prunedLine(p, w, `${r.kustomization} removed`)}`);
    }
    out.push('');
  }
  if (v.report.notes.length > 0) {
    section('Notes', v.report.notes.length);
    for (const n of v.report.notes) out.push(`- ${escapeText(oneLine(n))}`);
    out.push('');
  }
  return cut;
}

/** One configured object's collapsible diff, at most `cap` characters of it; true when cut. */
function diffBlock(out: Out, e: ChangeSetEntry, cap: number): boolean {
  const changes = visibleChanges(e);
  out.push(
    `<details><summary>${escapeText(e.subject)} — configured (${fields(changes.length)})</summary>`,
    '',
    '```diff',
  );
  const lines: string[] = [];
  let used = 0;
  for (const c of changes) {
    const line = changeLine(c);
    if (used + line.length + 1 > cap) break;
    lines.push(line);
    used += line.length + 1;
  }
  const trailer = (n: number): string => `… ${fmt(n)} more line${n === 1 ? '' : 's'} cut`;
  let rest = changes.length - lines.length;
  if (rest > 0) {
    while (lines.length > 0 && used + trailer(rest).length + 1 > cap) {
      used -= lines.pop()!.length + 1;
      rest++;
    }
    lines.push(trailer(rest));
  }
  out.push(...lines, '```', '', '</details>', '');
  return rest > 0;
}

/** A v1 Secret's changes under /data and /stringData masked again, as src/ssa/diff.ts does. */
function visibleChanges(e: ChangeSetEntry): readonly FieldChange[] {
  const diff = e.diff ?? [];
  if (e.kind !== 'Secret' || e.apiVersion !== 'v1') return diff;
  return diff.map((c): FieldChange => {
    if (!/^\/(?:data|stringData)(?:\/|$)/.test(c.path)) return c;
    switch (c.kind) {
      case 'added':
        return { path: c.path, kind: c.kind, after: '***' };
      case 'removed':
        return { path: c.path, kind: c.kind, before: '***' };
      case 'changed':
        return { path: c.path, kind: c.kind, before: '*** (before)', after: '*** (after)' };
    }
  });
}

/** One change as renderDiff prints it, on one line, unable to close a code fence. */
function changeLine(c: FieldChange): string {
  return fence(renderDiff([c], 1).replace(/\r\n|[\r\n\u2028\u2029]/g, ' '));
}

function prunedLine(p: PrunedObject, w: Words, tag: string): string {
  let reason = p.reason ?? '';
  if (tag && reason.startsWith(tag)) reason = reason.slice(tag.length).replace(/^; /, '');
  const action = p.action === 'deleted' ? w.deleted : p.action;
  return `${subject(p.subject)} — ${action}${reason ? `: ${escapeText(oneLine(reason))}` : ''}`;
}

// ---------------------------------------------------------------------------------------------------
// The check run.

function checkTitle(v: View): string {
  const r = v.report;
  if (!r.ok) {
    const failed = r.kustomizations?.find((k) => !k.ok);
    const error = r.error ?? failed?.error ?? 'unknown error';
    return `Failed: ${firstLine(error, FIRST_LINE_MAX)}`;
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
  const render = (cap: number, rowCap: number, max: number): string | undefined => {
    try {
      const out = new Out(max + SLACK);
      out.push(headline(v), '');
      errorBlock(out, v.report.error, cap);
      table(out, v, rowCap);
      const text = out.text().replace(/\n+$/, '\n');
      return text.length <= max ? text : undefined;
    } catch (err) {
      if (err instanceof Overflow) return undefined;
      throw err;
    }
  };
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

// ---------------------------------------------------------------------------------------------------
// Text helpers.

function normaliseLimit(limit: number | undefined, fallback: number): number {
  return limit === undefined || !Number.isFinite(limit) ? fallback : Math.max(0, Math.floor(limit));
}

/** At most `max` UTF-16 units of `s`, never half a surrogate pair, and how many units were left out. */
function cutChars(s: string, max: number): { text: string; cut: number } {
  if (s.length <= max) return { text: s, cut: 0 };
  let end = Math.max(0, Math.floor(max));
  const code = s.charCodeAt(end - 1);
  if (end > 0 && code >= 0xd800 && code <= 0xdbff) end--;
  return { text: s.slice(0, end), cut: s.length - end };
}

/** At most `limit` characters of `text`, ending at a line break where one is left. */
function clamp(text: string, limit: number): string {
  const { text: kept, cut } = cutChars(text, limit);
  if (cut === 0) return kept;
  const end = kept.lastIndexOf('\n');
  return end > 0 ? kept.slice(0, end + 1) : kept;
}

function firstLine(s: string, max: number): string {
  const line = s.split(/\r?\n/, 1)[0] ?? '';
  const { text, cut } = cutChars(line, max);
  return cut > 0 ? `${text}…` : text;
}

function oneLine(s: string): string {
  return s.replace(/\s*(?:\r\n|[\r\n\u2028\u2029])\s*/g, ' ');
}

/** An object's subject as inline code. */
function subject(s: string): string {
  return `\`${escapeCode(s)}\``;
}

function fields(n: number): string {
  return `${fmt(n)} field${n === 1 ? '' : 's'}`;
}

/** A triple backtick cannot close a fence once it is three quotes (as render.ts does). */
function fence(s: string): string {
  return s.replaceAll('```', "'''");
}

function fmt(n: number): string {
  return n.toLocaleString('en-US');
}

/** A URL as a Markdown link destination: whitespace, angle brackets and parentheses percent-encoded. */
function safeUrl(url: string): string {
  return url.replace(/[\s<>()]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}
