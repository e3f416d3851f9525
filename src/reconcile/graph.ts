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
import { describePlan, runSources } from '../source/fetched.js';
import { builtFrom, fromCheckout, type BuiltFrom } from './built-from.js';
import { secretReader } from '../source/secret.js';
import { prefixed, type RunContext } from './context.js';
import { awaitDependencies, readyExprProblem, recordNotApplied } from './await-deps.js';
import { reconcileTarget } from './one.js';
import { combine, outcomeOf, skippedReport } from './report.js';
import { dotted } from '../report/render.js';
import { PreviewViews } from './would-create.js';

const KUSTOMIZATION_CONCURRENCY = 4;

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
  const fetched = runSources(settings, {
    secret: ctx.secrets.add,
    readSecret: secretReader(ctx.management),
    log: ctx.log.info,
  });
  /** The Kustomization, built from its own source when that is not this checkout; the report names the source. */
  const run = async (c: RunContext, spec: KustomizationSpec): Promise<Report> => {
    const verdict = sources.get(`${spec.namespace}/${spec.name}`);
    let from: BuiltFrom;
    try {
      from = await builtFrom(settings, spec, sources, fetched);
    } catch (err) {
      // Only a fetch throws: the verdict was to fetch.
      const plan = verdict?.kind === 'fetch' ? verdict.source : undefined;
      const failed = skippedReport(settings, spec, `${describeSpec(spec)}: ${(err as Error).message}`, 'resolve', {
        cause: err,
      });
      return plan === undefined
        ? failed
        : { ...failed, notes: [...failed.notes, ...fetched.notesOf(plan)], source: { ref: describePlan(plan) } };
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
      notes: [...report.notes, ...fetched.notesOf(from.verdict.source)],
      source: { ref, revision: tree.revision, ...(tree.originRevision ? { originRevision: tree.originRevision } : {}) },
    };
  };
  try {
    return await reconcileEach(ctx, specs, levels, started, wrongSource, run, all, fromCheckout(sources));
  } finally {
    await fetched.cleanup();
  }
}

async function reconcileEach(
  ctx: RunContext,
  specs: KustomizationSpec[],
  levels: KustomizationSpec[][],
  started: number,
  wrongSource: (spec: KustomizationSpec) => Report | undefined,
  run: (c: RunContext, spec: KustomizationSpec) => Promise<Report>,
  all: readonly KustomizationSpec[],
  fromCheckout: (spec: KustomizationSpec) => boolean,
): Promise<Report> {
  const { settings, management: client } = ctx;
  const byKey = new Map(specs.map((s) => [`${s.namespace}/${s.name}`, s]));
  // In a preview, each Kustomization sees what its dependencies would create, not its siblings.
  const views = new PreviewViews(ctx, byKey, fromCheckout);
  const others = new Map(
    all.filter((s) => !byKey.has(`${s.namespace}/${s.name}`)).map((s) => [`${s.namespace}/${s.name}`, s]),
  );
  /** The dependencies of `spec` that other jobs reconcile (input select). */
  const elsewhere = (spec: KustomizationSpec) =>
    spec.dependsOn.flatMap((dep) => {
      const s = others.get(`${dep.namespace}/${dep.name}`);
      return s ? [{ dep, spec: s }] : [];
    });
  /** The dependencies in other jobs of `spec`, and of those, all the way up (for a preview's foresight). */
  const upstream = (spec: KustomizationSpec) => {
    const seen = new Map<string, { dep: KustomizationSpec['dependsOn'][number]; spec: KustomizationSpec }>();
    const visit = (s: KustomizationSpec) => {
      for (const dep of s.dependsOn) {
        const key = `${dep.namespace}/${dep.name}`;
        const next = others.get(key) ?? byKey.get(key);
        if (!next || seen.has(key)) continue;
        if (others.has(key)) seen.set(key, { dep, spec: next });
        visit(next);
      }
    };
    visit(spec);
    return [...seen.values()];
  };
  /** Waits for the dependencies other jobs reconcile; the report of a skip when one is not ready. */
  const awaited = async (c: RunContext, spec: KustomizationSpec): Promise<Report | undefined> => {
    const reason = await awaitDependencies(c, spec, elsewhere(spec), upstream(spec));
    if (reason === undefined) return undefined;
    c.log.info(`skipped: ${reason}`);
    return skippedReport(settings, spec, `skipped: ${reason}`, 'dependency');
  };
  /**
   * A fan-out job's failed or skipped Kustomization: its inventory says so for this commit, so
   * that jobs waiting for it in other processes skip at once (await-deps.ts). Not when it lost its
   * lock: the inventory is the new holder's, whose record must not be written over.
   */
  const recorded = async (c: RunContext, spec: KustomizationSpec, report: Report): Promise<Report> => {
    const lost = c.lostLocks.has(`${spec.namespace}/${spec.name}`);
    if (!report.ok && !c.client.unreachable && !lost) await recordNotApplied(c, spec, report.error ?? 'failed');
    return report;
  };
  if (specs.length === 1) {
    const spec = specs[0]!;
    return recorded(ctx, spec, wrongSource(spec) ?? (await awaited(ctx, spec)) ?? (await run(ctx, spec)));
  }
  // A child starts once its parent (children.ts) has finished, as under Flux, where the parent applies
  // it; whatever the parent's outcome (the child is built from the parent's build, not its apply).
  // Never against dependsOn: a parent that depends on its child is not waited for.
  const parents = ctx.children ? await ctx.children.parentKeys() : new Map<string, string>();
  const level = new Map<string, number>(
    levels.flatMap((l, n) => l.map((s): [string, number] => [`${s.namespace}/${s.name}`, n])),
  );
  const after = (spec: KustomizationSpec): string[] => {
    const key = `${spec.namespace}/${spec.name}`;
    const parent = parents.get(key);
    return parent !== undefined && (level.get(parent) ?? Infinity) <= (level.get(key) ?? -1) ? [parent] : [];
  };
  const reports = await runInDependencyOrder<Report>(
    levels.flat(),
    KUSTOMIZATION_CONCURRENCY,
    async (spec, done) => recorded(ctx, spec, await reconcileNext(spec, done)),
    after,
  );
  async function reconcileNext(spec: KustomizationSpec, done: ReadonlyMap<string, Report>): Promise<Report> {
    const key = `${spec.namespace}/${spec.name}`;
    const refused = wrongSource(spec);
    if (refused) {
      ctx.log.info(`[${key}] ${refused.error ?? ''}`);
      return refused;
    }
    const blocked = dependencyProblem(spec, byKey, done);
    if (blocked) {
      const reason = `skipped: ${blocked}`;
      ctx.log.info(`[${key}] ${reason}`);
      return skippedReport(settings, spec, reason, 'dependency');
    }
    if (client.unreachable)
      return skippedReport(settings, spec, 'skipped: the cluster could not be reached', 'dependency');
    const log = prefixed(ctx.log, `[${key}]`);
    const own = { ...ctx, log, wouldCreate: views.viewOf(spec, log) };
    const waited = await awaited(own, spec);
    if (waited) return waited;
    ctx.log.info(`[${key}] ${ctx.applying ? 'reconciling' : 'planning'} ${dotted(spec.path)}`);
    return run(own, spec);
  }
  return combine(
    settings,
    specs.map((s) => reports.get(`${s.namespace}/${s.name}`)!),
    ctx.clock.now() - started,
    client.server,
  );
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
