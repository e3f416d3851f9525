/**
 * The graph runner: a run's Kustomizations in dependsOn order, each starting when its dependencies
 * have finished (four at most at once, as kustomize-controller's default `--concurrent=4`). A
 * Kustomization whose dependency is not ready is skipped with the reason.
 */
import type { Report } from '../report/model.js';
import type { SourceVerdict } from '../flux/checkout.js';
import { runInDependencyOrder } from '../flux/graph.js';
import { describeSpec } from '../flux/support.js';
import type { KustomizationSpec } from '../flux/types.js';
import { describePlan } from '../source/fetched.js';
import type { BuiltFrom } from './built-from.js';
import { KUSTOMIZATIONS_AT_ONCE } from './builds.js';
import { prefixed, retarget, type RunContext } from './context.js';
import { awaitDependencies, readyExprProblem, recordNotApplied } from './await-deps.js';
import { reconcileTarget } from './one.js';
import { combine, outcomeOf, skippedReport } from './report.js';
import { dotted } from '../report/render.js';
import { PreviewViews } from './would-create.js';

const KUSTOMIZATION_CONCURRENCY = KUSTOMIZATIONS_AT_ONCE;

/** Every Kustomization of the run, in dependsOn order, as one report. */
export async function reconcileAll(
  ctx: RunContext,
  specs: KustomizationSpec[],
  levels: KustomizationSpec[][],
  sources: ReadonlyMap<string, SourceVerdict>,
  started: number,
  all: readonly KustomizationSpec[] = specs,
): Promise<Report> {
  const { settings } = ctx;
  /** The Kustomization's report when its source is not this checkout: failed, nothing built. */
  const wrongSource = (spec: KustomizationSpec): Report | undefined => {
    const verdict = sources.get(`${spec.namespace}/${spec.name}`);
    if (verdict?.kind !== 'other') return undefined;
    return skippedReport(settings, spec, `${describeSpec(spec)}: ${verdict.problem}`, 'resolve');
  };
  // Where each is built from (this checkout, or its source fetched once a run): the run's build service.
  const { builds } = ctx;
  if (builds === undefined) throw new Error('reconcileAll needs the build service of the run (ctx.builds)');
  /** The Kustomization, built from its own source when that is not this checkout; the report names the source. */
  const run = async (c: RunContext, spec: KustomizationSpec): Promise<Report> => {
    const verdict = sources.get(`${spec.namespace}/${spec.name}`);
    let from: BuiltFrom;
    try {
      from = await builds.source(spec);
    } catch (err) {
      // Only a fetch throws: the verdict was to fetch.
      const plan = verdict?.kind === 'fetch' ? verdict.source : undefined;
      const failed = skippedReport(settings, spec, `${describeSpec(spec)}: ${(err as Error).message}`, 'resolve', {
        cause: err,
      });
      return plan === undefined
        ? failed
        : { ...failed, notes: [...failed.notes, ...builds.notesOf(plan)], source: { ref: describePlan(plan) } };
    }
    if (from.kind !== 'fetched') {
      const report = await reconcileTarget(c, spec);
      return { ...report, source: checkoutSource(settings, spec) };
    }
    const { ref, tree } = from;
    c.log.info(`Built from ${ref} at ${tree.revision}`);
    const report = await reconcileTarget({ ...c, settings: from.settings }, spec);
    return {
      ...report,
      notes: [...report.notes, ...builds.notesOf(from.verdict.source)],
      source: { ref, revision: tree.revision, ...(tree.originRevision ? { originRevision: tree.originRevision } : {}) },
    };
  };
  return reconcileEach(ctx, { specs, levels, all, started, wrongSource, run, buildsHere: (s) => builds.buildsHere(s) });
}

/** What reconcileEach runs, and how each Kustomization is had (reconcileAll decides). */
interface EachOptions {
  /** This run's Kustomizations, in the order of the files. */
  specs: KustomizationSpec[];
  /** The same in dependsOn levels (level 0 depends on none of them). */
  levels: KustomizationSpec[][];
  /** Every Kustomization of the files: those not in `specs` are other jobs' (input select). */
  all: readonly KustomizationSpec[];
  /** When the run started: the combined report's duration. */
  started: number;
  /** The report of a Kustomization whose source cannot be had: failed, nothing built. */
  wrongSource: (spec: KustomizationSpec) => Report | undefined;
  /** One Kustomization reconciled, built from its source. */
  run: (c: RunContext, spec: KustomizationSpec) => Promise<Report>;
  /** Whether a Kustomization is built from this checkout (a preview foresees only those). */
  buildsHere: (spec: KustomizationSpec) => boolean;
}

/**
 * Each Kustomization of the run, as one report: one alone; several in dependsOn order, each once
 * its dependencies and its parent have finished. A Kustomization that fails records so in its
 * inventory, for the jobs that wait for it.
 */
async function reconcileEach(ctx: RunContext, each: EachOptions): Promise<Report> {
  const byKey = new Map(each.specs.map((s) => [keyOf(s), s]));
  const jobs = new OtherJobs(byKey, each.all);
  if (each.specs.length === 1) {
    const spec = each.specs[0]!;
    const report = each.wrongSource(spec) ?? (await awaitOtherJobs(ctx, spec, jobs)) ?? (await each.run(ctx, spec));
    return recorded(ctx, spec, report);
  }
  // In a preview, each Kustomization sees what its dependencies would create, not its siblings.
  const step: InOrder = { each, byKey, jobs, views: new PreviewViews(ctx, byKey, each.buildsHere) };
  const reports = await runInDependencyOrder<Report>(
    each.levels.flat(),
    KUSTOMIZATION_CONCURRENCY,
    async (spec, done) => recorded(ctx, spec, await reconcileInOrder(ctx, step, spec, done)),
    await parentsFirst(ctx, each.levels),
  );
  return combine(
    ctx.settings,
    each.specs.map((s) => reports.get(keyOf(s))!),
    ctx.clock.now() - each.started,
    ctx.management.server,
  );
}

const keyOf = (spec: Pick<KustomizationSpec, 'namespace' | 'name'>): string => `${spec.namespace}/${spec.name}`;

/** What a Kustomization of several needs to know of the others. */
interface InOrder {
  each: EachOptions;
  /** This run's Kustomizations by `namespace/name`. */
  byKey: ReadonlyMap<string, KustomizationSpec>;
  jobs: OtherJobs;
  views: PreviewViews;
}

/**
 * One Kustomization of several, once its dependencies and parent have finished: refused (its source
 * cannot be had), skipped (a dependency is not ready, the cluster is unreachable), or reconciled.
 */
async function reconcileInOrder(
  ctx: RunContext,
  { each, byKey, jobs, views }: InOrder,
  spec: KustomizationSpec,
  done: ReadonlyMap<string, Report>,
): Promise<Report> {
  const key = keyOf(spec);
  const refused = each.wrongSource(spec);
  if (refused) {
    ctx.log.info(`[${key}] ${refused.error ?? ''}`);
    return refused;
  }
  const blocked = dependencyProblem(spec, byKey, done);
  if (blocked) {
    const reason = `skipped: ${blocked}`;
    ctx.log.info(`[${key}] ${reason}`);
    return skippedReport(ctx.settings, spec, reason, 'dependency');
  }
  if (ctx.management.unreachable)
    return skippedReport(ctx.settings, spec, 'skipped: the cluster could not be reached', 'dependency');
  const log = prefixed(ctx.log, `[${key}]`);
  const own = { ...retarget(ctx, { log }), wouldCreate: views.viewOf(spec, log) };
  const waited = await awaitOtherJobs(own, spec, jobs);
  if (waited) return waited;
  ctx.log.info(`[${key}] ${ctx.applying ? 'reconciling' : 'planning'} ${dotted(spec.path)}`);
  return each.run(own, spec);
}

/** A dependency of this job's Kustomization that another job reconciles (input select), with its spec. */
type OtherJobsDependency = { dep: KustomizationSpec['dependsOn'][number]; spec: KustomizationSpec };

/** The Kustomizations of the files that other jobs reconcile (input select), as this job's depend on them. */
class OtherJobs {
  private readonly others: ReadonlyMap<string, KustomizationSpec>;

  constructor(
    private readonly mine: ReadonlyMap<string, KustomizationSpec>,
    all: readonly KustomizationSpec[],
  ) {
    this.others = new Map(all.filter((s) => !mine.has(keyOf(s))).map((s) => [keyOf(s), s]));
  }

  /** The dependencies of `spec` that other jobs reconcile. */
  dependenciesOf(spec: KustomizationSpec): OtherJobsDependency[] {
    return spec.dependsOn.flatMap((dep) => {
      const s = this.others.get(keyOf(dep));
      return s ? [{ dep, spec: s }] : [];
    });
  }

  /** The dependencies in other jobs of `spec`, and of those, all the way up (for a preview's foresight). */
  upstreamOf(spec: KustomizationSpec): OtherJobsDependency[] {
    const seen = new Map<string, OtherJobsDependency>();
    const visit = (s: KustomizationSpec) => {
      for (const dep of s.dependsOn) {
        const key = keyOf(dep);
        const next = this.others.get(key) ?? this.mine.get(key);
        if (!next || seen.has(key)) continue;
        if (this.others.has(key)) seen.set(key, { dep, spec: next });
        visit(next);
      }
    };
    visit(spec);
    return [...seen.values()];
  }
}

/** Waits for the dependencies other jobs reconcile; the report of a skip when one is not ready. */
async function awaitOtherJobs(c: RunContext, spec: KustomizationSpec, jobs: OtherJobs): Promise<Report | undefined> {
  const reason = await awaitDependencies(c, spec, jobs.dependenciesOf(spec), jobs.upstreamOf(spec));
  if (reason === undefined) return undefined;
  c.log.info(`skipped: ${reason}`);
  return skippedReport(c.settings, spec, `skipped: ${reason}`, 'dependency');
}

/**
 * A fan-out job's failed or skipped Kustomization: its inventory says so for this commit, so
 * that jobs waiting for it in other processes skip at once (await-deps.ts). Not when it lost its
 * lock: the inventory is the new holder's, whose record must not be written over.
 */
async function recorded(c: RunContext, spec: KustomizationSpec, report: Report): Promise<Report> {
  const lost = c.lostLocks.has(keyOf(spec));
  if (!report.ok && !c.client.unreachable && !lost) await recordNotApplied(c, spec, report.error ?? 'failed');
  return report;
}

/**
 * What a Kustomization waits for besides its dependencies: its parent (children.ts), as under Flux,
 * where the parent applies it; whatever the parent's outcome (the child is built from the parent's
 * build, not its apply). Never against dependsOn: a parent that depends on its child is not waited for.
 */
async function parentsFirst(
  ctx: RunContext,
  levels: readonly KustomizationSpec[][],
): Promise<(spec: KustomizationSpec) => string[]> {
  const parents = ctx.children ? await ctx.children.parentKeys() : new Map<string, string>();
  const level = new Map<string, number>(levels.flatMap((l, n) => l.map((s): [string, number] => [keyOf(s), n])));
  return (spec) => {
    const key = keyOf(spec);
    const parent = parents.get(key);
    return parent !== undefined && (level.get(parent) ?? Infinity) <= (level.get(key) ?? -1) ? [parent] : [];
  };
}

/** The source of a Kustomization built from this checkout, for its report. */
function checkoutSource(settings: RunContext['settings'], spec: KustomizationSpec): NonNullable<Report['source']> {
  const r = spec.sourceRef;
  const ref =
    r === undefined ? 'this checkout' : `${r.kind} ${r.namespace ?? spec.namespace}/${r.name} (this checkout)`;
  return { ref, ...(settings.run.revision ? { revision: settings.run.revision } : {}) };
}

/**
 * Why `spec` may not run yet, or undefined when every dependency is ready. Ready is Flux's built-in
 * rule (the dependency succeeded in this run), or, where a dependsOn entry has a readyExpr, that
 * expression alone (Flux skips the built-in check then), with `self` and `dep` as Flux objects.
 */
function dependencyProblem(
  spec: KustomizationSpec,
  specs: ReadonlyMap<string, KustomizationSpec>,
  reports: ReadonlyMap<string, Report>,
): string | undefined {
  for (const d of spec.dependsOn) {
    const key = `${d.namespace}/${d.name}`;
    const report = reports.get(key);
    const depSpec = specs.get(key);
    // Reconciled by another job (input select): awaited in the cluster (await-deps.ts).
    if (!depSpec) continue;
    if (!report) return `dependency '${key}' was not reconciled in this run`;
    if (d.readyExpr === undefined) {
      if (!report.ok) return `dependency '${key}' is not ready (it failed or was skipped in this run)`;
      continue;
    }
    const problem = readyExprProblem(d, d.readyExpr, spec, depSpec, outcomeOf(report));
    if (problem !== undefined) return problem;
  }
  return undefined;
}
