import type { ClusterClient } from '../cluster/client.js';
import type { Discovery, ResourceMapping } from '../cluster/discovery.js';
import { objectPath } from '../cluster/discovery.js';
import { ApiError, isNotFound } from '../cluster/errors.js';
import { subjectOf, type KubeObject } from '../kustomize/parse.js';
import type { ChangeSetEntry } from './changeset.js';
import { hasDrifted } from './drift.js';
import { scrub, secretValues } from './mask.js';
import { sortForApply, stageOf, type Stage } from './order.js';

export interface ApplyOptions {
  fieldManager: string;
  /** Plan only: dry-runs, no writes (preview and drift modes). */
  dryRunOnly: boolean;
  /** Dry-runs in flight at once within a stage. */
  concurrency: number;
  /** How long the definitions stage waits for CRDs to be Established. */
  definitionsTimeoutMs?: number;
  log?: (line: string) => void;
}

/** A failure during apply, with what was already done so that the report can show it. */
export class ApplyError extends Error {
  constructor(
    message: string,
    readonly changeset: ChangeSetEntry[],
  ) {
    super(message);
    this.name = 'ApplyError';
  }
}

interface Planned {
  obj: KubeObject;
  mapping: ResourceMapping;
  entry: ChangeSetEntry;
  drifted: boolean;
}

const STAGES: Stage[] = ['definitions', 'classes', 'resources'];

/**
 * Server-side applies objects the way Flux's ssa manager does: staged (definitions, classes,
 * the rest), each object dry-run with our field manager and force, compared with the live
 * object, and applied only when it drifted.
 */
export async function applyAll(
  client: ClusterClient,
  discovery: Discovery,
  objects: readonly KubeObject[],
  opts: ApplyOptions,
): Promise<ChangeSetEntry[]> {
  const changeset: ChangeSetEntry[] = [];
  // Namespaces this run creates: in a preview they do not exist yet, so their objects cannot be dry-run.
  const newNamespaces = new Set<string>();
  for (const stage of STAGES) {
    const inStage = sortForApply(objects.filter((o) => stageOf(o) === stage));
    if (inStage.length === 0) continue;
    let planned: Planned[];
    try {
      planned = await mapLimit(inStage, opts.concurrency, (obj) => plan(client, discovery, obj, opts, newNamespaces));
    } catch (err) {
      throw new ApplyError((err as Error).message, changeset);
    }
    for (const p of planned) {
      if (p.obj.kind === 'Namespace' && p.entry.action === 'created') newNamespaces.add(p.obj.metadata.name);
      if (p.drifted && !opts.dryRunOnly) {
        try {
          await serverSideApply(client, p.mapping, p.obj, opts.fieldManager, false);
        } catch (err) {
          throw new ApplyError(`${p.entry.subject} apply failed: ${messageOf(err, p.obj)}`, changeset);
        }
      }
      changeset.push(p.entry);
      opts.log?.(`${p.entry.subject} ${p.entry.action}`);
    }
    if (stage === 'definitions' && !opts.dryRunOnly) {
      try {
        await waitForDefinitions(client, discovery, planned, opts.definitionsTimeoutMs ?? 60_000);
      } catch (err) {
        throw new ApplyError((err as Error).message, changeset);
      }
    }
  }
  return changeset;
}

async function plan(
  client: ClusterClient,
  discovery: Discovery,
  input: KubeObject,
  opts: ApplyOptions,
  newNamespaces: ReadonlySet<string>,
): Promise<Planned> {
  const subject = subjectOf(input);
  let mapping: ResourceMapping;
  try {
    mapping = await discovery.mapping(input.apiVersion, input.kind);
  } catch (err) {
    throw new Error(`${subject}: ${(err as Error).message}`, { cause: err });
  }
  const obj = normalizeScope(input, mapping, subject);
  const path = objectPath(mapping, obj.metadata.namespace, obj.metadata.name);
  let live: Record<string, unknown> | undefined;
  try {
    live = await client.request<Record<string, unknown>>('GET', path);
  } catch (err) {
    if (!isNotFound(err)) throw new Error(`${subject} get failed: ${messageOf(err, obj)}`, { cause: err });
  }
  const entry: ChangeSetEntry = {
    subject: subjectOf(obj),
    action: 'unchanged',
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    ...(obj.metadata.namespace ? { namespace: obj.metadata.namespace } : {}),
    name: obj.metadata.name,
  };
  if (!live && opts.dryRunOnly && mapping.namespaced && newNamespaces.has(obj.metadata.namespace ?? '')) {
    return { obj, mapping, entry: { ...entry, action: 'created' }, drifted: true };
  }
  let dryRun: Record<string, unknown>;
  try {
    dryRun = await serverSideApply(client, mapping, obj, opts.fieldManager, true);
  } catch (err) {
    throw new Error(`${entry.subject} dry-run failed: ${messageOf(err, obj)}`, { cause: err });
  }
  const drifted = hasDrifted(dryRun, live);
  entry.action = !drifted ? 'unchanged' : live ? 'configured' : 'created';
  return { obj, mapping, entry, drifted };
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

async function serverSideApply(
  client: ClusterClient,
  mapping: ResourceMapping,
  obj: KubeObject,
  fieldManager: string,
  dryRun: boolean,
): Promise<Record<string, unknown>> {
  return client.request<Record<string, unknown>>(
    'PATCH',
    objectPath(mapping, obj.metadata.namespace, obj.metadata.name),
    {
      query: { fieldManager, force: true, dryRun: dryRun ? 'All' : undefined },
      body: obj,
      contentType: 'application/apply-patch+yaml',
    },
  );
}

/** CRDs must be Established (and discovery refreshed) before their custom resources are applied. */
async function waitForDefinitions(
  client: ClusterClient,
  discovery: Discovery,
  planned: Planned[],
  timeoutMs: number,
): Promise<void> {
  const crds = planned.filter((p) => p.obj.kind === 'CustomResourceDefinition');
  if (crds.length === 0) return;
  const deadline = Date.now() + timeoutMs;
  for (const p of crds) {
    const path = objectPath(p.mapping, undefined, p.obj.metadata.name);
    for (;;) {
      const live = await client.request<{ status?: { conditions?: { type: string; status: string }[] } }>('GET', path);
      if (live.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) {
        throw new Error(`${p.entry.subject} was not Established within ${timeoutMs / 1000}s`);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  await discovery.refresh();
}

function messageOf(err: unknown, obj: KubeObject): string {
  const msg = err instanceof ApiError || err instanceof Error ? err.message : String(err);
  return scrub(msg, secretValues(obj));
}

/** Runs `fn` over `items` with at most `limit` in flight; results keep the input order. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed: unknown;
  const worker = async (): Promise<void> => {
    while (failed === undefined && next < items.length) {
      const i = next++;
      try {
        results[i] = await fn(items[i]!);
      } catch (err) {
        failed ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (failed !== undefined) throw failed instanceof Error ? failed : new Error('a worker failed', { cause: failed });
  return results;
}
