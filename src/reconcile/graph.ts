/**
 * The graph runner: a run's Kustomizations in dependsOn order, each starting when its dependencies
 * have finished (four at most at once, as kustomize-controller's default `--concurrent=4`). A
 * Kustomization whose dependency is not ready is skipped with the reason.
 */
import type { Report } from '../report/model.js';
import type { SourceVerdict } from '../flux/checkout.js';
import { runInDependencyOrder } from '../flux/graph.js';
import { kustomizationObject } from '../flux/object.js';
import { describeSpec } from '../flux/support.js';
import type { KustomizationSpec } from '../flux/types.js';
import { evalReadyExpr } from '../kstatus/cel.js';
import { describePlan, runSources, settingsFor, type SourceTree } from '../source/fetched.js';
import { secretReader } from '../source/secret.js';
import { prefixed, type RunContext } from './context.js';
import { reconcileTarget } from './one.js';
import { combine, outcomeOf, skippedReport } from './report.js';
import { dotted } from '../report/render.js';

const KUSTOMIZATION_CONCURRENCY = 4;

/** Every Kustomization of the run, in dependsOn order, as one report. */
export async function reconcileAll(
  ctx: RunContext,
  specs: KustomizationSpec[],
  levels: KustomizationSpec[][],
  sources: ReadonlyMap<string, SourceVerdict>,
  started: number,
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
    log: (line) => {
      ctx.log.info(line);
    },
  });
  /** The Kustomization, built from its own source when that is not this checkout; the report names the source. */
  const run = async (c: RunContext, spec: KustomizationSpec): Promise<Report> => {
    const verdict = sources.get(`${spec.namespace}/${spec.name}`);
    if (verdict?.kind !== 'fetch') {
      const report = await reconcileTarget(c, spec);
      return { ...report, source: checkoutSource(settings, spec) };
    }
    const ref = describePlan(verdict.source);
    let tree: SourceTree;
    try {
      tree = await fetched.get(verdict.source);
    } catch (err) {
      const failed = skippedReport(settings, spec, `${describeSpec(spec)}: ${(err as Error).message}`, 'resolve');
      return { ...failed, source: { ref } };
    }
    c.log.info(`Built from ${ref} at ${tree.revision}`);
    const report = await reconcileTarget({ ...c, settings: settingsFor(settings, tree, verdict.source) }, spec);
    return {
      ...report,
      source: { ref, revision: tree.revision, ...(tree.originRevision ? { originRevision: tree.originRevision } : {}) },
    };
  };
  try {
    return await reconcileEach(ctx, specs, levels, started, wrongSource, run);
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
): Promise<Report> {
  const { settings, management: client } = ctx;
  if (specs.length === 1) return wrongSource(specs[0]!) ?? (await run(ctx, specs[0]!));
  const byKey = new Map(specs.map((s) => [`${s.namespace}/${s.name}`, s]));
  const reports = await runInDependencyOrder<Report>(levels.flat(), KUSTOMIZATION_CONCURRENCY, async (spec, done) => {
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
    ctx.log.info(`[${key}] ${settings.mode === 'apply' ? 'reconciling' : 'planning'} ${dotted(spec.path)}`);
    return run({ ...ctx, log: prefixed(ctx.log, `[${key}]`) }, spec);
  });
  return combine(
    settings,
    specs.map((s) => reports.get(`${s.namespace}/${s.name}`)!),
    started,
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
    if (!report || !depSpec) return `dependency '${key}' was not reconciled in this run`;
    if (d.readyExpr === undefined) {
      if (!report.ok) return `dependency '${key}' is not ready (it failed or was skipped in this run)`;
      continue;
    }
    const dep = kustomizationObject(depSpec, outcomeOf(report));
    try {
      if (!evalReadyExpr(d.readyExpr, kustomizationObject(spec), dep))
        return `dependency '${key}' is not ready according to readyExpr eval`;
    } catch (err) {
      return `dependency '${key}': readyExpr ${JSON.stringify(d.readyExpr)} failed: ${(err as Error).message.split('\n')[0]}`;
    }
  }
  return undefined;
}
