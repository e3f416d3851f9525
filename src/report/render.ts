import type { PrunedObject, Report } from './model.js';
import type { ChangeSetEntry } from '../ssa/changeset.js';
import type { HealthResult } from '../kstatus/wait.js';
import { hasChanges } from './model.js';
import { diffBlockLines, maskSecretData } from '../ssa/diff.js';
import { entryNote, takesWithIt } from './deletions.js';
import { destructiveBlock, destructiveLines } from './destructive.js';
import { sourceText } from './source.js';
import { clusterLabel, clusterNames, clusterNameOf, clusterShare, inClusters } from './clusters.js';
import { failuresApart, inReadingOrder, standingCounts, standingOf, tallyLine } from './standing.js';
import { fence } from './text.js';
import { htmlText, mdCode, mdText } from '../util/markdown.js';
import { actionWord, isPlanned, namedInError, resultCell, tally, wasSkipped, wordsFor, type Words } from './words.js';

const VERB: Record<Report['mode'], string> = { apply: 'Applied', preview: 'Preview of', drift: 'Drift check of' };

/** One line per object, like Flux's "server-side apply" log, then the closing lines. */
export function renderLines(report: Report): string[] {
  const lines = report.changeset.map((e) => {
    const note = entryNote(e);
    return `${e.subject} ${e.action}${note ? ` (${note})` : ''}`;
  });
  const dry = report.mode === 'apply' ? '' : ' (dry run)';
  for (const p of report.pruned ?? [])
    lines.push(`${p.subject} ${p.action}${p.action === 'deleted' ? dry : ''}${p.reason ? `: ${p.reason}` : ''}`);
  return [...lines, ...closingLines(report)];
}

/**
 * What a run prints after its progress log, which already had a line per applied and per pruned
 * object: the removed Kustomizations' results and the totals line.
 */
export function closingLines(report: Report): string[] {
  const lines = (report.removed ?? []).map(
    (r) => `Kustomization ${r.kustomization} (removed from the repository) ${r.action}: ${r.reason}`,
  );
  lines.push(...destructiveLines(report));
  const { created, configured, unchanged, skipped, deleted } = report.counts;
  const totals = `${created} created, ${configured} configured, ${deleted} deleted, ${unchanged} unchanged${skipped ? `, ${skipped} skipped` : ''} in ${(report.durationMs / 1000).toFixed(1)}s`;
  const what = subjectOf(report);
  // With several Kustomizations, those that failed and those skipped for them are counted apart.
  const counted = tally(report);
  // A Kustomization skipped (a fan-out job's, whose dependency failed in another job) did nothing:
  // it says so, not "Failed on … after 0 created …: skipped: …".
  lines.push(
    report.ok
      ? `${VERB[report.mode]} ${what}: ${totals}`
      : counted !== undefined
        ? `Failed: ${counted}${inClusters(report)}, after ${totals}: ${report.error ?? 'unknown error'}`
        : wasSkipped(report)
          ? `Skipped ${what}: ${(report.error ?? 'skipped').replace(/^skipped: /, '')}`
          : `Failed on ${what} after ${totals}: ${report.error ?? 'unknown error'}`,
  );
  return lines;
}

/**
 * What a run was about, in words: `Kustomization flux-system/apps (./apps/production)`, or `3
 * Kustomizations`; a folder alone when there is no name (never mistaken for a tool's name). How many
 * of several failed or were skipped is tally()'s.
 */
export function subjectOf(report: Pick<Report, 'kustomization' | 'path' | 'kustomizations' | 'removed'>): string {
  const n = report.kustomizations?.length ?? 0;
  const where = inClusters(report);
  if (n > 0) return `${n} Kustomization${n === 1 ? '' : 's'}${where}`;
  if (report.kustomization === '') return `folder ${report.path}`;
  return `Kustomization ${report.kustomization}${report.path ? ` (${dotted(report.path)})` : ''}`;
}

/** A relative path as Flux writes spec.path (`./apps`), never to be read as a bare name. */
export function dotted(path: string): string {
  return path.startsWith('.') || path.startsWith('/') ? path : `./${path}`;
}

/**
 * The job summary: a headline, the totals, and a table of what changed (unchanged objects folded
 * away); a report with clusters has the tables of its objects in a section per cluster. A preview
 * says what would happen (`to create`, `would configure`), in the words of its PR comment.
 */
export function renderSummary(report: Report): string {
  const { created, configured, unchanged, skipped, deleted } = report.counts;
  const w = wordsFor(report);
  const icon = !report.ok ? '❌' : hasChanges(report) ? '🔄' : '✅';
  const out: string[] = [];
  const n = report.kustomizations?.length ?? 0;
  const clusters = clusterNames(report);
  const what =
    n > 0
      ? `${n} Kustomization${n === 1 ? '' : 's'}${mdText(inClusters(report))}`
      : mdCode(report.kustomization || report.path);
  out.push(`### ${icon} kustomize-reconcile: ${mdText(report.mode)} ${what}`, '');
  out.push(...destructiveBlock(report));
  if (n === 0 && report.kustomization && report.path) out.push(`Path ${mdCode(report.path)}`, '');
  // Several Kustomizations: the tally first, the table, then the error (the PR comment's order).
  if (n > 0) out.push(tallyLine(standingCounts(report.kustomizations!.map(standingOf)), isPlanned(report)), '');
  const failed: string[] = [];
  if (!report.ok) {
    // One line as a line; more (kustomize's errors) in a text block, whose lines are shown as they are.
    const split = n > 0 ? failuresApart(report) : undefined;
    const error = split?.caused ?? report.error ?? 'unknown error';
    const counted = tally(report);
    if (split !== undefined && error === '')
      failed.push(`**Failed:**${counted !== undefined ? ` ${mdText(counted)}` : ''}`);
    else if (counted !== undefined || /[\r\n\u2028\u2029]/.test(error.trim()))
      failed.push(
        `**Failed:**${counted !== undefined ? ` ${mdText(counted)}` : ''}`,
        '',
        '```text',
        ...fence(error.trim()).split(/\r?\n/),
        '```',
      );
    else failed.push('**Failed:** ' + mdText(error));
    failed.push('');
    if (split?.before)
      failed.push('**Already failing on main:**', '', '```text', ...fence(split.before).split(/\r?\n/), '```', '');
  }
  if (n === 0) out.push(...failed);
  const source = report.kustomizations?.length ? undefined : sourceText(report);
  if (source !== undefined) out.push(`Built from ${mdText(source)}`, '');
  // Deletions stand out: a preview that would delete anything says so with a warning sign.
  const deletes = deleted > 0 ? `⚠️ **${num(deleted)}** ${w.delete}` : `**0** ${w.delete}`;
  out.push(
    `**${num(created)}** ${w.create} · **${num(configured)}** ${w.configure} · ${deletes} · **${num(unchanged)}** unchanged${skipped ? ` · **${num(skipped)}** skipped` : ''} · ${(report.durationMs / 1000).toFixed(1)}s`,
  );
  if (report.kustomizations?.length) {
    const cluster = clusters.length > 0;
    out.push(
      '',
      `${cluster ? '| Cluster ' : ''}| Kustomization | Result | ${w.createCol} | ${w.configureCol} | ${w.deleteCol} | Unchanged |`,
      `${cluster ? '| --- ' : ''}| --- | --- | ---: | ---: | ---: | ---: |`,
    );
    let last: string | undefined;
    // In reading order within each cluster (standing.ts), the unchanged ones folded into one line.
    const ordered = (cluster ? clusters : ['']).flatMap((name) =>
      inReadingOrder(
        report.kustomizations!.filter((k) => !cluster || clusterNameOf(k) === name),
        standingOf,
      ),
    );
    const same = ordered.filter((k) => standingOf(k) === 'unchanged');
    for (const k of ordered.filter((x) => standingOf(x) !== 'unchanged')) {
      const c = k.counts;
      // A section per cluster: its name on its first row only.
      const first = cluster && clusterNameOf(k) !== last ? `| ${clusterCell(clusterNameOf(k))} ` : cluster ? '| ' : '';
      last = clusterNameOf(k);
      out.push(
        `${first}| ${mdCode(k.kustomization, 'cell')}${sourceCell(k)} | ${resultCell(k, deletedOf(k), w, true)} | ${num(c.created)} | ${num(c.configured)} | ${num(c.deleted)} | ${num(c.unchanged)} |`,
      );
    }
    if (same.length > 0) {
      const names = same.map((k) => mdCode(clusterLabel(clusterNameOf(k), k.kustomization)));
      out.push(
        '',
        `<details><summary><b>✅ ${same.length} Kustomization${same.length === 1 ? '' : 's'} unchanged</b></summary>`,
        '',
        names.join(' · '),
        '',
        '</details>',
      );
    }
    if (failed.length > 0) out.push('', ...failed);
  }
  if (clusters.length === 0) objectTables(out, report, w);
  for (const c of clusters) {
    const section: string[] = [];
    objectTables(section, clusterShare(report, c), w);
    const title = c === '' ? 'Without a cluster' : `Cluster ${clusterCell(c, 'text')}`;
    if (section.length > 0) out.push('', `#### ${title}`, ...section);
  }
  return out.join('\n') + '\n';
}

/** A Kustomization's deletions as a number (a report file's counts may be anything). */
function deletedOf(k: Report): number {
  return typeof k.counts.deleted === 'number' ? k.counts.deleted : 0;
}

/** Something listed in an object table, with the Kustomization it is of (`removed`: one removed from the repository). */
interface Owned<T> {
  of: string;
  removed: boolean;
  x: T;
}

/** The Kustomization of something listed, as Markdown: `` `ns/name` ``, or `` `ns/name` (removed) ``. */
function ownerText(o: Owned<unknown>, where: 'text' | 'cell'): string {
  return `${mdCode(o.of, where)}${o.removed ? ' (removed)' : ''}`;
}

/**
 * A report's objects, each with its Kustomization: from each of several Kustomizations' own
 * reports, else the report's; a prune result of a Kustomization removed from the repository is its.
 */
function owned(report: Report): {
  changeset: Owned<ChangeSetEntry>[];
  pruned: Owned<PrunedObject>[];
  health: Owned<HealthResult>[];
} {
  const parts = report.kustomizations?.length ? report.kustomizations : [report];
  const name = (k: Report): string => k.kustomization || k.path || '-';
  const tag = <T>(k: Report, xs: readonly T[] | undefined): Owned<T>[] =>
    (xs ?? []).map((x) => {
      const removedWith = (x as { removedWith?: unknown }).removedWith;
      return typeof removedWith === 'string'
        ? { of: removedWith, removed: true, x }
        : { of: name(k), removed: false, x };
    });
  const pruned = parts.flatMap((k) => tag(k, k.pruned));
  const seen = new Set(pruned.map((p) => p.x));
  // The prune results of removed Kustomizations, which are the whole report's, not a part's.
  pruned.push(
    ...tag(
      report,
      (report.pruned ?? []).filter((p) => !seen.has(p)),
    ),
  );
  return {
    changeset: parts.flatMap((k) => tag(k, k.changeset)),
    pruned,
    health: parts.flatMap((k) => tag(k, k.health)),
  };
}

/**
 * The Kustomization column of an object table, with its name on its first row only: shown when the
 * report has several Kustomizations or the table lists objects of more than one.
 */
function ownerColumn<T>(report: Report, rows: readonly Owned<T>[]): (row: Owned<T>, i: number) => string {
  if (!several(report, rows)) return () => '';
  const key = (o: Owned<T>): string => `${o.removed ? 'removed ' : ''}${o.of}`;
  return (row, i) => `| ${i === 0 || key(rows[i - 1]!) !== key(row) ? ownerText(row, 'cell') : ''} `;
}

/** Whether a list of objects is of several Kustomizations (or the report has several): it names them. */
function several<T>(report: Report, rows: readonly Owned<T>[]): boolean {
  return (
    (report.kustomizations?.length ?? 0) > 1 ||
    new Set(rows.map((r) => `${r.removed ? 'removed ' : ''}${r.of}`)).size > 1
  );
}

/** The header cells of an object table, with the Kustomization column when ownerColumn shows it. */
function ownerHead<T>(report: Report, rows: readonly Owned<T>[]): [string, string] {
  return several(report, rows) ? ['| Kustomization ', '| --- '] : ['', ''];
}

/** The tables of a report's objects: pruned, changed (with their diffs), removed Kustomizations, health, unchanged. */
function objectTables(out: string[], report: Report, w: Words): void {
  const owners = owned(report);
  // Objects that moved to another Kustomization are not pruned: they get a table of their own.
  const moved = owners.pruned.filter((p) => p.x.action === 'moved');
  const all = { ...owners, pruned: owners.pruned.filter((p) => p.x.action !== 'moved') };
  if (moved.length > 0) {
    const [head, rule] = ownerHead(report, moved);
    const owner = ownerColumn(report, moved);
    out.push('', `${head}| Moved to another Kustomization | To |`, `${rule}| --- | --- |`);
    moved.forEach((row, i) => {
      out.push(`${owner(row, i)}| ${mdCode(row.x.subject, 'cell')} | ${mdCode(row.x.movedTo ?? '?', 'cell')} |`);
    });
  }
  if (all.pruned.length > 0) {
    // First, before what is created or changed: deletions are what a reviewer must not miss.
    const [head, rule] = ownerHead(report, all.pruned);
    const owner = ownerColumn(report, all.pruned);
    out.push('', `${head}| ${w.pruneHead} | Result | Reason |`, `${rule}| --- | --- | --- |`);
    const pruned = all.pruned.map((p) => p.x);
    all.pruned.forEach((row, i) => {
      const p = row.x;
      const heavy = p.action === 'deleted' ? takesWithIt(p.subject, pruned) : undefined;
      const reason = [p.reason, heavy].filter((x) => x !== undefined && x !== '').join('; ');
      // A preview deletes nothing: it says what prune would do.
      const result = p.action === 'deleted' ? w.deleted : mdText(p.action);
      out.push(`${owner(row, i)}| ${heavy ? '⚠️ ' : ''}${mdCode(p.subject, 'cell')} | ${result} | ${mdText(reason)} |`);
    });
  }
  const changed = all.changeset.filter((e) => e.x.action !== 'unchanged');
  if (changed.length > 0) {
    const [head, rule] = ownerHead(report, changed);
    const owner = ownerColumn(report, changed);
    out.push('', `${head}| Object | Action |`, `${rule}| --- | --- |`);
    changed.forEach((row, i) => {
      const e = row.x;
      out.push(
        `${owner(row, i)}| ${mdCode(e.subject, 'cell')} | ${actionWord(e.action, w)}${entryNote(e) ? ` (${mdText(entryNote(e))})` : ''} |`,
      );
    });
    for (const e of changed.map((c) => c.x).filter((c) => c.diff?.length)) {
      // Secret data shown as changed, never as values (masked again here, whatever the caller did).
      const changes = maskSecretData(e, e.diff!);
      out.push(
        '',
        `<details${changes.length <= 10 ? ' open' : ''}><summary>${htmlText(e.subject)}: ${changes.length} field change(s)</summary>`,
        '',
        '```diff',
      );
      // The object's YAML, diffed (secret values masked); else the changed fields one by one.
      const lines = e.yamlDiff ? e.yamlDiff.slice(0, 200) : changes.slice(0, 50).flatMap(diffBlockLines);
      const more = e.yamlDiff ? e.yamlDiff.length - 200 : changes.length - 50;
      if (more > 0) lines.push(`… and ${more} more ${e.yamlDiff ? 'lines' : 'changes'}`);
      out.push(fence(lines.join('\n')));
      out.push('```', '', '</details>');
    }
  }
  if (report.removed?.length) {
    out.push(
      '',
      '| Removed Kustomization | Objects | deletionPolicy | Result | Reason |',
      '| --- | ---: | --- | --- | --- |',
    );
    for (const r of report.removed)
      out.push(
        `| ${mdCode(r.kustomization, 'cell')} | ${num(r.objects)} | ${mdText(r.deletionPolicy)} | ${mdText(r.action)} | ${mdText(r.reason)} |`,
      );
  }
  // Each object's health once: an object the error already names (a health check failure lists them) is not repeated.
  const health = all.health.filter((h) => !namedInError(report.error, h.x.subject));
  if (health.length > 0) {
    const [head, rule] = ownerHead(report, health);
    const owner = ownerColumn(report, health);
    out.push('', `${head}| Health | Status | Message |`, `${rule}| --- | --- | --- |`);
    health.forEach((row, i) => {
      const h = row.x;
      out.push(`${owner(row, i)}| ${mdCode(h.subject, 'cell')} | ${mdText(h.status)} | ${mdText(h.message)} |`);
    });
  }
  const same = all.changeset.filter((e) => e.x.action === 'unchanged');
  if (same.length > 0) {
    const named = several(report, same);
    out.push('', `<details><summary>${same.length} unchanged</summary>`, '');
    for (const e of same) out.push(`- ${mdCode(e.x.subject)}${named ? ` (${ownerText(e, 'text')})` : ''}`);
    out.push('', '</details>');
  }
}

/** A count from a report (a report file's may be anything): the number, else its text escaped. */
function num(n: unknown): string {
  return typeof n === 'number' ? String(n) : mdText(String(n));
}

/** A cluster as a table cell (or, `where` 'text', part of a heading): code, cut like a name; a dash for no cluster. */
export function clusterCell(cluster: string, where: 'cell' | 'text' = 'cell'): string {
  return cluster === '' ? '–' : mdCode(cluster.length > 100 ? `${cluster.slice(0, 100)}…` : cluster, where);
}

/** Where a Kustomization was built from (when not this checkout), as a line under its name in a table cell, or ''. */
export function sourceCell(k: Pick<Report, 'source'>): string {
  const text = sourceText(k);
  return text === undefined ? '' : `<br><sub>built from ${mdText(text)}</sub>`;
}
