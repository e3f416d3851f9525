import { eachLimit } from '../util/concurrency.js';
import type { ResourceMapping } from '../cluster/discovery.js';
import type { ManagedCluster } from '../cluster/managed.js';
import { apply, patch, remove, waitGone, type Ref } from '../cluster/verbs.js';
import { ApiError, isNotFound } from '../cluster/errors.js';
import type { KubeObject } from '../objects/kube.js';
import { isSecret, secretValues } from '../objects/secret.js';
import { redactError } from './error-redaction.js';
import { valuesAt } from './mask.js';
import type { ChangeSetEntry } from './changeset.js';
import type { JsonPatchOp } from './cleanup.js';

/** One object of a stage once planned (dry-run and compared): what to do with it. */
export interface Planned {
  obj: KubeObject;
  mapping: ResourceMapping;
  entry: ChangeSetEntry;
  /** Apply it (it drifted, or its metadata needs the cleanup). */
  apply: boolean;
  /** The JSON patch that moves other managers' fields to ours and drops CSA leftovers. */
  cleanup?: JsonPatchOp[];
  /** Immutable fields that changed: the object is deleted and created again (force). */
  recreate?: string[];
  live?: Record<string, unknown>;
  /** Unchanged by the live object's own evidence, without a dry-run. */
  proven?: boolean;
}

export interface StageWriteOptions {
  /** Writes in flight at once. */
  concurrency: number;
  /** Plan only: nothing is written (every object is done as planned). */
  dryRunOnly: boolean;
  /** Before each write; a rejection stops the writes: none starts after it, those in flight finish. */
  checkpoint?: () => Promise<void>;
  /** Writes one object (see writeObject); its rejection is that object's failure. */
  write: (p: Planned) => Promise<void>;
  /** One line per object done, in the stage's order whatever order the writes finished in. */
  log?: (line: string) => void;
}

/** What the writes of a stage did. */
export interface StageWrites {
  /** The entries of the objects done (written, or needing no write), in the stage's order. */
  done: ChangeSetEntry[];
  /** The objects whose write failed, in the stage's order. */
  failures: { object: KubeObject; message: string }[];
  /** The checkpoint's refusal, when one stopped the writes. */
  refused?: unknown;
}

/**
 * Phase 2 for a stage: writes the planned objects that need it. Flux sends them one at a time in
 * its sort order; here the objects of one kind (group and kind: a run of the sorted stage) are
 * written concurrently, at most `concurrency` at once, and kinds follow one another in that order,
 * each once the kind before is done. So every write Flux orders before another of an earlier kind
 * (a ServiceAccount before the Deployment that uses it, a Role before its RoleBinding, a
 * ResourceQuota or LimitRange before what it limits, webhooks after what they would admit) is
 * still done first; only objects of one kind, which Flux orders by namespace and name alone, are
 * written in any order.
 *
 * The first failure, or a refusal of the checkpoint (a lost lock), stops the writes: none starts
 * after it, those in flight finish and count. Log lines and entries keep the stage's order: a line
 * waits for the lines of the objects before it.
 */
export async function writeStage(planned: readonly Planned[], opts: StageWriteOptions): Promise<StageWrites> {
  const done = planned.map(() => false);
  const failed = new Map<number, string>();
  let refused: { err: unknown } | undefined;
  const stopped = () => refused !== undefined || failed.size > 0;
  let logged = 0;
  const logLine = (i: number) => {
    const p = planned[i]!;
    const why = p.recreate
      ? ` (recreated: immutable ${fieldList(p.recreate)} changed)`
      : p.entry.note
        ? ` (${p.entry.note})`
        : '';
    opts.log?.(`${p.entry.subject} ${p.entry.action}${why}`);
  };
  const one = async (i: number): Promise<void> => {
    const p = planned[i]!;
    if (p.apply && !opts.dryRunOnly) {
      try {
        await opts.checkpoint?.();
      } catch (err) {
        refused ??= { err };
        return;
      }
      // Another write failed, or another checkpoint was refused, while this one waited: do not start.
      if (stopped()) return;
      try {
        await opts.write(p);
      } catch (err) {
        failed.set(i, (err as Error).message);
        return;
      }
    }
    done[i] = true;
    for (; logged < planned.length && done[logged]; logged++) logLine(logged);
  };
  for (const wave of waves(planned)) {
    await eachLimit(wave, opts.concurrency, one, stopped);
    if (stopped()) break;
  }
  // Once stopped: the objects done after the first that is not (writes that were in flight).
  for (let i = logged; i < planned.length; i++) if (done[i]) logLine(i);
  return {
    done: planned.flatMap((p, i) => (done[i] ? [p.entry] : [])),
    failures: [...failed].sort(([a], [b]) => a - b).map(([i, message]) => ({ object: planned[i]!.obj, message })),
    ...(refused ? { refused: refused.err } : {}),
  };
}

/** The indexes of `planned`, in runs of one group and kind (the sort keeps a kind together). */
function waves(planned: readonly Planned[]): number[][] {
  const out: number[][] = [];
  let key: string | undefined;
  planned.forEach((p, i) => {
    const k = `${p.obj.apiVersion.includes('/') ? p.obj.apiVersion.split('/')[0] : ''}/${p.obj.kind}`;
    if (k !== key) out.push([]);
    key = k;
    out[out.length - 1]!.push(i);
  });
  return out;
}

/** What a write uses of its manager: the client, and the field manager of the apply and the cleanup. */
export type Writer = Pick<ManagedCluster, 'client' | 'fieldManager'>;

/** One object's write: recreate when forced, clean up other managers' traces, then apply. */
export async function writeObject(
  m: Writer,
  p: Planned,
  waitTimeoutMs: number,
  secrets: Parameters<typeof messageOf>[2] = {},
): Promise<void> {
  const ref = refTo(p.mapping, p.obj);
  if (p.recreate) {
    try {
      await remove(m.client, ref, { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' });
    } catch (err) {
      if (!isNotFound(err))
        throw new Error(
          `${p.entry.subject} immutable field detected, failed to delete object: ${messageOf(err, p.obj, secrets)}`,
          { cause: err },
        );
    }
    if ((await waitGone(m.client, [ref], { timeoutMs: waitTimeoutMs, intervalMs: 250 })).length > 0) {
      throw new Error(
        `${p.entry.subject} was deleted to be recreated but still exists after ${waitTimeoutMs / 1000}s (a finalizer?)`,
      );
    }
  } else if (p.cleanup) {
    try {
      await patch(m.client, ref, p.cleanup, 'application/json-patch+json', { fieldManager: m.fieldManager });
    } catch (err) {
      throw new Error(`${p.entry.subject} metadata.managedFields cleanup failed: ${messageOf(err, p.obj, secrets)}`, {
        cause: err,
      });
    }
  }
  try {
    await serverSideApply(m, p.mapping, p.obj, false);
  } catch (err) {
    throw new Error(`${p.entry.subject} apply failed (${reasonOf(err)}): ${messageOf(err, p.obj, secrets)}`, {
      cause: err,
    });
  }
}

/** The object `obj` is, at the resource `mapping` says. */
export function refTo(mapping: ResourceMapping, obj: KubeObject): Ref {
  return { resource: mapping, namespace: obj.metadata.namespace, name: obj.metadata.name };
}

/** A server-side apply of `obj` (force, as `m`'s field manager), or its dry-run. */
export async function serverSideApply(
  m: Writer,
  mapping: ResourceMapping,
  obj: KubeObject,
  dryRun: boolean,
): Promise<Record<string, unknown>> {
  return apply(m.client, refTo(mapping, obj), obj, { fieldManager: m.fieldManager, dryRun });
}

export function reasonOf(err: unknown): string {
  return err instanceof ApiError ? err.reason || `HTTP ${err.status}` : 'error';
}

export function fieldList(fields: readonly string[]): string {
  return fields.length === 0 ? 'field' : `field${fields.length > 1 ? 's' : ''} ${fields.join(', ')}`;
}

/**
 * An error about `obj` as the report shows it (ssa/error-redaction.ts): without the object's
 * secret-derived values (its Secret data, the values at `secrets.paths`) in any run, nor the
 * values of `secrets.substituted` where the server shows a value, and, when `secrets.untrusted` and
 * the object holds any, without any value the server quoted.
 */
export function messageOf(
  err: unknown,
  obj: KubeObject,
  secrets: { paths?: readonly string[]; untrusted?: boolean; substituted?: readonly string[] } = {},
): string {
  const paths = secrets.paths ?? [];
  const values = [...secretValues(obj), ...valuesAt(obj, paths)];
  const holds = isSecret(obj) || paths.length > 0;
  const shown = secrets.substituted ?? [];
  return redactError(err, {
    values,
    hideQuoted: secrets.untrusted === true && holds,
    ...(shown.length ? { shown } : {}),
  });
}
