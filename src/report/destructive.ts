/**
 * What a change deletes or replaces that is live, in words a reviewer reads in ten seconds (pure):
 * the first lines of the PR comment and the job summary, and the closing lines of the log. Renamed
 * objects with what the rename costs, recreated objects (force, an immutable field), deletions of
 * the kinds whose loss reaches beyond the object (ssa/renames.ts DESTRUCTIVE_KINDS), then a count of
 * the other deletions; moves between Kustomizations are said too, as the good news they are.
 */
import type { PrunedObject, Report } from './model.js';
import { groupOf } from '../objects/id.js';
import { DESTRUCTIVE_ALLOWED, DESTRUCTIVE_ANNOTATION, isDestructiveKind, recreateCost } from '../ssa/renames.js';
import { takesWithIt } from './deletions.js';
import { mdCode, mdText } from '../util/markdown.js';
import { DONE, isPlanned, PLANNED } from './words.js';

/** One object's line: its subject, and what happens to it. */
export interface DestructiveItem {
  subject: string;
  /** For a rename: the object created in its place. */
  to?: string;
  text: string;
}

export interface Destructive {
  /** `would delete 3 and replace 1 live object(s)`, `deleted 3 live object(s)`; absent with moves alone. */
  headline?: string;
  /** The objects worth naming, most costly first, at most ITEMS_SHOWN. */
  items: DestructiveItem[];
  /** Deletions and replacements not named in items, counted per kind: `18 ConfigMap, 2 Secret`. */
  more: string;
  /** `2 object(s) move between Kustomizations (kept, not recreated)`, when any do. */
  moves?: string;
}

/** Objects named in the first lines; the rest are counted. */
export const ITEMS_SHOWN = 5;

/** Every Kustomization's report: the report's own, or each of several. */
const parts = (r: Report): Report[] => (r.kustomizations?.length ? r.kustomizations : [r]);

/** A pruned object's group and kind: a subject has no group, so the kinds DESTRUCTIVE_KINDS names are known by kind. */
function prunedKind(p: PrunedObject): { group: string; kind: string } {
  const kind = p.subject.split('/')[0] ?? '';
  const groups: Record<string, string> = {
    CustomResourceDefinition: 'apiextensions.k8s.io',
    Deployment: 'apps',
    StatefulSet: 'apps',
    DaemonSet: 'apps',
  };
  return { group: groups[kind] ?? '', kind };
}

/** What deleting a live object of a destructive kind takes, in words. */
function deletionCost(p: PrunedObject, all: readonly PrunedObject[]): string {
  const heavy = takesWithIt(p.subject, all);
  if (heavy !== undefined) return `deleted: ${heavy}`;
  switch (p.subject.split('/')[0]) {
    case 'PersistentVolumeClaim':
      return 'deleted: its volume is released, and its data kept or deleted by the reclaim policy';
    case 'PersistentVolume':
      return 'deleted: its data is kept or deleted by its reclaim policy';
    case 'Service':
      return 'deleted: its cluster IP (and any load-balancer address) goes with it';
    default:
      return 'deleted: its pods stop';
  }
}

/** What `report` deletes or replaces that is live, or undefined when nothing. */
export function destructiveOf(report: Report, preview: boolean): Destructive | undefined {
  const reports = parts(report);
  const renamed = reports.flatMap((r) => r.renamed ?? []);
  const renamedFrom = new Set(renamed.map((r) => r.from));
  const pruned = report.pruned ?? reports.flatMap((r) => r.pruned ?? []);
  const deleted = pruned.filter((p) => p.action === 'deleted' && p.reason !== 'already gone');
  const moved = pruned.filter((p) => p.action === 'moved');
  const recreated = reports.flatMap((r) => r.changeset).filter((e) => e.recreated);
  const items: DestructiveItem[] = [
    // What Kubernetes deletes because of the change says so, and leads: nobody expects it from the diff.
    ...deleted
      .filter((p) => p.by !== undefined)
      .map((p) => ({ subject: p.subject, text: p.reason ?? `deleted by ${p.by}` })),
    ...renamed.map((r) => ({ subject: r.from, to: r.to, text: r.cost })),
    ...recreated.map((e) => ({
      subject: e.subject,
      text: `deleted and created again (immutable ${e.recreated!.join(', ') || 'field'} changed): ${recreateCost(groupOf(e.apiVersion), e.kind)}`,
    })),
    ...deleted
      .filter(
        (p) =>
          p.by === undefined &&
          !renamedFrom.has(p.subject) &&
          isDestructiveKind(prunedKind(p).group, prunedKind(p).kind),
      )
      .map((p) => ({ subject: p.subject, text: deletionCost(p, pruned) })),
  ];
  const total = deleted.length + recreated.length;
  const moves =
    moved.length > 0
      ? `${moved.length} object(s) ${(preview ? PLANNED : DONE).moved} between Kustomizations: kept, not deleted nor recreated`
      : undefined;
  if (total === 0 && moves === undefined) return undefined;
  const counts = [
    deleted.length > 0 ? `${preview ? 'delete' : 'deleted'} ${deleted.length}` : '',
    recreated.length > 0 ? `${preview ? 'replace' : 'replaced'} ${recreated.length}` : '',
  ].filter(Boolean);
  return {
    ...(total > 0
      ? { headline: `${preview ? 'This change would ' : 'This run '}${counts.join(' and ')} live object(s)` }
      : {}),
    items: items.slice(0, ITEMS_SHOWN),
    more: perKind(
      [...deleted.map((p) => p.subject), ...recreated.map((e) => e.subject)],
      new Set(items.slice(0, ITEMS_SHOWN).map((i) => i.subject)),
    ),
    ...(moves ? { moves } : {}),
  };
}

/** The subjects not in `shown`, counted per kind, most first: `18 ConfigMap, 2 Secret`; '' for none. */
function perKind(subjects: readonly string[], shown: ReadonlySet<string>): string {
  const counts = new Map<string, number>();
  for (const s of subjects) {
    if (shown.has(s)) continue;
    const kind = s.split('/')[0] ?? '';
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  return [...counts]
    .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
    .map(([kind, n]) => `${n.toLocaleString('en-US')} ${kind}`)
    .join(', ');
}

/** The plain-text lines (the log's closing lines): the headline and one line per named item, and the moves. */
export function destructiveLines(report: Report): string[] {
  const d = destructiveOf(report, isPlanned(report));
  if (d === undefined) return [];
  // The log listed every object already: only what costs more than the object itself is said again.
  const named = d.items.map((i) => `  ${i.subject} ${i.to ? `renamed to ${i.to}: ` : ''}${i.text}`);
  const needs = approvalNeeded(report);
  return [
    ...(d.headline && d.items.length > 0 ? [`${d.headline}:`, ...named] : []),
    ...(needs !== undefined ? [needs] : []),
    ...(d.moves ? [d.moves] : []),
  ];
}

/** Objects named in the approval line; the rest are counted. */
const APPROVAL_SHOWN = 5;

/** What applying a preview needs with destructive-approval-label (Report.approval), in words; undefined when nothing. */
export function approvalNeeded(report: Report): string | undefined {
  const all = parts(report).flatMap((r) => (r.approval ? [r.approval] : []));
  if (all.length === 0) return undefined;
  const objects = all.flatMap((a) => a.objects);
  const shown = objects.slice(0, APPROVAL_SHOWN).join(', ') + (objects.length > APPROVAL_SHOWN ? ', …' : '');
  return (
    `Applying it needs a reviewer's yes (destructive-approval-label): the label "${all[0]!.label}" on this pull ` +
    `request, or the annotation ${DESTRUCTIVE_ANNOTATION}: ${DESTRUCTIVE_ALLOWED} on each of the ${objects.length} ` +
    `object(s) it would delete or recreate (${shown})`
  );
}

/** The Markdown block (a GitHub alert) under a rendering's heading; empty when nothing is deleted, replaced or moved. */
export function destructiveBlock(report: Report): string[] {
  const d = destructiveOf(report, isPlanned(report));
  if (d === undefined) return [];
  const out = [d.headline ? '> [!WARNING]' : '> [!NOTE]'];
  if (d.headline) {
    out.push(`> **${mdText(d.headline)}:**`);
    for (const i of d.items)
      out.push(`> - ${mdCode(i.subject)} ${i.to ? `renamed to ${mdCode(i.to)}: ` : ''}${mdText(i.text)}`);
    if (d.more) out.push(`> - ${d.items.length > 0 ? 'and ' : ''}${mdText(d.more)}`);
  }
  const needs = approvalNeeded(report);
  if (needs !== undefined) out.push('>', `> ${mdText(needs)}`);
  if (d.moves) out.push(...(d.headline ? ['>'] : []), `> ${mdText(d.moves)}`);
  return [...out, ''];
}

/** An object that moved between Kustomizations, as the `moved` output lists it. */
export interface MovedObject {
  subject: string;
  /** The Kustomization (`namespace/name`) whose build it left. */
  from: string;
  /** The Kustomization whose build has it now. */
  to: string;
}

/**
 * The objects that moved between Kustomizations in `report`: from the side that left them (its
 * prune: moved) and the side that took them (its apply: movedFrom), each object once.
 */
export function movedObjects(report: Report): MovedObject[] {
  const out = new Map<string, MovedObject>();
  for (const r of parts(report)) {
    for (const e of r.changeset) {
      if (e.movedFrom) out.set(e.subject, { subject: e.subject, from: e.movedFrom, to: r.kustomization });
    }
    for (const p of r.pruned ?? []) {
      if (p.action === 'moved' && p.movedTo && !out.has(p.subject))
        out.set(p.subject, { subject: p.subject, from: r.kustomization, to: p.movedTo });
    }
  }
  return [...out.values()].sort((a, b) => a.subject.localeCompare(b.subject));
}
