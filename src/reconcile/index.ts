/**
 * A run end to end: resolve the Kustomizations, reconcile each in dependsOn order (graph.ts, one.ts:
 * render, plan, apply, health, prune, record), then the Kustomizations removed from the repository
 * (removed.ts). Failures land in the report, never thrown. See docs/architecture.md.
 */
import { setBaseBuilder } from '../source/guarded.js';
import { baseBuilder } from './base-built.js';
import { Discovery } from '../cluster/discovery.js';
import { driftFound, reportOf, type RemovedKustomization, type Report } from '../report/model.js';
import { runMode, type Settings } from '../options/settings.js';
import type { KustomizationSpec } from '../flux/types.js';
import { runContext, systemClock, type Clock, type Hooks, type RunContext } from './context.js';
import { Builds } from './builds.js';
import { Claims } from './claims.js';
import { failureOf } from './errors.js';
import { reconcileAll } from './graph.js';
import { handleRemoved, type RemovalReport } from './removed.js';
import { emptyReport } from './report.js';
import { checkSources, resolveRun, specProblems } from './resolve.js';
import type { SourceVerdict } from '../flux/checkout.js';

export type { Hooks } from './context.js';
export { StageError, type Failure, type Stage } from './errors.js';
export { checkSources, checkSupported, refuseCrossNamespaceRefs, resolveSpecs } from './resolve.js';
export { forkHint } from './render.js';
export { renderSpec } from './render-spec.js';
export { healthTargets } from './phases.js';

/**
 * A run: in drift mode a dry-run against the cluster and, with drift-correction, an apply when it
 * found drift; otherwise one pass of the mode.
 */
export async function reconcile(settings: Settings, hooks: Hooks, clock?: Clock): Promise<Report> {
  runMode(settings);
  const report = await reconcileDrift(settings, hooks, clock);
  return settings.cluster === undefined ? report : withCluster(report, settings.cluster);
}

/** The report of one cluster's run: it and each Kustomization's report name the cluster (a merged report groups by it). */
function withCluster(report: Report, cluster: string): Report {
  return {
    ...report,
    cluster,
    ...(report.kustomizations ? { kustomizations: report.kustomizations.map((k) => ({ ...k, cluster })) } : {}),
  };
}

async function reconcileDrift(settings: Settings, hooks: Hooks, clock?: Clock): Promise<Report> {
  if (settings.mode !== 'drift') return reconcileMode(settings, hooks, clock);
  const check = await reconcileMode(settings, hooks, clock);
  const detected = check.ok && driftFound(check);
  if (!detected || !settings.driftCorrection) return { ...check, drift: { detected, corrected: false } };
  hooks.log('Drift found: correcting it (drift-correction: true)');
  const applied = await reconcileMode({ ...settings, mode: 'apply' }, hooks, clock);
  return { ...applied, mode: 'drift', drift: { detected, corrected: applied.ok } };
}

async function reconcileMode(settings: Settings, hooks: Hooks, clock: Clock = systemClock): Promise<Report> {
  const started = clock.now();
  let resolved;
  try {
    resolved = await resolveRun(settings, hooks.log, hooks.secret);
  } catch (err) {
    const problems = await specProblems(err, settings.root);
    return {
      ...emptyReport(settings, clock.now() - started, err instanceof Error ? err.message : String(err), 'resolve', err),
      ...(problems.length > 0 ? { problems } : {}),
    };
  }
  const { specs, levels, sources, client, all, handlesRemoved, levelOf } = resolved;
  let builds: Builds | undefined;
  try {
    // One discovery for the run: it reads the server again by itself after CRDs are established.
    const ctx = runContext(settings, client, new Discovery(client), hooks, clock);
    builds = await openBuilds(ctx, all, sources);
    // The base rule sees the base's Kustomizations as their parents' builds make them, as the run does here.
    if (settings.untrustedTree) setBaseBuilder(settings.untrustedTree, baseBuilder(settings, client, ctx.secrets.add));
    ctx.builds = builds;
    ctx.children = builds.children;
    ctx.claims = claimsOf(builds, all);
    const report = withLevels(await reconcileAll(ctx, specs, levels, sources, started, all), settings, levelOf);
    // A fan-out job leaves removed Kustomizations to the job of the cluster's first one.
    return handlesRemoved ? await withRemoved(ctx, report, all) : report;
  } finally {
    try {
      await builds?.close();
    } finally {
      client.close();
    }
  }
}

/**
 * The run's build service (builds.ts) over every Kustomization of the files: the sources of those
 * another job reconciles are judged silently, for the questions asked about them (children, claims).
 */
export function openBuilds(
  ctx: Pick<RunContext, 'settings' | 'management' | 'secrets' | 'log'>,
  all: readonly KustomizationSpec[],
  sources: ReadonlyMap<string, SourceVerdict>,
): Promise<Builds> {
  return Builds.open({
    settings: ctx.settings,
    all,
    sources,
    client: ctx.management,
    secret: ctx.secrets.add,
    log: ctx.log.info,
    judge: (specs) => checkSources(ctx.settings, specs, () => undefined),
  });
}

/**
 * Which Kustomization of `all` builds an object (claims.ts): one not rendered yet by this run is
 * rendered as its reconcile would render it (as its parent builds it), without decryption; one
 * built from another source claims nothing here (its files are not this checkout's).
 */
function claimsOf(builds: Builds, all: readonly KustomizationSpec[]): Claims {
  return new Claims(all, async (spec) => {
    if (!builds.buildsHere(spec)) return undefined;
    const { objects } = await builds.objects((await builds.prepared(spec)).spec, { decrypt: false });
    return objects.filter((o) => !builds.children.defines(o));
  });
}

/** A fan-out job's report: each Kustomization's dependsOn level among all of the files' (for the merge's order). */
function withLevels(report: Report, settings: Settings, level: ReadonlyMap<string, number>): Report {
  if (settings.select.length === 0) return report;
  const one = (r: Report): Report => (level.has(r.kustomization) ? { ...r, level: level.get(r.kustomization)! } : r);
  return report.kustomizations ? { ...report, kustomizations: report.kustomizations.map(one) } : one(report);
}

/**
 * Each Kustomization that took over a removed one's objects says so in its own report: `renamed
 * from` when it took all of them, how many it took otherwise.
 */
function withRenames(report: Report, removed: readonly RemovedKustomization[]): Report {
  const lines = new Map<string, string[]>();
  for (const r of removed) {
    for (const to of r.handedTo ?? []) {
      const line =
        r.action === 'renamed' || (r.handedTo?.length === 1 && r.handedOver === r.objects)
          ? `Renamed from Kustomization ${r.kustomization}: its object(s) are this one's now, not deleted`
          : `Took over object(s) of Kustomization ${r.kustomization}, which was removed from the repository: not deleted`;
      lines.set(to, [...(lines.get(to) ?? []), line]);
    }
  }
  if (lines.size === 0) return report;
  const one = (k: Report): Report =>
    lines.has(k.kustomization) ? { ...k, notes: [...k.notes, ...lines.get(k.kustomization)!] } : k;
  if (!report.kustomizations) return one(report);
  const added = [...lines].flatMap(([k, l]) => l.map((n) => `[${k}] ${n}`));
  return { ...report, kustomizations: report.kustomizations.map(one), notes: [...report.notes, ...added] };
}

/** The run's report with what became of the Kustomizations removed from the repository. */
async function withRemoved(ctx: RunContext, report: Report, specs: KustomizationSpec[]): Promise<Report> {
  let r: RemovalReport;
  if (ctx.client.unreachable) return report;
  try {
    r = await handleRemoved(ctx, specs, report.ok);
  } catch (err) {
    r = {
      removed: [],
      pruned: [],
      notes: [],
      error: `looking for removed Kustomizations failed: ${(err as Error).message}`,
    };
  }
  if (r.removed.length === 0 && r.notes.length === 0 && r.error === undefined) return report;
  report = withRenames(report, r.removed);
  const pruned = [...(report.pruned ?? []), ...r.pruned];
  const error = [report.error, r.error].filter((e) => e !== undefined).join('\n');
  return reportOf({
    ...report,
    notes: [...report.notes, ...r.notes],
    ...(r.removed.length > 0 ? { removed: r.removed } : {}),
    ...(pruned.length > 0 ? { pruned } : {}),
    ...(error !== '' ? { error } : {}),
    ...(error !== ''
      ? { failure: report.failure ? { ...report.failure, message: error } : failureOf('removed', error) }
      : {}),
  });
}
