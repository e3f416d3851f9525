/**
 * The Markdown sections of a rendering: the heading, the error block, the table, and the objects
 * per Kustomization with their collapsible diffs; compose puts them together within a budget.
 */
import type { ChangeSetEntry } from '../ssa/changeset.js';
import { diffBlockLines, maskSecretData, type FieldChange } from '../ssa/diff.js';
import { errorCap, notice, Out, SLACK, within, type HeadFacts, type Tier } from './budget.js';
import type { PrunedObject, Report } from './model.js';
import { entryNote, takesWithIt } from './deletions.js';
import { destructiveBlock } from './destructive.js';
import { clusterCell } from './render.js';
import { htmlText, mdCode, mdText } from '../util/markdown.js';
import { clusterLabel, clusterNameOf, inClusters } from './clusters.js';
import { failuresApart, sharedNotes, tallyLine, unexplainedError, type SharedNote, type Standing } from './standing.js';
import { failingOnMain, isPlanned } from './words.js';
import { cutChars, fence, fields, fmt, subject } from './text.js';
import type { Group, View, Words } from './view.js';

/**
 * One rendering: `head` (marker, heading, error, table: whatever the caller writes), the notice of
 * what the tier left out, then the objects. Undefined when it does not fit in `max`.
 */
export function compose(
  max: number,
  head: (out: Out) => HeadFacts,
  tier: Tier,
  diffCap: number,
  v: View,
  limit: number,
  runUrl: string | undefined,
): string | undefined {
  return within(max, () => {
    const top = new Out(max + SLACK);
    const facts = head(top);
    const body = new Out(max + SLACK - top.length);
    const cut =
      tier === 'summary'
        ? { diffs: 0, errors: 0 }
        : objects(body, v, tier === 'list' ? 'none' : diffCap, failureCap(tier, limit, v));
    const facts2 = { ...facts, errorCut: facts.errorCut + cut.errors, diffsCut: cut.diffs };
    const note = tier === 'full' ? '' : notice(tier, facts2, v, limit, runUrl);
    return top.text() + note + body.text();
  });
}

export function heading(out: Out, v: View, revision: string | undefined): void {
  const r = v.report;
  const changes =
    r.counts.created + r.counts.configured + v.deletes > 0 || v.removed.some((x) => x.r.action === 'deleted');
  const icon = !r.ok ? '❌' : changes ? '🔄' : '✅';
  const n = r.kustomizations?.length ?? 0;
  // A Kustomization is named by its name, as Flux names it; its folder comes after.
  const named = r.kustomization || r.path;
  const what = v.multi
    ? `${n} Kustomization${n === 1 ? '' : 's'}${mdText(inClusters(r))}`
    : mdCode(cutChars(named, 200).text);
  out.push(`### ${icon} kustomize-reconcile ${v.words.title}: ${what}`, '');
  // What is deleted or replaced comes first: it is what a reviewer must not miss.
  out.push(...destructiveBlock(r));
  const meta: string[] = [];
  if (!v.multi && r.kustomization && r.path) meta.push(`path ${mdCode(cutChars(r.path, 200).text)}`);
  if (revision) meta.push(`revision ${mdCode(cutChars(revision, 80).text)}`);
  if (meta.length > 0) {
    const line = meta.join(' · ');
    out.push(line.charAt(0).toUpperCase() + line.slice(1), '');
  }
  // Several Kustomizations: how many change, fail with the change, failed before it, stay as they are.
  if (v.multi) out.push(tallyLine(v.standings, isPlanned(r)), '');
}

/**
 * The error at the top: a single Kustomization's whole error; with several, each one's error goes
 * with its section (objects), and the top keeps only what none of them explains (a removed
 * Kustomization's, a report file's), but in the summary tier, which has no sections.
 */
export function topError(out: Out, v: View, tier: Tier, cap: number): number {
  const r = v.report;
  if (!v.multi || r.ok) return errorBlock(out, r.error, cap);
  // The summary tier has no sections: what fails with this change (the table marks what failed before).
  if (tier === 'summary') return errorBlock(out, failuresApart(r).caused || undefined, cap);
  const rest = unexplainedError(
    r.error,
    (r.kustomizations ?? []).filter((k) => !k.ok),
  );
  return errorBlock(out, rest === '' ? undefined : rest, cap);
}

/** The share of the limit each failed Kustomization's error may take in a tier (Infinity in full). */
function failureCap(tier: Tier, limit: number, v: View): number {
  if (tier === 'full') return Infinity;
  const failing = v.groups.filter((g) => !g.k.ok).length;
  return Math.max(MIN_FAILURE_CHARS, Math.floor(errorCap(tier, limit) / Math.max(1, failing)));
}

/** The fewest characters of a failed Kustomization's error a tier keeps. */
const MIN_FAILURE_CHARS = 200;

/** The error in a text block, at most `cap` characters of it; returns how many were left out. */
export function errorBlock(out: Out, error: string | undefined, cap: number): number {
  if (error === undefined) return 0;
  const { text, cut } = cutChars(error, cap);
  out.push('**Error:**', '', '```text', ...fence(text).split(/\r?\n/), '```');
  if (cut > 0) out.push('', `_… ${fmt(cut)} more characters of the error left out; the job summary has all of it._`);
  out.push('');
  return cut;
}

/**
 * The table: a row per Kustomization (with several, the unchanged ones folded into one line under
 * it, naming them when `names`), at most `rowCap` rows.
 */
export function table(out: Out, v: View, rowCap: number, names = true): void {
  // With clusters, a first column names each cluster's section (view.ts's rows carry the cell).
  const cluster = v.clusters.length > 0;
  if (v.multi && v.rows.length === 0) {
    unchangedLine(out, v, names);
    return;
  }
  out.push(
    `${cluster ? '| Cluster ' : ''}| Kustomization | Result | Create | Configure | Delete (prune) | Unchanged |`,
    `${cluster ? '| --- ' : ''}| --- | --- | ---: | ---: | ---: | ---: |`,
    ...v.rows.slice(0, rowCap),
  );
  const rest = v.rows.length - rowCap;
  if (rest > 0)
    out.push(`| … ${fmt(rest)} more Kustomization${rest === 1 ? '' : 's'} | | | | | |${cluster ? ' |' : ''}`);
  out.push('');
  if (v.multi) unchangedLine(out, v, names);
}

/** Most unchanged Kustomizations named in the folded line. */
const UNCHANGED_NAMED = 500;

/** The unchanged Kustomizations in one line, their names (when `names`) behind a click. */
function unchangedLine(out: Out, v: View, names: boolean): void {
  const n = v.unchanged.length;
  if (n === 0) return;
  const what = `✅ ${fmt(n)} Kustomization${n === 1 ? '' : 's'} unchanged`;
  if (!names) {
    out.push(`**${what}**`, '');
    return;
  }
  const shown = v.unchanged.slice(0, UNCHANGED_NAMED).map((u) => mdCode(cutChars(u, 200).text));
  const more = n - shown.length;
  out.push(
    `<details><summary><b>${what}</b></summary>`,
    '',
    shown.join(' · ') + (more > 0 ? ` and ${fmt(more)} more` : ''),
    '',
    '</details>',
    '',
  );
}

/**
 * The objects, per Kustomization: created, configured (diffs whole, cut to `diffCap` characters each,
 * or 'none' for a list), skipped, prune results, unhealthy; then removed Kustomizations and notes.
 * With several Kustomizations, under a heading per standing (standing.ts), a failed one's error
 * (cut to `errorCap` characters) with its section. Returns how many diffs and errors were cut.
 */
function objects(out: Out, v: View, diffCap: number | 'none', errorCap: number): { diffs: number; errors: number } {
  const w = v.words;
  let cut = 0;
  let errors = 0;
  const section = (title: string, n: number): void => {
    out.push(`**${title} (${fmt(n)})**`, '');
  };
  const shown = v.groups.filter((g) => !empty(g) || (v.multi && !g.k.ok));
  let standing: Standing | undefined;
  for (const g of shown) {
    if (v.multi && g.standing !== standing) {
      standing = g.standing;
      const n = shown.filter((x) => x.standing === standing).length;
      out.push(`### ${standingTitle(standing, isPlanned(v.report))} (${fmt(n)})`, '');
    }
    if (g.title !== undefined) out.push(`#### ${groupCluster(g.cluster)}${mdCode(cutChars(g.title, 200).text)}`, '');
    if (v.multi && !g.k.ok) errors += failureBlock(out, g.k, errorCap);
    // Deletions first: they are what a reviewer must not miss.
    if (g.pruned.length > 0) {
      section(w.pruneHead, g.pruned.length);
      for (const p of g.pruned) out.push(`- ${prunedLine(p, w, '', g.pruned)}`);
      out.push('');
    }
    if (g.moved.length > 0) {
      section('Moved to another Kustomization, not deleted', g.moved.length);
      for (const p of g.moved) out.push(`- ${subject(p.subject)} — to ${p.movedTo ? subject(p.movedTo) : '?'}`);
      out.push('');
    }
    if (g.created.length > 0) {
      section(w.createHead, g.created.length);
      for (const e of g.created) {
        const note = entryNote(e);
        out.push(`- ${subject(e.subject)}${note ? ` — ${mdText(note)}` : ''}`);
      }
      out.push('');
    }
    if (g.configured.length > 0) {
      section(w.configureHead, g.configured.length);
      const bare = g.configured.filter((e) => !e.diff?.length);
      const diffed = g.configured.filter((e) => e.diff?.length);
      if (diffCap === 'none') {
        for (const e of g.configured) out.push(`- ${subject(e.subject)} — ${fields(e.diff?.length ?? 0)}${moved(e)}`);
        out.push('');
      } else {
        for (const e of bare) out.push(`- ${subject(e.subject)} — no field changes to show${moved(e)}`);
        if (bare.length > 0) out.push('');
        for (const e of diffed) if (diffBlock(out, e, diffCap)) cut++;
      }
    }
    if (g.skipped.length > 0) {
      section('Skipped', g.skipped.length);
      for (const e of g.skipped) out.push(`- ${subject(e.subject)}`);
      out.push('');
    }
    if (g.unhealthy.length > 0) {
      section('Not healthy', g.unhealthy.length);
      for (const h of g.unhealthy)
        out.push(`- ${subject(h.subject)} — ${mdText(h.status)}${h.message ? `: ${mdText(h.message)}` : ''}`);
      out.push('');
    }
  }
  if (v.removed.length > 0) {
    if (v.multi) out.push('#### Removed from the repository', '');
    else section('Removed from the repository', v.removed.length);
    for (const { r, pruned } of v.removed) {
      const what = r.action === 'deleted' ? w.deleted : mdText(r.action);
      out.push(
        `- ${groupCluster(v.clusters.length > 0 ? clusterNameOf(r) : undefined)}${subject(r.kustomization)} — ${what} (deletionPolicy ${mdText(r.deletionPolicy)}, ${fmt(r.objects)} object${r.objects === 1 ? '' : 's'}, inventory ${subject(r.inventory)})${r.reason ? `: ${mdText(r.reason)}` : ''}`,
      );
      for (const p of pruned) out.push(`  - ${prunedLine(p, w, `${r.kustomization} removed`, pruned)}`);
    }
    out.push('');
  }
  if (v.report.notes.length > 0) {
    const notes = v.multi
      ? sharedNotes(v.report.notes, ownerNames(v))
      : v.report.notes.map((text) => ({ text, owners: [] }));
    section('Notes', notes.length);
    for (const n of notes) out.push(`- ${noteLine(n)}`);
    out.push('');
  }
  return { diffs: cut, errors };
}

/** Whether a Kustomization's section would list nothing. */
function empty(g: Group): boolean {
  return (
    g.created.length +
      g.configured.length +
      g.skipped.length +
      g.pruned.length +
      g.moved.length +
      g.unhealthy.length ===
    0
  );
}

/** A standing's heading, in the words of the mode. */
function standingTitle(s: Standing, planned: boolean): string {
  return {
    changed: planned ? '🔄 Would change' : '🔄 Changed',
    failed: planned ? '❌ Failing with this change' : '❌ Failed',
    skipped: '⏭️ Skipped',
    'failing-before': '⚠️ Already failing on main',
    unchanged: '✅ Unchanged, with something to note',
  }[s];
}

/** A failed Kustomization's error (cut to `cap`), after what its inventory recorded before; returns the characters cut. */
function failureBlock(out: Out, k: Report, cap: number): number {
  if (k.before?.result === 'Failed')
    out.push(`⚠️ _${mdText(failingOnMain(k.before))}; not caused by this change._`, '');
  const { text, cut } = cutChars(k.error ?? 'failed', cap);
  out.push('```text', ...fence(text).split(/\r?\n/), '```', '');
  if (cut > 0) out.push(`_… ${fmt(cut)} more characters of this error left out; the job summary has all of it._`, '');
  return cut;
}

/** How notes name the Kustomizations of a report of several (combine.ts and merge.ts prefix theirs). */
function ownerNames(v: View): Set<string> {
  return new Set(v.groups.flatMap((g) => [g.k.kustomization, clusterLabel(g.cluster ?? '', g.title ?? '')]));
}

/** Owners named after a note shared by at most this many; more are counted, a few named. */
const NOTE_OWNERS_NAMED = 3;

/** A note as a list item: `[owner] text` for one Kustomization's, the text and who gave it for several. */
function noteLine(n: SharedNote): string {
  if (n.owners.length === 0) return mdText(n.text);
  if (n.owners.length === 1) return mdText(`[${n.owners[0]!}] ${n.text}`);
  const named = n.owners.slice(0, NOTE_OWNERS_NAMED).map((o) => mdCode(cutChars(o, 200).text));
  const more = n.owners.length - named.length;
  return `${mdText(n.text)} — _${fmt(n.owners.length)} Kustomizations:_ ${named.join(', ')}${more > 0 ? ` and ${fmt(more)} more` : ''}`;
}

/** ` — moved from \`ns/name\`` after an object that moved here from another Kustomization; '' otherwise. */
const moved = (e: ChangeSetEntry): string => (e.movedFrom ? ` — moved from ${subject(e.movedFrom)}` : '');

/** `\`production\` · ` before a Kustomization's name in a report with clusters; '' otherwise. */
function groupCluster(cluster: string | undefined): string {
  return cluster === undefined || cluster === '' ? '' : `${clusterCell(cluster, 'text')} · `;
}

/** Diffs of at most this many fields are shown open. */
const OPEN_DIFF_FIELDS = 10;

/** One configured object's collapsible diff, at most `cap` characters of it; true when cut. */
function diffBlock(out: Out, e: ChangeSetEntry, cap: number): boolean {
  const changes = visibleChanges(e);
  out.push(
    // Open unless long: a reviewer should not have to click to see a two-line change.
    `<details${changes.length <= OPEN_DIFF_FIELDS ? ' open' : ''}><summary>${htmlText(e.subject)} — configured (${fields(changes.length)})${e.movedFrom ? htmlText(` — moved from ${e.movedFrom}`) : ''}</summary>`,
    '',
    '```diff',
  );
  const lines: string[] = [];
  let used = 0;
  // The object's YAML, diffed (secret values masked); else the changed fields one by one.
  const shown = e.yamlDiff?.map((l) => fence(l)) ?? changes.map(changeLine);
  for (const line of shown) {
    if (used + line.length + 1 > cap) break;
    lines.push(line);
    used += line.length + 1;
  }
  const trailer = (n: number): string => `… ${fmt(n)} more line${n === 1 ? '' : 's'} cut`;
  let rest = shown.length - lines.length;
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

/** A v1 Secret's changes under /data and /stringData masked again (the one Secret mask, src/ssa/diff.ts). */
function visibleChanges(e: ChangeSetEntry): readonly FieldChange[] {
  return maskSecretData(e, e.diff ?? []);
}

/** One change as coloured diff lines (old `-`, new `+`), each on one line, unable to close a code fence. */
function changeLine(c: FieldChange): string {
  return diffBlockLines(c)
    .map((l) => fence(l.replace(/\r\n|[\r\n\u2028\u2029]/g, ' ')))
    .join('\n');
}

function prunedLine(p: PrunedObject, w: Words, tag: string, all: readonly PrunedObject[]): string {
  let reason = p.reason ?? '';
  if (tag && reason.startsWith(tag)) reason = reason.slice(tag.length).replace(/^; /, '');
  const action = p.action === 'deleted' ? w.deleted : mdText(p.action);
  const heavy = p.action === 'deleted' ? takesWithIt(p.subject, all) : undefined;
  const line = `${subject(p.subject)} — ${action}${reason ? `: ${mdText(reason)}` : ''}`;
  return heavy === undefined ? line : `⚠️ ${line} — **${heavy}**`;
}
