import { isUnreachable } from '../cluster/failure.js';
import { isUnservedKind, mappingKey, type ResourceMapping } from '../cluster/discovery.js';
import type { ManagedCluster } from '../cluster/managed.js';
import { collectionKey } from '../cluster/verbs.js';
import { pollUntil, systemClock, type Clock } from '../util/poll.js';
import { formatDuration } from '../util/duration.js';
import { mapLimit } from '../util/concurrency.js';
import { LiveObjects } from '../cluster/live.js';
import { computeStatus, type Status, type StatusResult } from './status.js';
import { SERVED_GRACE_MS, notYetServedMessage, unservedMessage } from './unserved.js';

/** An object to wait for: an applied object (wait: true) or a spec.healthChecks reference. */
export interface HealthTarget {
  subject: string;
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
  /**
   * The owner-label selector of the Kustomization that applied it (wait: true): such targets of
   * one resource and namespace are read with one list per poll instead of a GET each.
   */
  selector?: string;
  /** The field that made it a target (`spec.wait`, `spec.healthChecks[0]`), for what to do when it cannot be. */
  origin?: string;
}

export interface HealthResult {
  subject: string;
  status: Status;
  message: string;
}

/**
 * How one wait goes. How many objects are read at once, and where its lines go (one per change of an
 * object's status, not one per poll), are the manager's.
 */
export interface WaitOptions {
  timeoutMs: number;
  intervalMs?: number;
  /** A status rule consulted before kstatus (spec.healthCheckExprs); undefined falls through to kstatus. */
  custom?: (live: Record<string, unknown>) => StatusResult | undefined;
  /**
   * How long an object of a Flux kind may stay without any status before the wait ends: its
   * controller has not picked it up (default 30s, at most the timeout).
   */
  unclaimedMs?: number;
  /**
   * The kinds (discovery's mappingKey) whose CustomResourceDefinition this run applied: when the
   * server does not serve one, it is waited for up to servedGraceMs (default 30s, at most the
   * timeout). Any other unserved kind fails the wait at once.
   */
  definedKinds?: ReadonlySet<string>;
  servedGraceMs?: number;
  /** Called before each poll; a rejection ends the wait with it (a lost lock). */
  checkpoint?: () => Promise<void>;
  clock?: Clock;
}

export interface WaitOutcome {
  ok: boolean;
  /** True when the timeout ended the wait; false when every object was Current or one Failed. */
  timedOut: boolean;
  results: HealthResult[];
}

/** What a wait uses of its manager (ResourceManager.wait, ssa/manager.ts). */
type Waiter = Pick<ManagedCluster, 'client' | 'discovery' | 'concurrency' | 'log'>;

/**
 * Polls the objects' status (kstatus rules) until all are Current, one is Failed (fail-fast, as
 * Flux), or the timeout passes. Objects already Current are not read again.
 */
export async function waitForHealth(
  m: Waiter,
  targets: readonly HealthTarget[],
  opts: WaitOptions,
): Promise<WaitOutcome> {
  const clock = opts.clock ?? systemClock;
  const last = new Map<string, HealthResult>();
  let all: HealthResult[] = [];
  const started = clock.now();
  const graceMs = Math.min(opts.unclaimedMs ?? UNCLAIMED_MS, opts.timeoutMs);
  const servedGraceMs = Math.min(opts.servedGraceMs ?? SERVED_GRACE_MS, opts.timeoutMs);
  const look = async (): Promise<WaitOutcome | undefined> => {
    await opts.checkpoint?.();
    const pending = targets.filter((t) => last.get(t.subject)?.status !== 'Current');
    const read = await readStatuses(m, pending, opts);
    const waited = clock.now() - started;
    const results = read.map(({ result, unclaimedBy, unserved }) => {
      if (unserved !== undefined) {
        // No object of a kind the server does not serve can exist: polling on would only wait out the
        // timeout. A kind whose CRD this run applied gets a grace for discovery to show it.
        const expected = opts.definedKinds?.has(mappingKey(unserved.apiVersion, unserved.kind)) === true;
        if (expected && waited < servedGraceMs) {
          return { ...result, message: notYetServedMessage(unserved.apiVersion, unserved.kind) };
        }
        return {
          ...result,
          status: 'Failed' as const,
          message: unservedMessage(unserved.apiVersion, unserved.kind, unserved.origin),
        };
      }
      return unclaimedBy !== undefined && waited >= graceMs && result.status !== 'Current'
        ? unclaimedResult(result.subject, unclaimedBy, graceMs)
        : result;
    });
    for (const r of results) {
      const before = last.get(r.subject);
      if (!before || before.status !== r.status || before.message !== r.message) {
        m.log(`${r.subject}: ${r.status}${r.message ? ` (${r.message})` : ''}`);
      }
      last.set(r.subject, r);
    }
    all = targets.map((t) => last.get(t.subject)!);
    if (all.some((r) => r.status === 'Failed')) return { ok: false, timedOut: false, results: all };
    if (all.every((r) => r.status === 'Current')) return { ok: true, timedOut: false, results: all };
    return undefined;
  };
  return pollUntil(look, {
    deadline: clock.now() + opts.timeoutMs,
    intervalMs: opts.intervalMs ?? 1000,
    clock,
    timedOut: () => ({ ok: false, timedOut: true, results: all }),
  });
}

/** How long an object of a Flux kind may go without a status before no controller is assumed. */
export const UNCLAIMED_MS = 30_000;

/** The controller that gives each Flux API group's objects a status. */
const CONTROLLERS: Record<string, string> = {
  'helm.toolkit.fluxcd.io': 'helm-controller',
  'source.toolkit.fluxcd.io': 'source-controller',
  'kustomize.toolkit.fluxcd.io': 'kustomize-controller',
  'notification.toolkit.fluxcd.io': 'notification-controller',
  'image.toolkit.fluxcd.io': 'image-reflector-controller or image-automation-controller',
  'source.extensions.fluxcd.io': 'source-watcher',
};

/** The controller expected to write `apiVersion`'s status: a Flux group's, else undefined (not judged). */
export function controllerOf(apiVersion: string): string | undefined {
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  if (CONTROLLERS[group] !== undefined) return CONTROLLERS[group];
  return group.endsWith('.fluxcd.io') ? `the controller of ${group}` : undefined;
}

/**
 * Whether a status is one no controller has written: none, or only what the CRD defaults (Flux's
 * CRDs default status.observedGeneration to -1), without any condition.
 */
export function untouched(status: unknown): boolean {
  if (status === undefined || status === null) return true;
  if (typeof status !== 'object') return false;
  const s = status as Record<string, unknown>;
  const conditions = Array.isArray(s['conditions']) ? s['conditions'] : [];
  const observed = s['observedGeneration'];
  return conditions.length === 0 && (observed === undefined || (typeof observed === 'number' && observed < 0));
}

/** An object no controller has given a status to: Failed at once, naming the controller to look for. */
function unclaimedResult(subject: string, controller: string, graceMs: number): HealthResult {
  return {
    subject,
    status: 'Failed',
    message:
      `no controller has picked it up: it has no status ${formatDuration(graceMs)} after the apply; ` +
      `is ${controller} running in this cluster? (without it, leave the object out of the wait: spec.wait: false, or spec.healthChecks without it)`,
  };
}

/**
 * One poll: the status of each target. Targets that share a resource, namespace and owner
 * selector with another are read from one list (a target missing from it is read by GET: it
 * may have lost its labels); the others by GET.
 */
async function readStatuses(
  m: Waiter,
  targets: readonly HealthTarget[],
  opts: Pick<WaitOptions, 'custom'>,
): Promise<{ result: HealthResult; unclaimedBy?: string; unserved?: HealthTarget }[]> {
  const reader = new LiveObjects(m.client);
  const mapped = await Promise.all(
    targets.map(async (t) => {
      try {
        return { t, mapping: await m.discovery.mapping(t.apiVersion, t.kind) };
      } catch (err) {
        if (isUnreachable(err)) throw err;
        return { t, error: err as Error };
      }
    }),
  );
  const groupOf = (t: HealthTarget, m: ResourceMapping) =>
    `${collectionKey({ resource: m, namespace: t.namespace })}?${t.selector ?? ''}`;
  const sizes = new Map<string, number>();
  for (const { t, mapping } of mapped) {
    if (!mapping || !t.selector) continue;
    const group = groupOf(t, mapping);
    sizes.set(group, (sizes.get(group) ?? 0) + 1);
  }
  /**
   * Each result, with the controller that should have written the object's status when none has, or
   * the target when the server does not serve its kind (discovery was read again before saying so).
   */
  return mapLimit(mapped, m.concurrency, async ({ t, mapping, error }) => {
    if (!mapping) {
      const result: HealthResult = { subject: t.subject, status: 'Unknown', message: error.message };
      return isUnservedKind(error) ? { result, unserved: t } : { result };
    }
    try {
      // A lone target is read by GET (no selector): its answer is smaller than a list's.
      const selector = (sizes.get(groupOf(t, mapping)) ?? 0) >= 2 ? t.selector : undefined;
      const live = await reader.find(mapping, t, selector);
      if (live === undefined) return { result: { subject: t.subject, ...computeStatus(undefined) } };
      const result = { subject: t.subject, ...(opts.custom?.(live) ?? computeStatus(live)) };
      const controller = controllerOf(t.apiVersion);
      return controller !== undefined && untouched(live['status']) ? { result, unclaimedBy: controller } : { result };
    } catch (err) {
      // A cluster that cannot be reached ends the wait at once: polling on would only wait out the timeout.
      if (isUnreachable(err)) throw err;
      return { result: { subject: t.subject, status: 'Unknown', message: (err as Error).message } };
    }
  });
}

/** The failure message: Flux's "timeout waiting for" (or the failed objects), one object per line. */
export function healthFailure(outcome: WaitOutcome, timeoutMs: number): string {
  const bad = outcome.results.filter((r) => r.status !== 'Current');
  const head = outcome.timedOut
    ? `health check failed after ${formatDuration(timeoutMs)}, timeout waiting for ${bad.length} object(s):`
    : `health check failed: ${bad.filter((r) => r.status === 'Failed').length} object(s) Failed:`;
  return [head, ...bad.map((r) => `  ${r.subject} status: '${r.status}'${r.message ? `: ${r.message}` : ''}`)].join(
    '\n',
  );
}

/**
 * Where a Kustomization's health timeout comes from, for the line that starts the wait: `spec.timeout`
 * (or the action's `timeout` input, without an interval), and when the timeout is the default
 * (`defaultMs`, Flux's GetTimeout without spec.timeout), how that default is made, e.g.
 * `spec.timeout, default: spec.interval 1h0m0s minus 30s`. An explicit spec.timeout equal to the
 * default reads the same: the text names the field and the rule, both true either way.
 */
export function timeoutSource(timeoutMs: number, intervalMs: number | undefined, defaultMs: number): string {
  const field = intervalMs === undefined ? 'input timeout' : 'spec.timeout';
  if (timeoutMs !== defaultMs) return field;
  const made =
    intervalMs === undefined
      ? formatDuration(defaultMs)
      : `spec.interval ${formatDuration(intervalMs)} minus 30s${defaultMs !== intervalMs - 30_000 ? ', at least 30s' : ''}`;
  return `${field}, default: ${made}`;
}
