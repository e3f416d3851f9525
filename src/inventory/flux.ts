/**
 * Taking a Kustomization over from Flux, pure. A Flux Kustomization of the same namespace/name
 * records what Flux applied in `status.inventory`; on this tool's first run for that Kustomization
 * those entries are the previous inventory, so that an object removed from Git at the switch is
 * pruned as Flux would have pruned it, not orphaned. While Flux's controller may still reconcile
 * that object (it is not suspended), a run that writes is refused: two owners of one set of
 * objects undo each other's changes, and Flux's finalizer deletes every object of its inventory when
 * an unsuspended Kustomization is deleted. See docs/handover.md.
 */
import { FLUX_GROUP } from '../objects/flux.js';
import { entryOf, type Entry } from '../objects/id.js';

/** The parts of a Flux Kustomization a hand-over looks at, as the API server returns it. */
export interface FluxKustomization {
  metadata?: { name?: string; namespace?: string; deletionTimestamp?: string; creationTimestamp?: string };
  spec?: {
    suspend?: boolean;
    kubeConfig?: { secretRef?: { name?: string }; configMapRef?: { name?: string } };
  };
  status?: { inventory?: { entries?: unknown }; conditions?: unknown[]; observedGeneration?: number };
}

/** How long a Flux Kustomization may go unreconciled before no controller is taken to run: Flux takes seconds. */
export const UNRECONCILED_AFTER_MS = 5 * 60_000;

/**
 * Whether no controller has ever reconciled `flux`: no status conditions, no observedGeneration,
 * created at least UNRECONCILED_AFTER_MS ago (an object created just now may be about to be). Such an
 * object was applied (by a parent, ours or Flux's) into a cluster where no kustomize-controller runs:
 * not a second owner.
 */
export function neverReconciled(flux: FluxKustomization, now: number): boolean {
  const created = Date.parse(flux.metadata?.creationTimestamp ?? '');
  const status = flux.status;
  return (
    Number.isFinite(created) &&
    now - created >= UNRECONCILED_AFTER_MS &&
    (status?.conditions ?? []).length === 0 &&
    status?.observedGeneration === undefined
  );
}

/** The cluster a Kustomization's objects are in: its own, or the one its spec.kubeConfig names. */
export type Target = { secretRef?: { name?: string }; configMapRef?: { name?: string } } | undefined;

/** The RBAC kinds whose names may hold `:`, which Flux's ids (cli-utils' ObjMetadata) write as `__`. */
const RBAC_KINDS = new Set(['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding']);
const RBAC_GROUP = 'rbac.authorization.k8s.io';

/**
 * The parts of a cli-utils object id as it parses them: namespace up to the first `_`, group and kind
 * after the last two, and in between the name, where `__` stands for `:`. Undefined with fewer than
 * three `_`. (An id of ours, which keeps the `:`, splits the same way.)
 */
export function splitFluxId(id: string): { namespace: string; name: string; group: string; kind: string } | undefined {
  const first = id.indexOf('_');
  const last = id.lastIndexOf('_');
  const middle = id.lastIndexOf('_', last - 1);
  if (first === -1 || middle <= first) return undefined;
  return {
    namespace: id.slice(0, first),
    name: id.slice(first + 1, middle).replaceAll('__', ':'),
    group: id.slice(middle + 1, last),
    kind: id.slice(last + 1),
  };
}

/**
 * One of Flux's `status.inventory.entries[]` as this tool's entry, or undefined when it is not one.
 * Flux's id is `<namespace>_<name>_<group>_<kind>` as cli-utils parses it: namespace up to the first
 * `_`, kind and group after the last two, and in between the name, where `__` stands for `:`.
 * This tool's ids keep the `:` (see entries.ts); the object named is the same.
 */
export function fluxEntry(raw: unknown): Entry | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const { id, v } = raw as { id?: unknown; v?: unknown };
  if (typeof id !== 'string' || typeof v !== 'string' || v === '' || v.includes('/')) return undefined;
  const parts = splitFluxId(id);
  if (parts === undefined) return undefined;
  const { namespace, name, group, kind } = parts;
  if (name === '' || kind === '' || name.includes('_')) return undefined;
  if (name.includes(':') && !(group === RBAC_GROUP && RBAC_KINDS.has(kind))) return undefined;
  return entryOf({
    apiVersion: group === '' ? v : `${group}/${v}`,
    kind,
    name,
    ...(namespace !== '' ? { namespace } : {}),
  });
}

const describeTarget = (t: Target): string =>
  t?.secretRef?.name !== undefined
    ? `the cluster of kubeConfig Secret ${t.secretRef.name}`
    : t?.configMapRef?.name !== undefined
      ? `the cluster of kubeConfig ConfigMap ${t.configMapRef.name}`
      : 'its own cluster';

/** Whether `flux` reconciles into the cluster `target` (this run's spec.kubeConfig) names. */
const sameTarget = (flux: FluxKustomization, target: Target): boolean =>
  describeTarget(flux.spec?.kubeConfig) === describeTarget(target);

/** What a first run takes from a Flux Kustomization: entries to start from, and what to say. */
export interface FluxImport {
  entries: Entry[];
  note: string;
}

/**
 * The previous inventory a run with no inventory of its own takes from `flux` (the Flux
 * Kustomization of the same namespace/name), and the note that says so. `target` is where this
 * run's objects go (its spec.kubeConfig): a Flux Kustomization that reconciles into another
 * cluster lists objects that are not there, and is not imported. Entries that are not Flux ids
 * are left out and named.
 */
export function fluxImport(flux: FluxKustomization, target: Target, preview: boolean): FluxImport {
  const where = `Flux Kustomization ${flux.metadata?.namespace ?? '?'}/${flux.metadata?.name ?? '?'}`;
  const theirs = flux.spec?.kubeConfig;
  if (!sameTarget(flux, target)) {
    return {
      entries: [],
      note:
        `${where} reconciles into ${describeTarget(theirs)}, this Kustomization into ${describeTarget(target)}: ` +
        'its status.inventory was not imported, and the objects it lists are left alone',
    };
  }
  const raw = flux.status?.inventory?.entries;
  const list: unknown[] = Array.isArray(raw) ? (raw as unknown[]) : [];
  if (list.length === 0) return { entries: [], note: `${where} has no status.inventory entries: nothing was imported` };
  const entries: Entry[] = [];
  const malformed: string[] = [];
  const seen = new Set<string>();
  for (const item of list) {
    const entry = fluxEntry(item);
    if (entry === undefined) malformed.push(JSON.stringify(item));
    else if (!seen.has(entry.id)) {
      seen.add(entry.id);
      entries.push(entry);
    }
  }
  const left =
    malformed.length > 0
      ? `; ${malformed.length} entr${malformed.length === 1 ? 'y is' : 'ies are'} not <namespace>_<name>_<group>_<kind> ` +
        `with a version and ${malformed.length === 1 ? 'was' : 'were'} left out: ${malformed.slice(0, 5).join(', ')}${malformed.length > 5 ? ', ...' : ''}`
      : '';
  return {
    entries,
    note:
      `Imported ${entries.length} entr${entries.length === 1 ? 'y' : 'ies'} from ${where}'s status.inventory ` +
      `as the previous inventory${preview ? ' (for this preview; an apply records them)' : ''}: objects Flux applied ` +
      `that Git no longer has are pruned as Flux would prune them${left}`,
  };
}

/**
 * Why a run that writes must not run while `flux` exists, or undefined: a Flux Kustomization that
 * is not suspended is (or will be, once its controller runs) reconciled by Flux too. One that
 * reconciles into another cluster than `target` does not touch this run's objects, and one no
 * controller has reconciled in minutes (neverReconciled: an object a parent applied into a cluster
 * without Flux's controllers, as earlier versions of this tool did) has no other owner.
 */
export function fluxConflict(flux: FluxKustomization, target?: Target, now = Date.now()): string | undefined {
  if (flux.spec?.suspend === true || !sameTarget(flux, target) || neverReconciled(flux, now)) return undefined;
  const ns = flux.metadata?.namespace ?? '?';
  const name = flux.metadata?.name ?? '?';
  const deleting = flux.metadata?.deletionTimestamp
    ? ' It is being deleted, and unless it is suspended Flux deletes every object of its inventory when it goes.'
    : '';
  return (
    `Flux Kustomization ${ns}/${name} exists in the cluster and is not suspended: Flux's kustomize-controller ` +
    "reconciles the same objects, and two owners undo each other's changes." +
    deleting +
    ` Nothing was applied or pruned. Suspend it first (flux suspend kustomization ${name} -n ${ns}, or ` +
    `kubectl -n ${ns} patch kustomizations.${FLUX_GROUP} ${name} --field-manager=flux-client-side-apply --type=merge -p '{"spec":{"suspend":true}}'), ` +
    'then run again; see docs/handover.md'
  );
}

/** What a preview says of an unsuspended Flux Kustomization of the same name: an apply would be refused. */
export function fluxConflictNote(flux: FluxKustomization, target?: Target, now = Date.now()): string | undefined {
  const conflict = fluxConflict(flux, target, now);
  if (conflict === undefined) return undefined;
  const ns = flux.metadata?.namespace ?? '?';
  const name = flux.metadata?.name ?? '?';
  return (
    `Flux Kustomization ${ns}/${name} exists in the cluster and is not suspended: an apply of this Kustomization ` +
    `is refused until it is (flux suspend kustomization ${name} -n ${ns}); see docs/handover.md`
  );
}

/**
 * Why a Kustomization removed from this tool's set keeps its objects whatever its deletionPolicy, or
 * undefined: a Flux Kustomization of the same name that is not suspended owns them now (they were
 * handed back to Flux), and deleting them would delete Flux's objects.
 */
export function fluxHolds(flux: FluxKustomization | undefined): string | undefined {
  // Removed Kustomizations are found in the action's own cluster only (src/reconcile/removed.ts).
  if (flux === undefined || flux.spec?.suspend === true || !sameTarget(flux, undefined)) return undefined;
  return (
    `Flux Kustomization ${flux.metadata?.namespace ?? '?'}/${flux.metadata?.name ?? '?'} is not suspended ` +
    'and reconciles these objects now (handed back to Flux)'
  );
}
