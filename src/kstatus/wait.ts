import { isUnreachable } from '../cluster/failure.js';
import type { ClusterClient } from '../cluster/client.js';
import type { Discovery, ResourceMapping } from '../cluster/discovery.js';
import { collectionKey } from '../cluster/verbs.js';
import { pollUntil, systemClock, type Clock } from '../util/poll.js';
import { mapLimit } from '../util/concurrency.js';
import { LiveObjects } from '../ssa/live.js';
import { computeStatus, type Status, type StatusResult } from './status.js';

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
}

export interface HealthResult {
  subject: string;
  status: Status;
  message: string;
}

export interface WaitOptions {
  timeoutMs: number;
  intervalMs?: number;
  concurrency: number;
  /** One line per change of an object's status, not one per poll. */
  log?: (line: string) => void;
  /** A status rule consulted before kstatus (spec.healthCheckExprs); undefined falls through to kstatus. */
  custom?: (live: Record<string, unknown>) => StatusResult | undefined;
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

/**
 * Polls the objects' status (kstatus rules) until all are Current, one is Failed (fail-fast, as
 * Flux), or the timeout passes. Objects already Current are not read again.
 */
export async function waitForHealth(
  client: ClusterClient,
  discovery: Discovery,
  targets: readonly HealthTarget[],
  opts: WaitOptions,
): Promise<WaitOutcome> {
  const clock = opts.clock ?? systemClock;
  const last = new Map<string, HealthResult>();
  let all: HealthResult[] = [];
  const look = async (): Promise<WaitOutcome | undefined> => {
    await opts.checkpoint?.();
    const pending = targets.filter((t) => last.get(t.subject)?.status !== 'Current');
    const results = await readStatuses(client, discovery, pending, opts);
    for (const r of results) {
      const before = last.get(r.subject);
      if (!before || before.status !== r.status || before.message !== r.message) {
        opts.log?.(`${r.subject}: ${r.status}${r.message ? ` (${r.message})` : ''}`);
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

/**
 * One poll: the status of each target. Targets that share a resource, namespace and owner
 * selector with another are read from one list (a target missing from it is read by GET: it
 * may have lost its labels); the others by GET.
 */
async function readStatuses(
  client: ClusterClient,
  discovery: Discovery,
  targets: readonly HealthTarget[],
  opts: Pick<WaitOptions, 'concurrency' | 'custom'>,
): Promise<HealthResult[]> {
  const reader = new LiveObjects(client);
  const mapped = await Promise.all(
    targets.map(async (t) => {
      try {
        return { t, mapping: await discovery.mapping(t.apiVersion, t.kind) };
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
  return mapLimit(mapped, opts.concurrency, async ({ t, mapping, error }): Promise<HealthResult> => {
    if (!mapping) return { subject: t.subject, status: 'Unknown', message: error.message };
    try {
      // A lone target is read by GET (no selector): its answer is smaller than a list's.
      const selector = (sizes.get(groupOf(t, mapping)) ?? 0) >= 2 ? t.selector : undefined;
      const live = await reader.find(mapping, t, selector);
      if (live === undefined) return { subject: t.subject, ...computeStatus(undefined) };
      return { subject: t.subject, ...(opts.custom?.(live) ?? computeStatus(live)) };
    } catch (err) {
      // A cluster that cannot be reached ends the wait at once: polling on would only wait out the timeout.
      if (isUnreachable(err)) throw err;
      return { subject: t.subject, status: 'Unknown', message: (err as Error).message };
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

export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  const m = Math.floor(s / 60);
  return m > 0 ? `${m}m${s % 60}s` : `${s}s`;
}

/**
 * The final health table for the log: one aligned row per object, unhealthy ones first (in their
 * original order), like `kubectl get`: OBJECT, STATUS, MESSAGE.
 */
export function healthTable(results: readonly HealthResult[]): string[] {
  const rows = [...results.filter((r) => r.status !== 'Current'), ...results.filter((r) => r.status === 'Current')].map(
    (r) => [r.subject, r.status, r.message.split('\n')[0] ?? ''],
  );
  const header = ['OBJECT', 'STATUS', 'MESSAGE'];
  const widths = [0, 1].map((i) => Math.max(header[i]!.length, ...rows.map((r) => r[i]!.length)));
  return [header, ...rows].map((r) => `${r[0]!.padEnd(widths[0]!)}  ${r[1]!.padEnd(widths[1]!)}  ${r[2]!}`.trimEnd());
}
