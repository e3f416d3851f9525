/**
 * Cross-job dependsOn: a fan-out job (input select) reconciles some Kustomizations while other jobs
 * reconcile their dependencies at the same time. The cluster is the coordination point, as Flux's
 * status is: each dependency's inventory ConfigMap records the result of its last run and the
 * commit it was for, and the dependent waits until that says Ready for this commit (or its
 * readyExpr holds against that status), or skips when it says failed.
 */
import { kustomizationObject, type Outcome } from '../flux/object.js';
import { outcomeOfStatus } from './report.js';
import type { Dependency, KustomizationSpec } from '../flux/types.js';
import type { InventoryStatus } from '../inventory/codec.js';
import { evalReadyExpr } from '../kstatus/cel.js';
import { formatDuration } from '../util/duration.js';
import type { ClusterClient } from '../cluster/client.js';
import type { RunContext } from './context.js';
import { scrubText } from '../report/scrub.js';
import { exists, NAMESPACES } from '../cluster/verbs.js';
import { inventoryStore, InventoryRun } from '../inventory/session.js';
import { wouldCreateOn } from './phases.js';
import { resolveTarget } from './resolve.js';

/** What a dependency's recorded status says to a dependent waiting for `commit`. */
export type DependencyState =
  { kind: 'ready' } | { kind: 'failed'; reason: string } | { kind: 'waiting'; says: string };

/**
 * The verdict on one dependency's recorded status (pure). Ready is Flux's rule for this commit (its
 * last run succeeded, and was for this commit), or, where the dependsOn entry has a readyExpr, that
 * expression alone once a run for this commit finished (Flux skips the built-in check then).
 * Without a commit to compare (a local run outside git), any finished run counts.
 */
export function dependencyState(
  dep: Dependency,
  depSpec: KustomizationSpec,
  self: KustomizationSpec,
  status: InventoryStatus | undefined,
  commit: string | undefined,
  /** No job of this run reconciles it (input unchanged-dependencies): its last run counts, whatever its commit. */
  unchanged = false,
): DependencyState {
  const key = `${dep.namespace}/${dep.name}`;
  if (status === undefined) return { kind: 'waiting', says: 'it has no inventory yet' };
  const forThis = commit === undefined || unchanged || status.commit === commit;
  if (!forThis) {
    return {
      kind: 'waiting',
      says: `its last run was for commit ${short(status.commit ?? status.lastAttemptedRevision)}`,
    };
  }
  if (status.result === 'InProgress') return { kind: 'waiting', says: 'its run is in progress' };
  if (dep.readyExpr === undefined) {
    if (status.result === 'Succeeded') return { kind: 'ready' };
    const where = unchanged ? 'is not ready: its last run failed' : 'failed in another job';
    return { kind: 'failed', reason: `dependency '${key}' ${where}: ${firstLine(status.message)}` };
  }
  const problem = readyExprProblem(dep, dep.readyExpr, self, depSpec, outcomeOfStatus(status));
  return problem === undefined ? { kind: 'ready' } : { kind: 'failed', reason: problem };
}

/**
 * Where a dependsOn entry has a readyExpr, that expression alone decides (Flux skips the built-in
 * check then), with `self` and `dep` as Flux objects, `dep` with the Ready condition of `outcome`:
 * why the dependency is not ready, or undefined when it is. For dependencies in this run
 * (graph.ts) and in other jobs alike.
 */
export function readyExprProblem(
  dep: Dependency,
  readyExpr: string,
  self: KustomizationSpec,
  depSpec: KustomizationSpec,
  outcome: Outcome,
): string | undefined {
  const key = `${dep.namespace}/${dep.name}`;
  try {
    if (evalReadyExpr(readyExpr, kustomizationObject(self), kustomizationObject(depSpec, outcome))) return undefined;
    return `dependency '${key}' is not ready according to readyExpr eval`;
  } catch (err) {
    return `dependency '${key}': readyExpr ${JSON.stringify(readyExpr)} failed: ${firstLine((err as Error).message)}`;
  }
}

const short = (rev: string | undefined) => (rev === undefined ? 'unknown' : rev.length > 12 ? rev.slice(0, 12) : rev);
const firstLine = (s: string | undefined) => (s ?? 'failed').split('\n')[0]!;

/** How often a waiting dependent reads the inventories, and how often it says it is still waiting. */
export const POLL_MS = 2_000;
export const PROGRESS_MS = 30_000;

/**
 * Waits until every dependency that another job reconciles is ready for this run's commit.
 * Resolves with the reason to skip `spec`, or undefined when all are ready. Only an apply waits: a
 * preview or a drift check of another job's dependency reads the cluster as it is.
 */
export async function awaitDependencies(
  ctx: RunContext,
  spec: KustomizationSpec,
  deps: readonly { dep: Dependency; spec: KustomizationSpec }[],
  /** In a preview: these and what they depend on in other jobs, whose Namespaces are foreseen. */
  upstream: readonly { dep: Dependency; spec: KustomizationSpec }[] = deps,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
): Promise<string | undefined> {
  const names = deps.map((d) => `${d.dep.namespace}/${d.dep.name}`);
  if (!ctx.applying) {
    if (names.length > 0)
      ctx.log.info(
        `dependencies reconciled by other jobs, not waited for in a ${ctx.settings.mode}: ${names.join(', ')}`,
      );
    await foresee(ctx, upstream);
    return undefined;
  }
  if (deps.length === 0) return undefined;
  // A dependency applied to another cluster (spec.kubeConfig) keeps its inventory there.
  const clients = new Map(
    await Promise.all(
      deps.map(async (d) => {
        const ref = d.spec.kubeConfig;
        const client = ref
          ? await resolveTarget(
              {
                ...ctx,
                spec: d.spec,
                note: ctx.log.info,
              },
              ref,
            )
          : ctx.management;
        return [d, client] as const;
      }),
    ),
  );
  try {
    return await poll(ctx, spec, deps, clients, sleep);
  } finally {
    for (const c of clients.values()) if (c !== ctx.management) c.close();
  }
}

async function poll(
  ctx: RunContext,
  spec: KustomizationSpec,
  deps: readonly { dep: Dependency; spec: KustomizationSpec }[],
  clients: ReadonlyMap<{ dep: Dependency; spec: KustomizationSpec }, ClusterClient>,
  sleep: (ms: number) => Promise<void>,
): Promise<string | undefined> {
  const { settings } = ctx;
  const commit = settings.run.commit;
  const deadline = ctx.clock.now() + settings.dependencyTimeoutMs;
  let nextProgress = ctx.clock.now();
  let pending = [...deps];
  ctx.log.info(
    `waiting for ${deps.map((d) => `${d.dep.namespace}/${d.dep.name}`).join(', ')} (reconciled by other jobs) to be ready${commit ? ` at commit ${short(commit)}` : ''}`,
  );
  for (;;) {
    const states = await Promise.all(
      pending.map(async (d) => {
        const store = inventoryStore(clients.get(d)!, settings, d.spec);
        const status = (await store.read()).record?.status;
        const unchanged = settings.unchangedDependencies.includes(`${d.dep.namespace}/${d.dep.name}`);
        return { d, state: dependencyState(d.dep, d.spec, spec, status, commit, unchanged) };
      }),
    );
    const failed = states.find((s) => s.state.kind === 'failed');
    if (failed?.state.kind === 'failed') return failed.state.reason;
    for (const s of states) {
      if (s.state.kind === 'ready') ctx.log.info(`dependency ${s.d.dep.namespace}/${s.d.dep.name} is ready`);
    }
    const waiting = states.filter((s) => s.state.kind === 'waiting');
    pending = waiting.map((s) => s.d);
    if (pending.length === 0) return undefined;
    const says = waiting
      .map((s) => `${s.d.dep.namespace}/${s.d.dep.name}: ${s.state.kind === 'waiting' ? s.state.says : ''}`)
      .join('; ');
    const now = ctx.clock.now();
    if (now >= deadline) {
      return `dependency ${waiting.map((s) => `'${s.d.dep.namespace}/${s.d.dep.name}'`).join(', ')} not ready after ${formatDuration(settings.dependencyTimeoutMs)} (dependency-timeout; reconciled by another job): ${says}. When no job of this run reconciles it (an affected-only plan), pass the matrix entry's unchanged field as unchanged-dependencies`;
    }
    if (now >= nextProgress && now > deadline - settings.dependencyTimeoutMs) {
      ctx.log.info(`still waiting (${formatDuration(deadline - now)} left): ${says}`);
    }
    if (now >= nextProgress) nextProgress = now + PROGRESS_MS;
    await sleep(Math.min(POLL_MS, Math.max(0, deadline - now)));
  }
}

/**
 * Records in the inventory of a fan-out job's Kustomization that it failed or was skipped for this
 * commit (inventory/session.ts `notApplied`), so that the jobs waiting for it skip too. Only an apply
 * with a selection writes it; a failure to write is a line in the log, not a second error.
 */
export async function recordNotApplied(ctx: RunContext, spec: KustomizationSpec, reason: string): Promise<void> {
  const { settings } = ctx;
  if (!ctx.applying || settings.select.length === 0 || spec.kubeConfig !== undefined) return;
  const store = inventoryStore(ctx.client, settings, spec);
  const run = new InventoryRun({
    client: ctx.client,
    store,
    settings,
    spec,
    management: ctx.management,
    clock: ctx.clock,
  });
  const log = ctx.log.info;
  try {
    await run.notApplied(scrubText(reason, ctx.secrets.known), log, log);
  } catch (err) {
    log(
      `The failure could not be recorded in the inventory ${store.namespace}/${store.name}: ${firstLine((err as Error).message)}`,
    );
  }
}

/**
 * A preview in a fan-out job: the Namespaces its dependencies (reconciled by other jobs, which in a
 * preview change nothing) would create are missing from the cluster, as in a one-job preview where
 * an earlier Kustomization would create them. Each dependency (and what it depends on) is built
 * here, without decryption, and its Namespaces the cluster does not have yet are recorded as would
 * be created, so that this Kustomization's objects in them are planned, not failed.
 */
async function foresee(ctx: RunContext, deps: readonly { dep: Dependency; spec: KustomizationSpec }[]): Promise<void> {
  const created = wouldCreateOn(ctx);
  const found: string[] = [];
  const builds = ctx.builds;
  if (builds === undefined) return;
  for (const d of deps) {
    // On this cluster only; built from this checkout (one that fails to build here is left out).
    if (d.spec.kubeConfig !== undefined || !builds.buildsHere(d.spec)) continue;
    let objects;
    try {
      objects = (await builds.objects(d.spec, { decrypt: false })).objects;
    } catch (err) {
      ctx.log.info(
        `${d.dep.namespace}/${d.dep.name} (another job) could not be built to foresee its Namespaces: ${firstLine((err as Error).message)}`,
      );
      continue;
    }
    for (const o of objects) {
      if (o.kind !== 'Namespace' || o.apiVersion !== 'v1' || created.namespaces.has(o.metadata.name)) continue;
      // A Namespace that cannot be read is taken to exist: only one the server says is missing is foreseen.
      const there = await exists(ctx.client, { resource: NAMESPACES, name: o.metadata.name }).catch(() => true);
      if (!there) {
        created.namespaces.add(o.metadata.name);
        found.push(o.metadata.name);
      }
    }
  }
  if (found.length > 0) ctx.log.info(`Namespaces that dependencies in other jobs would create: ${found.join(', ')}`);
}
