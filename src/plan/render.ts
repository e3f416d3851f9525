/**
 * The plan as a workflow and a reader see it: the action's outputs (JSON for fromJSON), the CLI's
 * JSON and text, and the job summary. Pure.
 */
import { mdCode, mdText } from '../util/markdown.js';
import type { PlanEntry } from './plan.js';
import type { PlanResult } from './run.js';

/** A matrix entry as the workflow gets it: every field a string or number, `reason` only when set. */
function matrixEntry(e: PlanEntry): Record<string, unknown> {
  return { ...e, dependsOn: e.dependsOn.join(',') };
}

/**
 * The action's outputs: `matrix` is `{"include": [...]}`, ready for `strategy.matrix:
 * ${{ fromJSON(needs.plan.outputs.matrix) }}` (GitHub refuses an empty matrix: test `count`).
 */
export function planOutputs(plan: PlanResult): Record<string, string> {
  return {
    matrix: JSON.stringify({ include: plan.matrix.map(matrixEntry) }),
    levels: JSON.stringify(plan.levels),
    affected: JSON.stringify(plan.affected),
    clusters: JSON.stringify(plan.clusters),
    count: String(plan.matrix.length),
  };
}

/** `plan --output json`: everything the outputs hold, plus the whole list and the change. */
export function planJson(plan: PlanResult): string {
  return (
    JSON.stringify(
      {
        matrix: { include: plan.matrix.map(matrixEntry) },
        levels: plan.levels,
        affected: plan.affected,
        clusters: plan.clusters,
        count: plan.matrix.length,
        all: plan.all.map((e) => e.id),
        ...(plan.change ? { change: plan.change } : {}),
        ...(plan.allBecause ? { allAffectedBecause: plan.allBecause } : {}),
      },
      null,
      2,
    ) + '\n'
  );
}

const who = (e: PlanEntry) => (e.cluster ? `${e.cluster}: ${e.kustomization}` : e.kustomization);

/** The CLI's text: one line per job, by level, with why it runs. */
export function planText(plan: PlanResult): string {
  const lines: string[] = [];
  const clusters = plan.clusters.filter((c) => c !== '');
  const scope =
    clusters.length > 0
      ? ` on ${clusters.length} cluster${clusters.length === 1 ? '' : 's'} (${clusters.join(', ')})`
      : '';
  if (plan.change) {
    lines.push(
      `${plan.matrix.length} of ${plan.all.length} Kustomizations${scope} affected by ${plan.change.files.length} changed file${plan.change.files.length === 1 ? '' : 's'} (${plan.change.base}...${plan.change.head})`,
    );
  } else {
    lines.push(`${plan.all.length} Kustomizations${scope}`);
  }
  if (plan.allBecause) lines.push(plan.allBecause);
  const width = Math.max(0, ...plan.matrix.map((e) => who(e).length));
  for (const e of plan.matrix) {
    const deps = e.dependsOn.length > 0 ? ` after ${e.dependsOn.join(', ')}` : '';
    lines.push(`  level ${e.level}  ${who(e).padEnd(width)}  ${e.file}${deps}${e.reason ? `  (${e.reason})` : ''}`);
  }
  return lines.join('\n') + '\n';
}

/** The job summary: what the matrix runs, per level, with why. */
export function planSummary(plan: PlanResult): string {
  const head = plan.change
    ? `### kustomize-reconcile: plan — ${plan.matrix.length} of ${plan.all.length} Kustomizations affected`
    : `### kustomize-reconcile: plan — ${plan.all.length} Kustomizations`;
  const out = [head, ''];
  if (plan.change)
    out.push(
      `${plan.change.files.length} changed files between ${mdCode(plan.change.base)} and ${mdCode(plan.change.head)}.`,
      '',
    );
  if (plan.allBecause) out.push(`> [!NOTE]\n> ${mdText(plan.allBecause)}`, '');
  if (plan.matrix.length === 0) return [...out, 'Nothing to reconcile.', ''].join('\n');
  out.push('| Level | Cluster | Kustomization | File | Why |', '| ---: | --- | --- | --- | --- |');
  for (const e of plan.matrix) {
    out.push(
      `| ${e.level} | ${mdText(e.cluster || '–')} | ${mdCode(e.kustomization, 'cell')} | ${mdCode(e.file, 'cell')} | ${mdText(e.reason ?? 'all')} |`,
    );
  }
  return [...out, ''].join('\n');
}
