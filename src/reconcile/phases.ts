/**
 * The phases of one Kustomization after render, each a function of the context and what the
 * phase before it returned: plan, apply, health, prune. (record is in record.ts, render in
 * render.ts.) Each is called by reconcileOne (one.ts) in order, as kustomize-controller's
 * reconciler calls one method per step.
 */
import { subjectOf, type KubeObject } from '../objects/kube.js';
import type { Settings } from '../options/settings.js';
import { impersonatedUser } from '../flux/support.js';
import { effectiveTimeout } from '../flux/values.js';
import type { KustomizationSpec } from '../flux/types.js';
import type { Created } from '../ssa/apply.js';
import type { ChangeSetEntry } from '../ssa/changeset.js';
import { namespacePruneRefusal } from '../inventory/contents.js';
import type { PruneResult } from '../ssa/delete.js';
import type { ResourceManager } from '../ssa/manager.js';
import { adoptPaths, ignoredPaths, stripPaths } from '../ssa/ignore.js';
import { selectorFor } from '../cluster/live.js';
import { prevalidate } from '../ssa/prevalidate.js';
import { staleEntries } from '../inventory/entries.js';
import { entryOf, groupOf, refOf, subjectOfEntry, type Entry } from '../objects/id.js';
import { find } from '../cluster/verbs.js';
import { findRenames, isDestructiveKind, type RenamedObject, type Side } from '../ssa/renames.js';
import { impliedOf, impliedSubject, type Implied } from './implied.js';
import { elsewhereReader, readableOf } from './readable.js';
import { pruneRefusal } from '../inventory/plan.js';
import { celStatusReader } from '../kstatus/cel.js';
import { definedKinds } from '../kstatus/unserved.js';
import { formatDuration } from '../util/duration.js';
import { healthFailure, timeoutSource, type HealthResult, type HealthTarget } from '../kstatus/wait.js';
import { mergeSecretPaths, secretPathsId, type SecretPaths } from '../substitute/provenance.js';
import type { KustomizationContext, RunContext } from './context.js';
import { entryOfObject, type InventoryRun } from '../inventory/session.js';
import type { Rendered } from './render.js';
import { deletionRefusal, destructiveEntry, gateOf, needingApproval, recreateRefusal } from './gate.js';
import { cappedTimeout } from '../source/tree-timeout.js';

/** What the apply phase sends, and as whom. */
export interface Plan {
  objects: KubeObject[];
  /** The manager of the applies, health reads and prunes (impersonating, when the spec says so). */
  actor: ResourceManager;
  secretPaths: SecretPaths;
  /** The values of the substituteFrom ConfigMaps, redacted from API errors (Rendered). */
  substitutedFrom?: readonly string[];
  /** Before each write in a run that writes: rejects once the lock is not this run's any more. */
  checkpoint?: () => Promise<void>;
  /** In a preview with destructive-approval-label: the deletions an apply would need a yes for. */
  unapproved?: string[];
  /** What the garbage collector and the StatefulSet controller would delete because of this change. */
  implied?: Implied[];
  /**
   * In a preview or drift check without an account to act as: the inventory ids of the objects the
   * dry-runs may read and show (this Kustomization's own); another object is not read (readable.ts).
   */
  readable?: ReadonlySet<string>;
}

/**
 * The plan phase: the objects are checked against what the server would refuse, and (applying)
 * recorded as pending in the inventory under the lock, before anything is written.
 */
export async function plan(ctx: KustomizationContext, rendered: Rendered, inventory: InventoryRun): Promise<Plan> {
  const { settings, spec, note } = ctx;
  const apply = ctx.applying;
  // Names, label keys and kinds the server would refuse fail the run before any object is written.
  await prevalidate(rendered.objects, ctx.manager.discovery);
  const checkpoint = apply ? inventory.checkpoint : undefined;
  await checkpoint?.();
  // Under the lock the inventory is read here, as the pending entries are recorded.
  if (apply) await inventory.record(rendered.objects.map(entryOfObject), note, rendered.secretPaths);
  // Deletions a reviewer has not said yes to fail it too, before any object is written (gate.ts);
  // a preview lists them. (The failure's record drops the pending entries: nothing was applied.)
  const unapproved = await destructiveDeletions(ctx, rendered, inventory);
  const gate = gateOf(settings);
  // What Kubernetes' own deleters take because of this change counts as deleted by it (implied.ts).
  const implied = await impliedOf({
    client: ctx.client,
    discovery: ctx.manager.discovery,
    objects: rendered.objects,
    doomed: () => doomedOf(ctx, rendered, inventory),
    note,
    concurrency: settings.concurrency,
  });
  const held = gate === undefined ? [] : implied.filter(needsYes).map(impliedSubject);
  if (apply && gate !== undefined && unapproved.length + held.length > 0) throw deletionRefusal(unapproved, gate, held);
  const unread = readableOf(ctx, inventory);
  return {
    objects: rendered.objects,
    actor: actingAs(ctx.manager, spec, settings, note),
    // This run's secret fields and those earlier runs recorded (a value's old text stays secret).
    secretPaths: mergeSecretPaths(rendered.secretPaths, inventory.secretPaths),
    ...(rendered.substitutedFrom ? { substitutedFrom: rendered.substitutedFrom } : {}),
    ...(checkpoint ? { checkpoint } : {}),
    ...(unapproved.length + held.length > 0 ? { unapproved: [...unapproved.map(subjectOfEntry), ...held] } : {}),
    ...(implied.length > 0 ? { implied } : {}),
    ...(unread !== undefined ? { readable: unread } : {}),
  };
}

/** Its own inventory's objects, and those another inventory of the repository holds (readable.ts). */
function mayReadOf(ctx: KustomizationContext, own: ReadonlySet<string>): (obj: KubeObject) => Promise<boolean> {
  const elsewhere = elsewhereReader({ ...ctx, discovery: ctx.manager.discovery });
  return async (obj) => own.has(entryOfObject(obj).id) || elsewhere(obj);
}

/** What this Kustomization's prune would delete: what left its build, less what moved or is held back. */
async function doomedOf(ctx: KustomizationContext, rendered: Rendered, inventory: InventoryRun): Promise<Entry[]> {
  if (!ctx.spec.prune) return [];
  const children = ctx.children;
  const stale = staleEntries(inventory.old, rendered.objects.map(entryOfObject)).filter(
    (e) => children === undefined || !children.definesEntry(e),
  );
  return stale.length === 0 ? [] : (await splitStale(ctx, stale)).doomed;
}

/** An implied deletion the gate holds: of a destructive kind, its live object without the yes. */
const needsYes = (d: Implied): boolean => !d.approved && isDestructiveKind(groupOf(d.apiVersion), d.kind);

/**
 * With destructive-approval-label and no yes for the run: the objects of destructive kinds this
 * Kustomization's prune would delete (what left its build, less what moved to another
 * Kustomization's) that are live and carry no approving annotation.
 */
async function destructiveDeletions(ctx: KustomizationContext, rendered: Rendered, inventory: InventoryRun) {
  if (gateOf(ctx.settings) === undefined || !ctx.spec.prune) return [];
  const children = ctx.children;
  const stale = staleEntries(inventory.old, rendered.objects.map(entryOfObject))
    .filter(destructiveEntry)
    .filter((e) => children === undefined || !children.definesEntry(e));
  if (stale.length === 0) return [];
  // Only what prune would delete: not what moved, nor what it holds back.
  const { doomed } = await splitStale(ctx, stale);
  return needingApproval(ctx.manager, doomed, ctx.spec);
}

/**
 * The manager a Kustomization's dry-runs, applies, health reads and prunes go through: as Flux, as
 * the ServiceAccount of spec.serviceAccountName (or the default-service-account input) in the
 * Kustomization's namespace, impersonated by user name alone (no groups), so that RBAC bindings to
 * that account are what it may do.
 */
export function actingAs(
  manager: ResourceManager,
  spec: Pick<KustomizationSpec, 'namespace' | 'serviceAccountName'>,
  settings: Pick<Settings, 'defaultServiceAccount'>,
  note: (line: string) => void,
): ResourceManager {
  const user = impersonatedUser(spec, settings);
  if (user !== undefined) note(`Acting as ${user}${spec.serviceAccountName ? '' : ' (input default-service-account)'}`);
  return manager.actingAs(user);
}

/** The apply phase: staged server-side apply (in a preview, dry-runs only). Throws ApplyError. */
export function apply(ctx: KustomizationContext, planned: Plan): Promise<ChangeSetEntry[]> {
  const { settings, spec } = ctx;
  return planned.actor.apply(planned.objects, {
    force: spec.force,
    ...(spec.ignore.length > 0
      ? { ignoredPaths: (obj: KubeObject) => ignoredPaths(spec.ignore, obj), strip: stripPaths, adopt: adoptPaths }
      : {}),
    dryRunOnly: !ctx.applying,
    alwaysDryRun: settings.alwaysDryRun,
    overrideManagersBeforeDryRun: settings.overrideManagerBeforeDryRun,
    ...(planned.checkpoint ? { checkpoint: planned.checkpoint } : {}),
    secretPaths: (o) => planned.secretPaths.get(secretPathsId(o)) ?? [],
    ...(planned.substitutedFrom ? { substitutedValues: planned.substitutedFrom } : {}),
    // In an untrusted run the server's quoted values are hidden from errors about those objects.
    untrusted: settings.untrustedTree !== undefined,
    ...(ctx.applying && gateOf(settings) !== undefined
      ? {
          refuseRecreate: (obj: KubeObject, live: Parameters<typeof recreateRefusal>[2]) =>
            recreateRefusal(gateOf(settings), obj, live),
        }
      : {}),
    ...(!ctx.applying ? { created: wouldCreateOn(ctx) } : {}),
    ...(planned.readable ? { mayRead: mayReadOf(ctx, planned.readable) } : {}),
  });
}

/** The run's record of what its preview would create on this Kustomization's cluster. */
export function wouldCreateOn(ctx: Pick<RunContext, 'client' | 'wouldCreate'>): Created {
  const server = ctx.client.server;
  let created = ctx.wouldCreate.get(server);
  if (created === undefined) {
    created = { namespaces: new Set(), kinds: new Set() };
    ctx.wouldCreate.set(server, created);
  }
  return created;
}

/**
 * What to wait for, as Flux decides: with spec.wait every applied object but skipped ones (and
 * healthChecks are ignored); otherwise the spec.healthChecks references, which may name objects
 * outside the build.
 */
export function healthTargets(spec: KustomizationSpec, changeset: readonly ChangeSetEntry[]): HealthTarget[] {
  if (spec.wait) {
    return changeset
      .filter((e) => e.action !== 'skipped')
      .map((e) => ({
        subject: e.subject,
        apiVersion: e.apiVersion,
        kind: e.kind,
        name: e.name,
        ...(e.namespace ? { namespace: e.namespace } : {}),
        selector: selectorFor(spec.name, spec.namespace),
        origin: 'spec.wait',
      }));
  }
  return spec.healthChecks.map((r, i) => ({
    subject: subjectOf(r),
    apiVersion: r.apiVersion,
    kind: r.kind,
    name: r.name,
    ...(r.namespace ? { namespace: r.namespace } : {}),
    origin: `spec.healthChecks[${i}]`,
  }));
}

/** The health phase's outcome: each waited-for object's last status, and why it failed if it did. */
export interface Health {
  results?: HealthResult[];
  failure?: string;
}

/** The health phase (applying only): waits for the targets with kstatus rules and healthCheckExprs. */
export async function health(ctx: KustomizationContext, planned: Plan, changeset: ChangeSetEntry[]): Promise<Health> {
  const { spec, log } = ctx;
  const targets = healthTargets(spec, changeset);
  if (targets.length === 0) return {};
  // A tree's spec.timeout, capped in an untrusted run by the timeout input (source/tree-timeout.ts).
  const timeoutMs = cappedTimeout(spec.timeout, ctx.settings) ?? spec.timeout;
  const source = timeoutSource(spec.timeout, spec.interval, effectiveTimeout(spec.interval, undefined));
  log.info(
    `Waiting up to ${formatDuration(timeoutMs)} (${timeoutMs < spec.timeout ? 'spec.timeout capped by the timeout input in an untrusted run' : source}) for ${targets.length} object(s) to become healthy`,
  );
  const outcome = await planned.actor.wait(targets, {
    timeoutMs,
    // A kind the server does not serve fails at once, unless a CRD this run applied defines it.
    definedKinds: definedKinds(planned.objects),
    ...(planned.checkpoint ? { checkpoint: planned.checkpoint } : {}),
    ...(spec.healthCheckExprs.length > 0 ? { custom: celStatusReader(spec.healthCheckExprs) } : {}),
  });
  // Each object's health was logged above, once per change of its status: the end is a count, not a table that
  // would print every object again (and the unhealthy ones a third time, after the error that names them).
  log.info(`Health: ${healthCounts(outcome.results)}`);
  return { results: outcome.results, ...(outcome.ok ? {} : { failure: healthFailure(outcome, timeoutMs) }) };
}

/** The prune phase's outcome: what was deleted, what stays in the inventory, and why the phase failed. */
export interface Pruned {
  /** The entries of this run's objects. */
  next: Entry[];
  results?: PruneResult[];
  /** Stale objects that stay (refused or failed deletions, or held back): they remain in the inventory. */
  survivors: Entry[];
  /** Objects that left this build for another Kustomization's: not deleted, and out of this inventory. */
  moved?: Moved[];
  /** Objects pruned with one of the same kind and nearly the same content created in their place. */
  renamed?: RenamedObject[];
  error?: string;
}

/**
 * The prune phase: the objects of the previous inventory that left Git are deleted (in a preview,
 * dry-run), unless spec.prune is off or a prune guard refuses. Throws PruneStopped (lock lost).
 */
export async function prune(
  ctx: KustomizationContext,
  planned: Plan,
  inventory: InventoryRun,
  changeset: ChangeSetEntry[],
): Promise<Pruned> {
  const { settings, spec, note, log } = ctx;
  const { applying } = ctx;
  const next = changeset.map(entryOf);
  let stale = staleEntries(inventory.old, next);
  // A child's Kustomization object that this run reconciles itself now (children.ts) is not deleted:
  // under Flux its finalizer would delete the child's objects. It leaves this inventory, as it is.
  const handed = ctx.children === undefined ? [] : stale.filter((e) => ctx.children!.definesEntry(e));
  if (handed.length > 0) {
    note(
      `${handed.length} child Kustomization object(s) left this build's apply because this run reconciles ` +
        `them; they stay in the cluster as they are (not deleted): ${handed.map(subjectOfEntry).join(', ')}`,
    );
    stale = stale.filter((e) => !handed.includes(e));
  }
  if (stale.length === 0) return { next, survivors: [] };
  if (!spec.prune) {
    note(
      `${stale.length} object(s) left Git but stay in the cluster: spec.prune is off (${stale.map(subjectOfEntry).join(', ')})`,
    );
    return { next, survivors: [] };
  }
  // Objects another Kustomization of this run builds now moved there: not deleted, not counted by
  // the guards, and out of this inventory (the other one's records them).
  const { moved, held, doomed } = await movesOf(ctx, stale);
  stale = doomed;
  if (stale.length === 0) return { next, survivors: held, moved };
  const guard = { maxShare: settings.pruneMaxShare, allowLarge: settings.allowLargePrune };
  const movedIds = new Set(moved.map((m) => m.entry.id));
  const kept = inventory.old.filter((e) => !movedIds.has(e.id));
  // A Namespace's contents are read with the run's own credentials, not the impersonated
  // account's: its deletion takes everything in it, whatever that account may see.
  const refusal =
    pruneRefusal(kept, next, stale, guard) ??
    (await namespacePruneRefusal(ctx.manager, stale, next, spec, guard, note));
  if (refusal !== undefined) return { next, survivors: [...stale, ...held], moved, error: `prune refused: ${refusal}` };
  const renamed = await renamesOf(ctx, planned, changeset, stale);
  log.info(`Pruning ${stale.length} object(s)${applying ? '' : ' (dry run)'}`);
  const results = await planned.actor.delete(stale, {
    owner: spec,
    formerOwners: inventory.formerOwners,
    dryRun: !applying,
    ...(planned.checkpoint ? { checkpoint: planned.checkpoint } : {}),
  });
  const failed = failedDeletions(results);
  return {
    next,
    results,
    moved,
    ...(renamed.length > 0 ? { renamed } : {}),
    survivors: [...failed.map((r) => r.entry), ...held],
    ...(failed.length > 0
      ? {
          error: `prune failed for ${failed.length} object(s); they stay in the inventory:\n${failed
            .map((r) => `  ${describeFailure(r)}`)
            .join('\n')}`,
        }
      : {}),
  };
}

/**
 * The renames among this run's creations and the objects about to be pruned (ssa/renames.ts): the
 * live copies of the stale objects of a kind this run creates are read (with the run's own
 * credentials, as what they are matters, not what the account may see).
 */
async function renamesOf(
  ctx: KustomizationContext,
  planned: Plan,
  changeset: readonly ChangeSetEntry[],
  stale: readonly Entry[],
): Promise<RenamedObject[]> {
  const created = changeset.filter((e) => e.action === 'created' && !e.recreated);
  if (created.length === 0) return [];
  const kinds = new Set(created.map((e) => `${groupOf(e.apiVersion)}/${e.kind}`));
  const byKey = new Map(planned.objects.map((o) => [subjectOf(o), o]));
  const olds: Side[] = [];
  for (const entry of stale) {
    const ref = refOf(entry);
    const group = groupOf(ref.apiVersion);
    if (!kinds.has(`${group}/${ref.kind}`)) continue;
    const resource = await ctx.manager.discovery.mapping(ref.apiVersion, ref.kind).catch(() => undefined);
    if (resource === undefined) continue;
    const live = await find(ctx.client, { resource, namespace: ref.namespace, name: ref.name }).catch(() => undefined);
    if (live !== undefined) olds.push({ subject: subjectOfEntry(entry), group, kind: ref.kind, object: live });
  }
  if (olds.length === 0) return [];
  const news = created.flatMap((e): Side[] => {
    const object = byKey.get(e.subject);
    return object === undefined ? [] : [{ subject: e.subject, group: groupOf(e.apiVersion), kind: e.kind, object }];
  });
  return findRenames(olds, news, { wait: ctx.spec.wait });
}

/** An object that left one Kustomization's build for another's (`namespace/name`). */
export interface Moved {
  entry: Entry;
  to: string;
}

/** What left a build, as prune treats it (splitStale). */
interface Split {
  /** Built by another Kustomization of the run on the same cluster now: not deleted. */
  moved: Moved[];
  /** Claimed by none, while another build could not be read: they may have moved there, so they stay. */
  held: Entry[];
  /** The rest: what prune deletes. */
  doomed: Entry[];
  unread: { kustomization: string; error: string }[];
}

/** `stale` split by the other Kustomizations' builds (claims.ts); all doomed without them. */
async function splitStale(ctx: KustomizationContext, stale: readonly Entry[]): Promise<Split> {
  if (ctx.claims === undefined) return { moved: [], held: [], doomed: [...stale], unread: [] };
  const { claimed, unread } = await ctx.claims.claimants(ctx.spec, stale);
  const moved = stale.flatMap((entry) => {
    const to = claimed.get(entry.id);
    return to === undefined ? [] : [{ entry, to }];
  });
  const rest = stale.filter((e) => !claimed.has(e.id));
  return unread.length > 0 ? { moved, held: rest, doomed: [], unread } : { moved, held: [], doomed: rest, unread };
}

/** splitStale, with a note for the moves and for what is held back. */
async function movesOf(ctx: KustomizationContext, stale: readonly Entry[]): Promise<Split> {
  const split = await splitStale(ctx, stale);
  const { moved, held, unread } = split;
  for (const [to, entries] of groupBy(moved, (m) => m.to)) {
    ctx.note(
      `${entries.length} object(s) left this build for Kustomization ${to}'s, which builds them now: moved, ` +
        `not deleted (${entries.map((m) => subjectOfEntry(m.entry)).join(', ')})`,
    );
  }
  if (held.length === 0) return split;
  ctx.note(
    `${held.length} object(s) left this build and are not pruned this run: the build of ` +
      `${unread.map((u) => `Kustomization ${u.kustomization} (${u.error})`).join(', ')} could not be read, ` +
      `and they may have moved there; they stay in the cluster and the inventory (${held.map(subjectOfEntry).join(', ')})`,
  );
  return split;
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) out.set(key(item), [...(out.get(key(item)) ?? []), item]);
  return out;
}

/** The deletions that failed (their objects stay, and stay in the inventory). */
export const failedDeletions = (results: readonly PruneResult[]): PruneResult[] =>
  results.filter((r) => r.action === 'failed');

/** `Kind/namespace/name: why` of a failed deletion. */
export const describeFailure = (r: Pick<PruneResult, 'subject' | 'reason'>): string =>
  `${r.subject}: ${r.reason ?? ''}`;

/** `3 Current, 1 InProgress`: how many objects ended in each status, in the order they were first seen. */
export function healthCounts(results: readonly HealthResult[]): string {
  const counts = new Map<string, number>();
  for (const r of results) counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
  return [...counts].map(([status, n]) => `${n} ${status}`).join(', ');
}
