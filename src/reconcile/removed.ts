/**
 * The edge for Kustomizations removed from the repository (src/inventory/removal.ts has the rules):
 * find the inventories of this run's set whose Kustomization is gone, and either report them as
 * orphaned (the default) or, with the input removed-kustomizations: delete, apply each one's
 * recorded deletionPolicy under its lock and remove the inventory.
 */
import type { ClusterClient } from '../cluster/client.js';
import { CONFIGMAPS, list } from '../cluster/verbs.js';
import { ApiError } from '../cluster/errors.js';
import { staleEntries, union } from '../inventory/entries.js';
import { subjectOfEntry, type Entry } from '../objects/id.js';
import type { InventoryRecord } from '../inventory/codec.js';
import { fluxHolds } from '../inventory/flux.js';
import { readFluxKustomization } from '../inventory/flux-object.js';
import { shareRefusal } from '../inventory/plan.js';
import { ownershipProblem } from '../inventory/identity.js';
import { removalAction, removedOf, setIdentity, type RemovalAction } from '../inventory/removal.js';
import { INVENTORY_LABEL, InventoryStore, listedInventories, type ConfigMap } from '../inventory/store.js';
import { formatDuration } from '../util/duration.js';
import type { PrunedObject, RemovedKustomization } from '../report/model.js';
import { impersonatedUser } from '../flux/support.js';
import type { KustomizationSpec } from '../flux/types.js';
import { namespacePruneRefusal } from '../inventory/contents.js';
import { PruneStopped, type PruneResult } from '../ssa/delete.js';
import type { ResourceManager } from '../ssa/manager.js';
import type { RunContext } from './context.js';
import { acquireLock, explained } from '../inventory/session.js';
import type { Lock } from '../inventory/lock.js';
import { describeFailure, failedDeletions } from './phases.js';
import { gateMessage, gateOf, needingApproval } from './gate.js';

export interface RemovalReport {
  removed: RemovedKustomization[];
  pruned: PrunedObject[];
  notes: string[];
  error?: string;
}

interface Found {
  kustomization: string;
  set?: string;
  store: InventoryStore;
  record: InventoryRecord;
}

/**
 * Handles the removed Kustomizations of a run over `specs`. `succeeded` says whether every
 * Kustomization of the run succeeded: a failed run deletes nothing, as a failed apply never prunes.
 */
export async function handleRemoved(
  ctx: RunContext,
  specs: readonly KustomizationSpec[],
  succeeded: boolean,
): Promise<RemovalReport> {
  const { client, settings } = ctx;
  const out: RemovalReport = { removed: [], pruned: [], notes: [] };
  if (settings.kustomizations.length === 0) return out;
  const set = setIdentity(settings.run.source, settings.kustomizations);
  const namespaces = settings.inventoryNamespace
    ? [settings.inventoryNamespace]
    : [...new Set(specs.map((s) => s.namespace))];
  const all = await listInventories(client, namespaces, settings.inventoryNamespace, out.notes);
  const present = new Set(specs.map((s) => `${s.namespace}/${s.name}`));
  // Of this run's set, by its recorded set; but acted on only when its recorded repository proves it
  // (inventory/identity.ts): a set is text anyone who writes the ConfigMap can copy.
  const unproven = (f: Found) =>
    ownershipProblem(f.record.status, `${f.store.namespace}/${f.store.name}`, {
      kustomization: f.kustomization,
      source: settings.run.source,
      origin: f.record.status.origin ?? 'its former file',
    });
  let gone: Found[] = [];
  for (const f of removedOf(all, set, present)) {
    if (unproven(f) === undefined) gone.push(f);
    else out.removed.push(orphaned(f, 'its inventory does not record this repository, so nothing is done to it'));
  }
  if (gone.length === 0) return out;

  // Renamed, or its objects moved: what a present Kustomization builds now is handed over, never
  // deleted, whatever removed-kustomizations and the deletionPolicy say.
  const handed = await handoversOf(ctx, gone);
  for (const f of gone.filter((g) => handedAll(g, handed))) {
    out.removed.push(await renamed(ctx, f, handed.get(f.kustomization)!, succeeded));
  }
  gone = gone.filter((g) => !handedAll(g, handed));
  if (gone.length === 0) return out;

  const wanted = settings.removedKustomizations === 'delete' && settings.mode !== 'drift';
  if (!wanted || (ctx.applying && !succeeded)) {
    const why = !wanted
      ? 'set removed-kustomizations: delete to apply its deletionPolicy'
      : 'not deleted because this run failed';
    // Nothing is done to them: the report's closing lines say so, once each.
    for (const f of gone) out.removed.push(withHanded(orphaned(f, why), handed.get(f.kustomization)));
    return out;
  }

  // Handed back to Flux (docs/handover.md): the objects are Flux's now, whatever the policy says.
  const held = new Map<string, string>();
  for (const f of gone) {
    if (removalAction(f.record.status).action === 'orphan') continue;
    const [namespace = '', name = ''] = f.kustomization.split('/');
    const why = fluxHolds((await readFluxKustomization(client, { namespace, name })).object);
    if (why !== undefined) held.set(f.kustomization, why);
  }
  // The prune guard over the whole set: removing Kustomizations may not delete more than
  // prune-max-share of everything the set's inventories hold.
  const doomed = gone.filter((f) => !held.has(f.kustomization) && removalAction(f.record.status).action !== 'orphan');
  const total = all.filter((f) => f.set === set).reduce((n, f) => n + entriesOf(f.record).length, 0);
  const deleting = doomed.reduce((n, f) => n + kept(f.record, handed.get(f.kustomization)).length, 0);
  const refusal = shareRefusal(total, deleting, {
    maxShare: settings.pruneMaxShare,
    allowLarge: settings.allowLargePrune,
  });
  if (refusal !== undefined) {
    for (const f of gone) out.removed.push({ ...orphaned(f, 'refused'), action: 'refused', reason: refusal });
    out.error = `removed Kustomizations were not deleted: ${refusal}`;
    return out;
  }

  const failures: string[] = [];
  const refused: string[] = [];
  for (const f of gone) {
    const r = await removeOne(ctx, f, handed.get(f.kustomization), held.get(f.kustomization)).catch(
      (err: unknown): Removal => ({
        removed: { ...orphaned(f, ''), action: 'failed', reason: (err as Error).message },
        pruned: [],
      }),
    );
    out.removed.push(withHanded(r.removed, handed.get(f.kustomization)));
    out.pruned.push(...r.pruned);
    if (r.removed.action === 'failed') failures.push(`  ${r.removed.kustomization}: ${r.removed.reason}`);
    if (r.removed.action === 'refused') refused.push(`  ${r.removed.kustomization}: ${r.removed.reason}`);
  }
  const errors = [
    ...(failures.length > 0 ? [`removing Kustomizations failed:\n${failures.join('\n')}`] : []),
    ...(refused.length > 0 ? [`removed Kustomizations were not deleted:\n${refused.join('\n')}`] : []),
  ];
  if (errors.length > 0) out.error = errors.join('\n');
  return out;
}

const entriesOf = (r: InventoryRecord): Entry[] => union(r.entries, r.pending);

/** Its entries but those a present Kustomization builds now. */
const kept = (r: InventoryRecord, handed: ReadonlyMap<string, string> | undefined): Entry[] =>
  entriesOf(r).filter((e) => !handed?.has(e.id));

/** Every object of `f` is built by a present Kustomization now. */
const handedAll = (f: Found, handed: ReadonlyMap<string, ReadonlyMap<string, string>>): boolean => {
  const h = handed.get(f.kustomization);
  return h !== undefined && entriesOf(f.record).length > 0 && kept(f.record, h).length === 0;
};

/** The present Kustomizations that build some of the objects, in order. */
const targetsOf = (handed: ReadonlyMap<string, string>): string[] => [...new Set(handed.values())].sort();

/** For each removed Kustomization, its objects a present one builds now (entry id → `namespace/name`). */
async function handoversOf(ctx: RunContext, gone: readonly Found[]): Promise<Map<string, Map<string, string>>> {
  const out = new Map<string, Map<string, string>>();
  if (ctx.claims === undefined) return out;
  for (const f of gone) {
    const [namespace = '', name = ''] = f.kustomization.split('/');
    // Its inventory is in the run's cluster: the Kustomizations without spec.kubeConfig reconcile into it.
    const { claimed } = await ctx.claims.claimants({ namespace, name }, entriesOf(f.record));
    if (claimed.size > 0) out.set(f.kustomization, claimed);
  }
  return out;
}

/** A removed Kustomization's row with what was handed over, and to whom. */
function withHanded(r: RemovedKustomization, handed: ReadonlyMap<string, string> | undefined): RemovedKustomization {
  if (handed === undefined || handed.size === 0) return r;
  const to = targetsOf(handed);
  return {
    ...r,
    handedTo: to,
    handedOver: handed.size,
    reason: `${r.reason}; ${handed.size} of its object(s) are built by ${to.join(', ')} now: handed over, not deleted`,
  };
}

/**
 * A removed Kustomization whose every object a present one builds now: a rename (metadata.name
 * changed, or the file moved), or its objects moved. Nothing is deleted; its inventory (and lock)
 * goes once the run succeeded, in a run that writes.
 */
async function renamed(
  ctx: RunContext,
  f: Found,
  handed: ReadonlyMap<string, string>,
  succeeded: boolean,
): Promise<RemovedKustomization> {
  const to = targetsOf(handed);
  const base = { ...described(f), handedTo: to, handedOver: handed.size };
  const what = `renamed to ${to.join(', ')}: its ${handed.size} object(s) are built there now and are handed over, neither pruned nor deleted (whatever removed-kustomizations and its deletionPolicy say)`;
  if (!ctx.applying) return { ...base, action: 'renamed', reason: `${what}; its inventory would be removed` };
  if (!succeeded) return { ...base, action: 'orphaned', reason: `${what}; its inventory stays: this run failed` };
  const { client, settings } = ctx;
  const lock = await explained(f.store, () => acquireLock(client, f.store, settings, ctx.log.info));
  try {
    const store = f.store.using(client.guarded(() => lock.assertHeld()));
    await lock.assertHeld();
    await store.remove();
  } finally {
    await lock.remove();
  }
  ctx.log.info(`Kustomization ${f.kustomization} was ${what}; inventory removed`);
  return { ...base, action: 'renamed', reason: `${what}; its inventory was removed` };
}

/** What a removed Kustomization's report row says about it, whatever becomes of it. */
function described(f: Found, record: InventoryRecord = f.record) {
  return {
    kustomization: f.kustomization,
    inventory: `${f.store.namespace}/${f.store.name}`,
    objects: entriesOf(record).length,
    deletionPolicy: record.status.deletionPolicy,
  };
}

function orphaned(f: Found, why: string): RemovedKustomization {
  const base = described(f);
  return {
    ...base,
    action: 'orphaned',
    reason: `its file is gone from the repository; its ${base.objects} object(s) stay in the cluster (${why})`,
  };
}

/** Every inventory the credentials can list (cluster-wide, or else in the namespaces this run uses) that sits where this run would have written it. */
async function listInventories(
  client: ClusterClient,
  namespaces: string[],
  inventoryNamespace: string | undefined,
  notes: string[],
): Promise<Found[]> {
  const query = { labelSelector: `${INVENTORY_LABEL}=true` };
  let heads: ConfigMap[];
  try {
    heads = await list<ConfigMap>(client, { resource: CONFIGMAPS }, { query });
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 403)) throw err;
    notes.push(
      `Removed Kustomizations are looked for in ${namespaces.join(', ')} only: the credentials may not list configmaps cluster-wide`,
    );
    heads = [];
    for (const ns of namespaces) {
      heads.push(...(await list<ConfigMap>(client, { resource: CONFIGMAPS, namespace: ns }, { query })));
    }
  }
  // Only where this run would have written it: the inventory namespace, or else the Kustomization's own.
  const found = await listedInventories(client, heads, (namespace) => inventoryNamespace ?? namespace);
  return found.map((f) => ({ ...f, ...(f.record.status.set ? { set: f.record.status.set } : {}) }));
}

/** What removing one Kustomization did: its report row, and what became of its objects. */
interface Removal {
  removed: RemovedKustomization;
  pruned: PrunedObject[];
}

/**
 * One removed Kustomization under its lock (a preview takes none): its record read again, its
 * policy decided, then released (orphan), refused by a guard, or its objects deleted.
 */
async function removeOne(
  ctx: RunContext,
  f: Found,
  /** Its objects a present Kustomization builds now (entry id → `namespace/name`): never deleted. */
  handed: ReadonlyMap<string, string> | undefined,
  /** Why its objects stay whatever its policy says (a Flux Kustomization reconciles them). */
  heldBy?: string,
): Promise<Removal> {
  const held = await underLock(ctx, f);
  try {
    // Read again under the lock: the last run before the file went may have changed it.
    const record = held.dryRun ? f.record : ((await held.store.read()).record ?? f.record);
    const policy = removalAction(record.status);
    const { action, why } = heldBy === undefined ? policy : { action: 'orphan' as const, why: heldBy };
    if (action === 'orphan') return await release(ctx, held, f, record, why);
    const doomed = staleEntries(kept(record, handed), []);
    const refusal = await refusalOf(ctx, f, doomed, held.dryRun);
    if (refusal === undefined) return await deleteAll(ctx, held, f, record, doomed, { action, why });
    return { removed: { ...described(f, record), action: 'refused', reason: refusal }, pruned: [] };
  } finally {
    // The Kustomization is gone: its lock goes with it.
    await held.lock?.remove();
  }
}

/** A removed Kustomization's inventory as removeOne works on it. */
interface Held {
  /** A preview: no lock, no deletion but dry-runs, no write to the inventory. */
  dryRun: boolean;
  lock?: Lock;
  /** Before each write: rejects once another run took the lock over (src/inventory/lease.ts). */
  checkpoint?: () => Promise<void>;
  /** The run's manager over a client whose every write (retries too) passes the checkpoint. */
  manager: ResourceManager;
  /** Its inventory, written through that client. */
  store: InventoryStore;
}

/** Takes the lock of `f`'s inventory when the run writes. */
async function underLock(ctx: RunContext, f: Found): Promise<Held> {
  if (!ctx.applying) return { dryRun: true, manager: ctx.manager, store: f.store.using(ctx.client) };
  const lock = await explained(f.store, () => acquireLock(ctx.client, f.store, ctx.settings, ctx.log.info));
  const checkpoint = () => lock.assertHeld();
  const writer = ctx.client.guarded(checkpoint);
  const manager = ctx.manager.with({ client: writer });
  return { dryRun: false, lock, checkpoint, manager, store: f.store.using(writer) };
}

/** The policy (or a Flux Kustomization holding them) leaves its objects: only the inventory goes. */
async function release(ctx: RunContext, held: Held, f: Found, record: InventoryRecord, why: string): Promise<Removal> {
  await held.checkpoint?.();
  if (!held.dryRun) await held.store.remove();
  ctx.log.info(`Kustomization ${f.kustomization} was removed: ${why}, its objects stay; inventory removed`);
  return {
    removed: { ...described(f, record), action: 'released', reason: `${why}: its objects stay in the cluster` },
    pruned: [],
  };
}

/**
 * Why `doomed` may not be deleted, or undefined: as prune, a Namespace goes only when nothing else
 * lives in it; and in a run that writes, destructive kinds need a reviewer's yes (gate.ts), checked
 * before the first deletion. Read with the run's own credentials.
 */
async function refusalOf(
  ctx: RunContext,
  f: Found,
  doomed: readonly Entry[],
  dryRun: boolean,
): Promise<string | undefined> {
  const { settings } = ctx;
  const [namespace, name] = f.kustomization.split('/') as [string, string];
  const owner = { name, namespace };
  const guard = { allowLarge: settings.allowLargePrune };
  const refusal = await namespacePruneRefusal(ctx.manager, doomed, [], owner, guard, ctx.log.info);
  if (refusal !== undefined) return refusal;
  const gate = dryRun ? undefined : gateOf(settings);
  const unapproved = gate ? await needingApproval(ctx.manager, doomed, owner) : [];
  if (!gate || unapproved.length === 0) return undefined;
  return gateMessage(`delete ${unapproved.map(subjectOfEntry).join(', ')}`, gate, `Kustomization ${f.kustomization}`);
}

/**
 * Deletes `doomed` as the account the run that applied them recorded; an inventory without a
 * record (written before it was kept, or forged) acts as default-service-account when set, as a
 * present Kustomization would. Then the inventory goes, or keeps what could not be deleted.
 */
async function deleteAll(
  ctx: RunContext,
  held: Held,
  f: Found,
  record: InventoryRecord,
  doomed: readonly Entry[],
  { action, why }: { action: RemovalAction; why: string },
): Promise<Removal> {
  const base = described(f, record);
  const [namespace, name] = f.kustomization.split('/') as [string, string];
  ctx.log.info(`Kustomization ${f.kustomization} was removed: ${why}, deleting ${base.objects} object(s)`);
  const actor = held.manager.actingAs(record.status.impersonate ?? impersonatedUser({ namespace }, ctx.settings));
  const prunedOf = (results: PruneResult[]): PrunedObject[] =>
    results.map(({ subject, action: a, reason }) => ({
      subject,
      action: a,
      reason: reason ? `${f.kustomization} removed; ${reason}` : `${f.kustomization} removed`,
      removedWith: f.kustomization,
    }));
  let results: PruneResult[];
  try {
    results = await actor.delete(doomed, {
      owner: { name, namespace },
      dryRun: held.dryRun,
      ...(held.checkpoint ? { checkpoint: held.checkpoint } : {}),
    });
  } catch (err) {
    // The lock was lost: what was deleted before is reported; the inventory is the new holder's.
    if (!(err instanceof PruneStopped)) throw err;
    return { removed: { ...base, action: 'failed', reason: err.message }, pruned: prunedOf(err.results) };
  }
  const pruned = prunedOf(results);
  const survivors = failedDeletions(results);
  if (survivors.length > 0) return { removed: await keepSurvivors(held, record, base, survivors), pruned };
  const reason = action === 'delete-and-wait' && !held.dryRun ? why + (await terminated(actor, results, record)) : why;
  await held.checkpoint?.();
  if (!held.dryRun) await held.store.remove();
  return { removed: { ...base, action: 'deleted', reason }, pruned };
}

/** Deletions failed: the inventory keeps those objects (marked Failed), so a later run tries again. */
async function keepSurvivors(
  held: Held,
  record: InventoryRecord,
  base: ReturnType<typeof described>,
  survivors: readonly PruneResult[],
): Promise<RemovedKustomization> {
  if (!held.dryRun) {
    await held.checkpoint?.();
    await held.store.update((latest) => ({
      entries: survivors.map((s) => s.entry),
      pending: [],
      status: { ...(latest ?? record).status, result: 'Failed', message: 'removal of the Kustomization failed' },
    }));
  }
  return {
    ...base,
    action: 'failed',
    reason: `${survivors.length} object(s) could not be deleted and stay in the inventory: ${survivors
      .map(describeFailure)
      .join('; ')}`,
  };
}

/**
 * deletionPolicy WaitForTermination: waits for what was deleted to be gone. As Flux's finalizer, a
 * timeout is reported, and the Kustomization is removed all the same.
 */
async function terminated(actor: ResourceManager, results: readonly PruneResult[], record: InventoryRecord) {
  const deleted = results.filter((r) => r.action === 'deleted' && r.reason !== 'already gone').map((r) => r.entry);
  const left = await actor.waitGone(deleted, record.status.timeoutMs);
  return left.length === 0
    ? '; all objects terminated'
    : `; ${left.length} object(s) had not terminated after ${formatDuration(record.status.timeoutMs)}: ${left.join(', ')}`;
}
