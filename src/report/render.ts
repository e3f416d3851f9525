import type { Report } from './model.js';
import { hasChanges } from './model.js';
import { diffBlockLines, maskSecretData } from '../ssa/diff.js';
import { takesWithIt } from './deletions.js';
import { sourceText } from './source.js';
import { byCluster, clusterNames, clusterNameOf, clusterShare, inClusters } from './clusters.js';
import { fence } from './text.js';
import { htmlText, mdCode, mdText } from '../util/markdown.js';

const VERB: Record<Report['mode'], string> = { apply: 'Applied', preview: 'Preview of', drift: 'Drift check of' };

/** One line per object, like Flux's "server-side apply" log, then the closing lines. */
export function renderLines(report: Report): string[] {
  const lines = report.changeset.map((e) => `${e.subject} ${e.action}${e.note ? ` (${e.note})` : ''}`);
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
  const { created, configured, unchanged, skipped, deleted } = report.counts;
  const totals = `${created} created, ${configured} configured, ${deleted} deleted, ${unchanged} unchanged${skipped ? `, ${skipped} skipped` : ''} in ${(report.durationMs / 1000).toFixed(1)}s`;
  const what = subjectOf(report);
  lines.push(
    report.ok
      ? `${VERB[report.mode]} ${what}: ${totals}`
      : `Failed on ${what} after ${totals}: ${report.error ?? 'unknown error'}`,
  );
  return lines;
}

/**
 * What a run was about, in words: `Kustomization flux-system/apps (./apps/production)`, or `3
 * Kustomizations`; a folder alone when there is no name (never mistaken for a tool's name).
 */
export function subjectOf(
  report: Pick<Report, 'kustomization' | 'path' | 'kustomizations' | 'ok' | 'removed'>,
): string {
  const n = report.kustomizations?.length ?? 0;
  const failed = (report.kustomizations ?? []).filter((k) => !k.ok).length;
  const where = inClusters(report);
  if (n > 0 && failed > 0 && failed < n) return `${failed} of ${n} Kustomizations${where}`;
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
 * away); a report with clusters has the tables of its objects in a section per cluster.
 */
export function renderSummary(report: Report): string {
  const { created, configured, unchanged, skipped, deleted } = report.counts;
  const icon = !report.ok ? '❌' : hasChanges(report) ? '🔄' : '✅';
  const out: string[] = [];
  const n = report.kustomizations?.length ?? 0;
  const clusters = clusterNames(report);
  const what =
    n > 0
      ? `${n} Kustomization${n === 1 ? '' : 's'}${mdText(inClusters(report))}`
      : mdCode(report.kustomization || report.path);
  out.push(`### ${icon} kustomize-reconcile: ${mdText(report.mode)} ${what}`);
  if (n === 0 && report.kustomization && report.path) out.push('', `Path ${mdCode(report.path)}`);
  out.push('');
  if (!report.ok) {
    // One line as a line; more (kustomize's errors) in a text block, whose lines are shown as they are.
    const error = report.error ?? 'unknown error';
    if (/[\r\n\u2028\u2029]/.test(error.trim()))
      out.push('**Failed:**', '', '```text', ...fence(error.trim()).split(/\r?\n/), '```');
    else out.push('**Failed:** ' + mdText(error));
    out.push('');
  }
  const source = report.kustomizations?.length ? undefined : sourceText(report);
  if (source !== undefined) out.push(`Built from ${mdText(source)}`, '');
  // Deletions stand out: a preview that would delete anything says so with a warning sign.
  const deletes =
    deleted > 0 ? `⚠️ **${num(deleted)}** ${report.mode === 'apply' ? 'deleted' : 'to delete'}` : '**0** deleted';
  out.push(
    `**${num(created)}** created · **${num(configured)}** configured · ${deletes} · **${num(unchanged)}** unchanged${skipped ? ` · **${num(skipped)}** skipped` : ''} · ${(report.durationMs / 1000).toFixed(1)}s`,
  );
  if (report.kustomizations?.length) {
    const cluster = clusters.length > 0;
    out.push(
      '',
      `${cluster ? '| Cluster ' : ''}| Kustomization | Result | Created | Configured | Deleted | Unchanged |`,
      `${cluster ? '| --- ' : ''}| --- | --- | ---: | ---: | ---: | ---: |`,
    );
    let last: string | undefined;
    for (const k of byCluster(report.kustomizations, clusters)) {
      const result = k.ok ? 'ok' : `❌ ${mdText(k.error?.split(/\r?\n/)[0] ?? 'failed')}`;
      const c = k.counts;
      // A section per cluster: its name on its first row only.
      const first = cluster && clusterNameOf(k) !== last ? `| ${clusterCell(clusterNameOf(k))} ` : cluster ? '| ' : '';
      last = clusterNameOf(k);
      out.push(
        `${first}| ${mdCode(k.kustomization, 'cell')}${sourceCell(k)} | ${result} | ${num(c.created)} | ${num(c.configured)} | ${num(c.deleted)} | ${num(c.unchanged)} |`,
      );
    }
  }
  if (clusters.length === 0) objectTables(out, report);
  for (const c of clusters) {
    const section: string[] = [];
    objectTables(section, clusterShare(report, c));
    const title = c === '' ? 'Without a cluster' : `Cluster ${clusterCell(c, 'text')}`;
    if (section.length > 0) out.push('', `#### ${title}`, ...section);
  }
  return out.join('\n') + '\n';
}

/** The tables of a report's objects: pruned, changed (with their diffs), removed Kustomizations, health, unchanged. */
function objectTables(out: string[], report: Report): void {
  if (report.pruned?.length) {
    // First, before what is created or changed: deletions are what a reviewer must not miss.
    const title = report.mode === 'apply' ? 'Pruned' : '⚠️ Would prune';
    out.push('', `| ${title} | Result | Reason |`, '| --- | --- | --- |');
    for (const p of report.pruned) {
      const heavy = p.action === 'deleted' ? takesWithIt(p.subject, report.pruned) : undefined;
      const reason = [p.reason, heavy].filter((x) => x !== undefined && x !== '').join('; ');
      // A preview deletes nothing: it says what prune would do.
      const result = report.mode !== 'apply' && p.action === 'deleted' ? 'would delete' : mdText(p.action);
      out.push(`| ${heavy ? '⚠️ ' : ''}${mdCode(p.subject, 'cell')} | ${result} | ${mdText(reason)} |`);
    }
  }
  const changed = report.changeset.filter((e) => e.action !== 'unchanged');
  if (changed.length > 0) {
    out.push('', '| Object | Action |', '| --- | --- |');
    for (const e of changed) {
      out.push(`| ${mdCode(e.subject, 'cell')} | ${mdText(e.action)}${e.note ? ` (${mdText(e.note)})` : ''} |`);
    }
    for (const e of changed.filter((c) => c.diff?.length)) {
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
  if (report.health?.length) {
    out.push('', '| Health | Status | Message |', '| --- | --- | --- |');
    for (const h of report.health)
      out.push(`| ${mdCode(h.subject, 'cell')} | ${mdText(h.status)} | ${mdText(h.message)} |`);
  }
  const same = report.changeset.filter((e) => e.action === 'unchanged');
  if (same.length > 0) {
    out.push('', `<details><summary>${same.length} unchanged</summary>`, '');
    for (const e of same) out.push(`- ${mdCode(e.subject)}`);
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
