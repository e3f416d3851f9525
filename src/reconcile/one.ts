/**
 * One Kustomization, phase by phase: resolve (its target cluster, its inventory and lock), render,
 * plan, apply, health, prune, record. Each phase is a log group and tags what it throws with its
 * stage (errors.ts); a failure in any phase is recorded (record.ts) and lands in the report.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ClusterClient } from '../cluster/client.js';
import { Discovery } from '../cluster/discovery.js';
import { subjectOf } from '../objects/kube.js';
import { locateObject, type Problem } from '../report/problems.js';
import { reportOf, type PrunedObject, type Report } from '../report/model.js';
import { describeSpec } from '../flux/support.js';
import type { KustomizationSpec } from '../flux/types.js';
import { ApplyError } from '../ssa/apply.js';
import { withMoves } from '../ssa/moved.js';
import { PruneStopped } from '../ssa/delete.js';
import { retarget, type KustomizationContext, type RunContext } from './context.js';
import { failureOf, rootCause, StageError, type Failure, type Location, type Stage } from './errors.js';
import { inventoryStore, InventoryRun } from '../inventory/session.js';
import { legacyStore } from '../inventory/predecessor.js';
import type { InventoryStatus } from '../inventory/codec.js';
import { apply, health, plan, prune, type Moved } from './phases.js';
import { groupOf, subjectOfEntry } from '../objects/id.js';
import { recordFailure, recordSuccess, type Progress } from './record.js';
import { render } from './render.js';
import { resolveTarget } from './resolve.js';
import { skippedReport } from './report.js';
import { runMode, type Settings } from '../options/settings.js';
import { isDestructiveKind } from '../ssa/renames.js';

/** Runs `fn` as the log group of a phase; what it throws is tagged with the phase's stage. */
export async function phase<T>(ctx: RunContext, stage: Stage, title: string, fn: () => Promise<T>): Promise<T> {
  return ctx.log.group(title, async () => {
    try {
      return await fn();
    } catch (err) {
      throw StageError.of(stage, err);
    }
  });
}

/**
 * One Kustomization in the cluster it targets: the action's cluster, or with spec.kubeConfig a
 * remote one whose kubeconfig is a Secret in the action's cluster, or that a ConfigMap there names
 * (a ServiceAccount token). Objects, health, prune, the inventory and the lock are in the target;
 * substituteFrom and decryption Secrets are read from the action's cluster, as Flux reads them with
 * the controller's client.
 */
export async function reconcileTarget(run: RunContext, given: KustomizationSpec): Promise<Report> {
  const notes: string[] = [];
  const note = (line: string) => {
    notes.push(line);
    run.log.info(line);
  };
  let spec: KustomizationSpec;
  try {
    spec = await asItsParentBuildsIt(run, given, note);
  } catch (err) {
    const message = `${describeSpec(given)}: ${(err as Error).message}`;
    return { ...skippedReport(run.settings, given, message, 'render', { cause: err }), notes };
  }
  const ref = spec.kubeConfig;
  const ctx: KustomizationContext = { ...run, spec, note };
  if (!ref) return reconcileOne(ctx, notes);
  let remote: ClusterClient;
  try {
    remote = await resolveTarget(ctx, ref);
  } catch (err) {
    const message = `${describeSpec(spec)}: ${(err as Error).message}`;
    return {
      ...skippedReport(run.settings, spec, message, 'resolve', { fluxReason: 'ReconciliationFailed', cause: err }),
      notes,
    };
  }
  const by = ref.secretRef
    ? `spec.kubeConfig.secretRef ${spec.namespace}/${ref.secretRef.name}`
    : `spec.kubeConfig.configMapRef ${spec.namespace}/${ref.configMapRef?.name ?? ''}`;
  run.log.info(`Reconciling into ${remote.server} (${by})`);
  try {
    return await reconcileOne(retarget(ctx, { client: remote, discovery: new Discovery(remote) }), notes);
  } finally {
    remote.close();
  }
}

/**
 * A child whose parent this run loads, as the parent's build produces it (children.ts); the note
 * says which spec fields the parent changed, so that what a run does is not a surprise.
 */
async function asItsParentBuildsIt(
  run: RunContext,
  spec: KustomizationSpec,
  note: (line: string) => void,
): Promise<KustomizationSpec> {
  if (run.children === undefined) return spec;
  const built = await run.children.asBuilt(spec);
  if (built.unbuilt !== undefined) note(`${built.unbuilt}; built from its file as written`);
  if (built.parent === undefined) return spec;
  const changed = changedFields(spec, built.spec);
  note(
    `Built as its parent Kustomization ${built.parent} produces it` +
      (changed.length > 0 ? `, which changes ${changed.map((f) => `spec.${f}`).join(', ')} of the file` : '') +
      '; not written to the cluster by the parent (this run reconciles it)',
  );
  return built.spec;
}

/** The spec fields (top level) whose values differ between two specs. */
function changedFields(a: KustomizationSpec, b: KustomizationSpec): string[] {
  const fields = new Set([...Object.keys(a), ...Object.keys(b)]);
  fields.delete('origin');
  fields.delete('name');
  fields.delete('namespace');
  const text = (v: unknown) => JSON.stringify(v);
  return [...fields]
    .filter((f) => text(a[f as keyof KustomizationSpec]) !== text(b[f as keyof KustomizationSpec]))
    .sort();
}

async function reconcileOne(target: KustomizationContext, notes: string[]): Promise<Report> {
  const { settings, spec, note } = target;
  const started = target.clock.now();
  const done: Progress = { changeset: [], problems: [], origins: new Map() };
  const store = inventoryStore(target.client, settings, spec);
  const inventory = new InventoryRun({
    client: target.client,
    store,
    settings,
    spec,
    started,
    legacy: legacyStore(target.client, store, settings, spec),
    management: target.management,
    clock: target.clock,
  });
  // From here on every write of this Kustomization (applies, prunes, its inventory; each retry
  // too) passes its lock's checkpoint: once the lock is lost, nothing more is written.
  const ctx = retarget(target, { client: inventory.writer });
  const finish = (failure?: Failure): Report =>
    reportOf({
      mode: runMode(settings),
      kustomization: `${spec.namespace}/${spec.name}`,
      path: spec.path,
      server: ctx.client.server,
      changeset: withMoves(done.changeset, spec),
      durationMs: ctx.clock.now() - started,
      notes,
      inventory: `${store.namespace}/${store.name}`,
      ...(done.health ? { health: done.health } : {}),
      ...(done.renamed ? { renamed: done.renamed } : {}),
      ...approvalOf(settings, done),
      ...(done.pruned || done.moved || done.implied
        ? {
            pruned: [
              ...(done.pruned ?? []).map(({ subject, action, reason }) => ({
                subject,
                action,
                ...(reason ? { reason } : {}),
              })),
              ...(done.moved ?? []).map(movedObject),
              ...impliedObjects(done),
            ],
          }
        : {}),
      ...(failure !== undefined ? { error: failure.message, failure } : {}),
      ...(failure !== undefined && done.problems.length > 0 ? { problems: done.problems } : {}),
      ...beforeOf(applying ? undefined : inventory.lastStatus),
    });
  const { applying } = ctx;
  // The secrets rendering met: the inventory's status message is scrubbed of them (it is in the cluster).
  const secrets = ctx.secrets.scoped();
  // Started before the build and awaited after it, so that the cluster round trips (discovery, the
  // lock, the inventory read) overlap the build instead of following it.
  let ready: Promise<void> = Promise.resolve();
  try {
    if (spec.suspend) {
      note(`${describeSpec(spec)} is suspended (spec.suspend: true); nothing was built or applied`);
      return finish();
    }
    ctx.manager.discovery.warm();
    ready = (applying ? inventory.lock(ctx.log.info, note) : inventory.peek(note)).catch((err: unknown) => {
      throw StageError.of('resolve', err, { reason: 'ReconciliationFailed' });
    });
    // A refusal (another repository's inventory) is known before the build's result is needed.
    ready.catch(() => undefined);
    const rendered = await phase(ctx, 'render', 'Render', () => render(ctx, secrets.add));
    done.origins = rendered.origins;
    if (rendered.traceOrigins) done.traceOrigins = rendered.traceOrigins;
    ctx.claims?.record(spec, rendered.objects);
    await ready;
    const planned = await phase(ctx, 'plan', 'Plan', () => plan(ctx, rendered, inventory));
    if (planned.unapproved) done.unapproved = planned.unapproved;
    if (planned.implied) done.implied = planned.implied;
    done.changeset = await phase(ctx, 'apply', applying ? 'Apply' : 'Apply (dry run)', () => apply(ctx, planned));
    if (applying) {
      const healthy = await phase(ctx, 'health', 'Health', () => health(ctx, planned, done.changeset));
      if (healthy.results) done.health = healthy.results;
      if (healthy.failure !== undefined) throw new StageError('health', healthy.failure);
    }
    const pruned = await phase(ctx, 'prune', applying ? 'Prune' : 'Prune (dry run)', () =>
      prune(ctx, planned, inventory, done.changeset),
    );
    if (pruned.results) done.pruned = pruned.results;
    if (pruned.moved?.length) done.moved = pruned.moved;
    if (pruned.renamed) done.renamed = pruned.renamed;
    await phase(ctx, 'record', 'Record', () => recordSuccess(ctx, inventory, planned, pruned, secrets.known));
    return finish(pruned.error === undefined ? undefined : failureOf('prune', pruned.error));
  } catch (err) {
    // A preview's report says what the inventory recorded last (before): its read is over first.
    if (!applying) await ready.catch(() => undefined);
    const cause = rootCause(err);
    if (cause instanceof ApplyError) done.changeset = cause.changeset;
    if (cause instanceof PruneStopped) done.pruned = cause.results;
    const failed = StageError.of('apply', err);
    const recorded = await recordFailure(ctx, inventory, done, failed, secrets.known);
    if (recorded.locate) done.problems = await locateProblems(settings.root, done, problemsOf(failed, done));
    return finish({ ...failed.failure, message: recorded.message });
  } finally {
    // A lock still being taken when the build failed is released once it is held.
    await ready.catch(() => undefined);
    await inventory.release();
  }
}

/** A preview's report of the last run its inventory recorded, when that failed (Report.before). */
function beforeOf(last: InventoryStatus | undefined): Pick<Report, 'before'> {
  if (last?.result !== 'Failed') return {};
  return {
    before: {
      result: 'Failed',
      ...(last.failingSince !== undefined ? { since: last.failingSince } : {}),
      ...(last.message !== undefined ? { message: last.message } : {}),
    },
  };
}

/**
 * In a preview with destructive-approval-label: the label an apply needs, and the objects it needs
 * it for (deletions the plan found, recreates the dry-runs found, of destructive kinds).
 */
function approvalOf(settings: Settings, done: Progress): Pick<Report, 'approval'> {
  const label = settings.destructiveApprovalLabel;
  if (label === undefined || label === '' || runMode(settings) === 'apply') return {};
  const recreated = done.changeset.filter((e) => e.recreated && isDestructiveKind(groupOf(e.apiVersion), e.kind));
  const objects = [...(done.unapproved ?? []), ...recreated.map((e) => e.subject)];
  return objects.length > 0 ? { approval: { label, objects } } : {};
}

/** What Kubernetes' own deleters would delete, listed with the prune's results (each object once). */
function impliedObjects(done: Progress): PrunedObject[] {
  const pruned = new Set((done.pruned ?? []).map((p) => p.subject));
  return (done.implied ?? [])
    .filter((d) => !pruned.has(d.subject))
    .map((d) => ({ subject: d.subject, action: 'deleted', reason: d.reason, by: d.by }));
}

/** A moved object as the report lists it with the prune's results. */
const movedObject = (m: Moved): PrunedObject => ({
  subject: subjectOfEntry(m.entry),
  action: 'moved',
  reason: `to Kustomization ${m.to}, which builds it now; not deleted`,
  movedTo: m.to,
});

/** The objects a failure points at: failed applies, unhealthy objects, or the object the error names. */
function problemsOf(err: StageError, done: Progress): (Location & { subject: string; message: string })[] {
  const cause = rootCause(err);
  if (cause instanceof ApplyError)
    return cause.failures.map((f) => ({ subject: subjectOf(f.object), message: f.message }));
  const unhealthy = (done.health ?? [])
    .filter((h) => h.status !== 'Current')
    .map((h) => ({ subject: h.subject, message: `${h.status}: ${h.message}` }));
  if (unhealthy.length > 0 || err.stage === 'health') return unhealthy;
  if (err.subject === undefined && err.file === undefined) return [];
  return [
    {
      subject: err.subject ?? err.stage,
      message: err.message,
      ...(err.file !== undefined ? { file: err.file } : {}),
      ...(err.line !== undefined ? { line: err.line } : {}),
    },
  ];
}

/** Each problem with the file its object came from and the line of its name there, where known. */
async function locateProblems(
  root: string,
  done: Pick<Progress, 'origins' | 'traceOrigins'>,
  found: (Location & { subject: string; message: string })[],
): Promise<Problem[]> {
  const texts = new Map<string, Promise<string | undefined>>();
  // A build that did not name its objects' files is traced now, for the objects that failed.
  const unplaced = found.some((p) => p.file === undefined && !done.origins.has(p.subject));
  const origins = unplaced && done.traceOrigins ? await done.traceOrigins().catch(() => done.origins) : done.origins;
  return Promise.all(
    found.map(async (p) => {
      const file = p.file ?? origins.get(p.subject);
      if (file === undefined) return { subject: p.subject, message: p.message };
      if (p.line !== undefined) return { subject: p.subject, message: p.message, file, line: p.line };
      if (!texts.has(file))
        texts.set(
          file,
          readFile(join(root, file), 'utf8').catch(() => undefined),
        );
      const text = await texts.get(file)!;
      const [kind = '', ...rest] = p.subject.split('/');
      const line = text === undefined ? undefined : locateObject(text, kind, rest[rest.length - 1] ?? '');
      return { subject: p.subject, message: p.message, file, ...(line !== undefined ? { line } : {}) };
    }),
  );
}
