import { mapLimit } from '../util/concurrency.js';
import { servedKinds, type ResourceMapping } from '../cluster/discovery.js';
import type { ManagedCluster } from '../cluster/managed.js';
import { get } from '../cluster/verbs.js';
import { pollUntil } from '../util/poll.js';
import { ApiError } from '../cluster/errors.js';
import { FORCE_MARKER } from '../objects/flux.js';
import { subjectOf, type KubeObject } from '../objects/kube.js';
import type { ChangeSetEntry } from './changeset.js';
import { cleanupPatch } from './cleanup.js';
import { diffObjects, normalizeForDiff } from './diff.js';
import { yamlDiff } from './yaml-diff.js';
import { hasDrifted } from './drift.js';
import { LiveObjects, ownerSelector, versionOf, type LiveObject, type LiveRead } from '../cluster/live.js';
import { provenUnchanged } from './noop.js';
import { sortForApply, stageOf, type Stage } from '../objects/order.js';
import { immutableFields, namedFields, policyOf } from './policy.js';
import { appliedSoFar } from './applied.js';
import { planUnread } from './unread.js';
import { fieldList, messageOf, reasonOf, serverSideApply, writeObject, writeStage, type Planned } from './write.js';
import { byOther, byParent, kustomizations } from './foreseen-notes.js';
import { pendingTakeoverHint, takeOverBeforeDryRun } from './takeover.js';

/**
 * How one staged apply goes. The field manager, how many dry-runs and writes of one kind (see
 * writeStage) are in flight at once within a stage, and where the lines go are the manager's.
 */
export interface ApplyOptions {
  /** Plan only: dry-runs, no writes (preview and drift modes). */
  dryRunOnly: boolean;
  /**
   * Dry-run every object, as Flux does, even one that the live object proves unchanged (see
   * provenUnchanged): the dry-run also runs admission webhooks and validation again.
   */
  alwaysDryRun?: boolean;
  /** Why an object may not be recreated (destructive-approval-label), or undefined: checked before its stage writes. */
  refuseRecreate?: (obj: KubeObject, live: LiveObject) => string | undefined;
  /** spec.force: recreate objects whose immutable fields changed. */
  force?: boolean;
  /** JSON pointers that are neither compared nor overwritten for an object (spec.ignore). */
  ignoredPaths?: (obj: KubeObject) => string[];
  /** Drops ignored paths from a copy of an object (spec.ignore). */
  strip?: <T>(obj: T, pointers: readonly string[]) => T;
  /** Gives ignored paths of the desired object the live values (spec.ignore). */
  adopt?: (desired: KubeObject, live: Record<string, unknown> | undefined, pointers: readonly string[]) => KubeObject;
  /** How long the definitions stage waits for CRDs to be Established, and a recreate for the old object to go. */
  waitTimeoutMs?: number;
  /** Called before each stage and each write; a rejection stops the apply there (a lost lock). */
  checkpoint?: () => Promise<void>;
  /** The object's fields written from a secret source, this run or earlier: masked in its diff whatever its kind. */
  secretPaths?: (obj: KubeObject) => readonly string[];
  /**
   * An untrusted run (source/trust.ts): an error about an object holding secret-derived values
   * shows no value the server quoted (ssa/error-redaction.ts).
   */
  untrusted?: boolean;
  /** The substituteFrom ConfigMaps' values: redacted from errors where the server shows a value (error-redaction.ts). */
  substitutedValues?: readonly string[];
  /**
   * A preview's view of what would exist before this Kustomization's objects: what the Kustomizations
   * it depends on would create, then its own earlier stages (added here as they are planned); never
   * what a sibling running at the same time adds (reconcile/would-create.ts). An object in a namespace
   * of the view is planned "created" (it cannot be dry-run: the namespace does not exist yet), as
   * under Flux, where that Kustomization would have created it first. Only with dryRunOnly.
   */
  created?: Created;
  /** With dryRunOnly: whether the live object may be read and shown (reconcile/readable.ts, unread.ts). */
  mayRead?: (obj: KubeObject) => boolean | Promise<boolean>;
  /** Field managers whose fields are taken over before the dry-run (override-manager-before-dry-run, takeover.ts). */
  overrideManagersBeforeDryRun?: readonly string[];
}

/** What messageOf needs to redact an error about `obj`: its secret paths, whether the run is untrusted, substituted values. */
function secretsOf(obj: KubeObject, opts: ApplyOptions): Parameters<typeof messageOf>[2] {
  const substituted = opts.substitutedValues ?? [];
  return { paths: opts.secretPaths?.(obj) ?? [], untrusted: opts.untrusted === true, substituted };
}

/** A failure during apply, with what was already done so that the report can show it. */
export class ApplyError extends Error {
  /** What failed, without what the run had applied before (appliedSoFar): said again by a run that lost its lock. */
  readonly detail: string;
  constructor(
    detail: string,
    readonly changeset: ChangeSetEntry[],
    /** The objects that failed, each with its own message (for annotations on their source). */
    readonly failures: { object: KubeObject; message: string }[] = [],
    /** The message ends with what the run had applied before (appliedSoFar). */
    withApplied = false,
  ) {
    super(withApplied ? detail + appliedSoFar(changeset) : detail);
    this.name = 'ApplyError';
    this.detail = detail;
  }
}

const STAGES: Stage[] = ['definitions', 'classes', 'resources'];

/**
 * Server-side applies objects the way Flux's ssa manager does (ResourceManager.apply, manager.ts):
 * staged (definitions, classes, the rest), each object dry-run with the manager's field manager and
 * force, compared with the live object, and applied only when it drifted. Unlike Flux, which GETs every object, the live
 * objects come from one owner-labelled LIST per resource and namespace (see LiveObjects), and an
 * object its managed fields prove unchanged is not dry-run (see provenUnchanged). Every object of
 * a stage is planned before any is applied; if any is invalid, the stage fails listing all of them
 * and nothing of it is applied. Then the writes: Flux sends them one at a time, here those of one
 * kind go concurrently (see writeStage).
 *
 * A create is dry-run too, although the live lists did not show the object: the dry-run is what
 * finds an object that exists without our labels (it answers with a resourceVersion: the object is
 * read and planned as configured, with its diff, not reported created), and it is what fails a
 * stage with an invalid or refused object before any object of the stage is written.
 */
export async function applyAll(
  m: ManagedCluster,
  objects: readonly KubeObject[],
  opts: ApplyOptions,
): Promise<ChangeSetEntry[]> {
  const changeset: ChangeSetEntry[] = [];
  // What this run creates: nothing can exist yet in a new namespace or of a new CRD's kind, so such
  // objects are not read (and, in a preview, objects of a new namespace cannot be dry-run).
  const created: Created = opts.dryRunOnly && opts.created ? opts.created : { namespaces: new Set(), kinds: new Set() };
  for (const stage of STAGES) {
    const inStage = sortForApply(objects.filter((o) => stageOf(o) === stage));
    if (inStage.length === 0) continue;
    await checkpoint(opts, changeset);
    // Read afresh per stage: the stage before may have created namespaces and definitions.
    const reader = new LiveObjects(m.client);
    const results = await mapLimit(inStage, m.concurrency, async (obj) => {
      try {
        return { ok: true as const, planned: await plan(m, reader, obj, opts, created) };
      } catch (err) {
        return { ok: false as const, error: (err as Error).message, obj };
      }
    });
    const failures = results.flatMap((r) => (r.ok ? [] : [r.error]));
    if (failures.length > 0) {
      const head =
        failures.length > 1
          ? `${failures.length} objects of the ${stage} stage failed the dry-run; ${opts.dryRunOnly ? 'the stage could not be applied as it is' : 'nothing of the stage was applied'}:\n`
          : '';
      throw new ApplyError(
        head + failures.join('\n'),
        changeset,
        results.flatMap((r) => (r.ok ? [] : [{ object: r.obj, message: r.error }])),
        true,
      );
    }
    const planned = results.flatMap((r) => (r.ok ? [r.planned] : []));
    const proven = planned.filter((p) => p.proven).length;
    if (proven > 0) {
      m.log(`${stage}: ${proven} of ${planned.length} object(s) unchanged by their managed fields, not dry-run`);
    }
    for (const p of planned) if (p.entry.action === 'created' && !p.recreate) noteCreated(created, p.obj);
    const waitTimeoutMs = opts.waitTimeoutMs ?? 60_000;
    const writes = await writeStage(planned, {
      concurrency: m.concurrency,
      dryRunOnly: opts.dryRunOnly,
      ...(opts.checkpoint ? { checkpoint: opts.checkpoint } : {}),
      write: (p) => writeObject(m, p, waitTimeoutMs, secretsOf(p.obj, opts)),
      log: m.log,
    });
    changeset.push(...writes.done);
    if (writes.failures.length > 0) {
      const n = writes.failures.length;
      const head = n > 1 ? `${n} objects of the ${stage} stage failed to apply:\n` : '';
      const messages = writes.failures.map((f) => f.message).join('\n');
      throw new ApplyError(head + messages, changeset, writes.failures, true);
    }
    if (writes.refused !== undefined) throw new ApplyError((writes.refused as Error).message, changeset);
    if (stage === 'definitions' && !opts.dryRunOnly) {
      try {
        await waitForDefinitions(m, planned, waitTimeoutMs);
      } catch (err) {
        throw new ApplyError((err as Error).message, changeset);
      }
    }
  }
  return changeset;
}

/** The caller's checkpoint; its refusal is an ApplyError with what was applied before it. */
async function checkpoint(opts: ApplyOptions, changeset: ChangeSetEntry[]): Promise<void> {
  try {
    await opts.checkpoint?.();
  } catch (err) {
    throw new ApplyError((err as Error).message, changeset);
  }
}

export interface Created {
  namespaces: Set<string>;
  /** `group/kind` of the CRDs created. */
  kinds: Set<string>;
  /**
   * In a preview: which other Kustomizations of the run, that this one does not depend on, would
   * create a Namespace the dry-run found missing (see reconcile/would-create.ts).
   */
  foresee?: (namespace: string) => Promise<Foreseen>;
}

/** The Kustomizations (`namespace/name`) that would create a missing Namespace, none a dependency. */
export interface Foreseen {
  /** Its parent, whose build is this Kustomization's object: under Flux, it applies the Namespace first. */
  parents: readonly string[];
  /** Neither a dependency nor a dependant: under Flux, the object fails until one has been applied. */
  independent: readonly string[];
  /** Depending on this Kustomization, directly or not: under Flux, neither becomes ready. */
  dependants: readonly string[];
}

function noteCreated(created: Created, obj: KubeObject): void {
  if (obj.kind === 'Namespace' && obj.apiVersion === 'v1') created.namespaces.add(obj.metadata.name);
  if (obj.kind === 'CustomResourceDefinition' && obj.apiVersion.startsWith('apiextensions.k8s.io/')) {
    const spec = (obj as { spec?: { group?: unknown; names?: { kind?: unknown } } }).spec;
    if (typeof spec?.group === 'string' && typeof spec.names?.kind === 'string') {
      created.kinds.add(`${spec.group}/${spec.names.kind}`);
    }
  }
}

/** How often an object is read before its dry-run is taken as it comes (it keeps changing under us). */
const MAX_READS = 3;

/**
 * Phase 1 for one object: read it live (from the stage's lists), dry-run it, and decide. The
 * dry-run answers with the resourceVersion it applied to ('' for a create): when that is not the
 * version read, the object changed since the list or exists without our labels, so it is read
 * again by itself and planned again, which keeps the drift decision between two views of the
 * same version.
 */
async function plan(
  m: ManagedCluster,
  reader: LiveObjects,
  input: KubeObject,
  opts: ApplyOptions,
  created: Created,
): Promise<Planned> {
  const subject = subjectOf(input);
  let mapping: ResourceMapping;
  try {
    mapping = await m.discovery.mapping(input.apiVersion, input.kind);
  } catch (err) {
    throw new Error(`${subject}: ${(err as Error).message}`, { cause: err });
  }
  const desired = normalizeScope(input, mapping, subject);
  const getFailed = (err: unknown) =>
    new Error(`${subject} get failed: ${messageOf(err, desired, secretsOf(desired, opts))}`, { cause: err });
  const cannotExist =
    (mapping.namespaced && created.namespaces.has(desired.metadata.namespace ?? '')) ||
    created.kinds.has(`${mapping.group}/${mapping.kind}`);
  if (!cannotExist && opts.dryRunOnly && (await opts.mayRead?.(desired)) === false) {
    const unread = await planUnread(m, mapping, desired, opts);
    if (unread !== undefined) return unread;
    const outcome = await planAgainst(m, mapping, desired, undefined, opts, created);
    if ('needsLive' in outcome) throw outcome.error;
    return outcome.planned;
  }
  let live: LiveRead = cannotExist
    ? { object: undefined, direct: false }
    : await reader.read(mapping, desired.metadata, ownerSelector(desired)).catch((err: unknown) => {
        throw getFailed(err);
      });
  if (live.object && !opts.dryRunOnly && opts.overrideManagersBeforeDryRun?.length) {
    const takeover = { managers: opts.overrideManagersBeforeDryRun, force: opts.force === true };
    const secrets = secretsOf(desired, opts);
    const object = await takeOverBeforeDryRun(m, mapping, desired, live.object, subject, { ...takeover, secrets });
    if (object !== live.object) live = { object, direct: true };
  }
  for (let reads = 1; ; reads++) {
    const outcome = await planAgainst(m, mapping, desired, live.object, opts, created);
    const last = reads >= MAX_READS;
    if ('needsLive' in outcome) {
      if (last || live.direct) throw outcome.error;
    } else if (outcome.seen === undefined || outcome.seen === versionOf(live.object) || last) {
      return outcome.planned;
    }
    const object = await reader.get(mapping, desired.metadata).catch((err: unknown) => {
      throw getFailed(err);
    });
    live = { object, direct: true };
  }
}

type Attempt =
  | {
      planned: Planned;
      /** The resourceVersion the dry-run applied to; undefined when there was no dry-run. */
      seen?: string;
    }
  /** The dry-run says an immutable field changed, but the object was not read: read it and try again. */
  | { needsLive: true; error: Error };

async function planAgainst(
  m: ManagedCluster,
  mapping: ResourceMapping,
  desired: KubeObject,
  live: LiveObject | undefined,
  opts: ApplyOptions,
  created: Created,
): Promise<Attempt> {
  const entry: ChangeSetEntry = {
    subject: subjectOf(desired),
    action: 'unchanged',
    apiVersion: desired.apiVersion,
    kind: desired.kind,
    ...(desired.metadata.namespace ? { namespace: desired.metadata.namespace } : {}),
    name: desired.metadata.name,
  };
  const policy = policyOf(desired, live, opts.force ?? false);
  if (policy.skip || policy.ifNotPresent) {
    return { planned: { obj: desired, mapping, entry: { ...entry, action: 'skipped' }, apply: false } };
  }
  const ignored = opts.ignoredPaths?.(desired) ?? [];
  const obj = live && ignored.length > 0 && opts.adopt ? opts.adopt(desired, live, ignored) : desired;
  if (!live && opts.dryRunOnly && mapping.namespaced && created.namespaces.has(obj.metadata.namespace ?? '')) {
    const note = `checked without a server dry-run: its Namespace ${obj.metadata.namespace ?? ''} does not exist yet and would be created first`;
    return { planned: { obj, mapping, entry: { ...entry, action: 'created', note }, apply: true } };
  }
  const cleanup = live && !policy.merge ? cleanupPatch(live, m.fieldManager) : undefined;
  if (live && !cleanup && !opts.alwaysDryRun && ignored.length === 0) {
    if (provenUnchanged(obj, live, m.fieldManager).unchanged) {
      return { planned: { obj, mapping, entry, apply: false, live, proven: true }, seen: versionOf(live) };
    }
  }
  let dryRun: LiveObject;
  try {
    dryRun = await serverSideApply(m, mapping, obj, true);
  } catch (err) {
    const immutable = err instanceof ApiError ? immutableFields(err) : undefined;
    const fields = immutable && live ? namedFields(immutable, (err as Error).message, obj, live) : immutable;
    if (fields && live && policy.force) {
      const refused = opts.refuseRecreate?.(obj, live);
      if (refused !== undefined) throw new Error(`${entry.subject}: ${refused}`, { cause: err });
      return {
        planned: {
          obj,
          mapping,
          entry: { ...entry, action: 'created', recreated: fields },
          apply: true,
          recreate: fields,
          live,
        },
        seen: versionOf(live),
      };
    }
    const missing = !live && opts.dryRunOnly ? missingNamespace(err, obj) : undefined;
    const foreseen = missing !== undefined && created.foresee ? await created.foresee(missing) : undefined;
    if (missing !== undefined && foreseen && foreseen.parents.length + foreseen.independent.length > 0) {
      const by =
        foreseen.parents.length > 0 ? byParent(missing, foreseen.parents) : byOther(missing, foreseen.independent);
      const note = `checked without a server dry-run: ${by}`;
      return { planned: { obj, mapping, entry: { ...entry, action: 'created', note }, apply: true } };
    }
    const dependants = foreseen?.dependants ?? [];
    const hint = dependants.length
      ? `; ${kustomizations(dependants)} would create it, but depend${dependants.length > 1 ? '' : 's'} on this one: under Flux neither becomes ready`
      : fields
        ? `; immutable ${fieldList(fields)} changed: force would delete and recreate the object ` +
          '(spec.force: true in the Kustomization, the force input or --force with path, ' +
          `or the annotation ${FORCE_MARKER}: Enabled on the object)`
        : '';
    const managers = opts.dryRunOnly ? opts.overrideManagersBeforeDryRun : undefined;
    const pending = pendingTakeoverHint(obj, live, m.fieldManager, { managers, force: opts.force === true });
    const error = new Error(
      `${entry.subject} dry-run failed (${reasonOf(err)}): ${messageOf(err, obj, secretsOf(desired, opts))}${hint}${pending}`,
      {
        cause: err,
      },
    );
    if (fields && !live) return { needsLive: true, error };
    throw error;
  }
  const strip = <T>(o: T): T => (ignored.length > 0 && opts.strip ? opts.strip(o, ignored) : o);
  const drifted = hasDrifted(strip(dryRun), live && strip(live));
  const apply = drifted || cleanup !== undefined;
  entry.action = !apply ? 'unchanged' : live ? 'configured' : 'created';
  if (entry.action === 'configured' && live) {
    const secret = opts.secretPaths?.(desired);
    const changes = diffObjects(strip(live), strip(dryRun), secret);
    if (changes.length > 0) {
      entry.diff = changes;
      const lines = yamlDiff(normalizeForDiff(strip(live)), normalizeForDiff(strip(dryRun)), secret);
      if (lines !== undefined) entry.yamlDiff = lines;
    }
  }
  return {
    planned: { obj, mapping, entry, apply, ...(cleanup ? { cleanup } : {}), ...(live ? { live } : {}) },
    seen: versionOf(dryRun),
  };
}

/** The object's Namespace, when `err` (its dry-run's) says that Namespace does not exist. */
function missingNamespace(err: unknown, obj: KubeObject): string | undefined {
  const ns = obj.metadata.namespace;
  if (!(err instanceof ApiError) || err.status !== 404 || ns === undefined) return undefined;
  return err.details?.kind === 'namespaces' && err.details.name === ns ? ns : undefined;
}

/** Namespaced objects need a namespace (Flux does not guess one); cluster-scoped ones lose a stray one. */
function normalizeScope(obj: KubeObject, mapping: ResourceMapping, subject: string): KubeObject {
  if (mapping.namespaced && !obj.metadata.namespace) {
    throw new Error(
      `${subject}: namespace not specified: set metadata.namespace in the manifest or a target namespace`,
    );
  }
  if (!mapping.namespaced && obj.metadata.namespace) {
    const { namespace: _ns, ...metadata } = obj.metadata;
    return { ...obj, metadata };
  }
  return obj;
}

/** CRDs must be Established (and discovery refreshed) before their custom resources are applied. */
async function waitForDefinitions(m: ManagedCluster, planned: Planned[], timeoutMs: number): Promise<void> {
  const crds = planned.filter((p) => p.obj.kind === 'CustomResourceDefinition');
  if (crds.length === 0) return;
  const deadline = Date.now() + timeoutMs;
  for (const p of crds) {
    const ref = { resource: p.mapping, name: p.obj.metadata.name };
    await pollUntil(
      async () => {
        const live = await get<{ status?: { conditions?: { type: string; status: string }[] } }>(m.client, ref);
        return live.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') || undefined;
      },
      {
        deadline,
        intervalMs: 250,
        timedOut: () => {
          throw new Error(`${p.entry.subject} was not Established within ${timeoutMs / 1000}s`);
        },
      },
    );
  }
  await m.discovery.awaitServed(
    crds.flatMap((p) => servedKinds(p.obj)),
    deadline,
  );
}
