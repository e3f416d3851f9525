import { describe, expect, it } from 'vitest';
import type { Entry } from '../../src/objects/id.js';
import {
  afterRenewal,
  leaseCheck,
  lostRunPending,
  pendingAfter,
  type LeaseState,
  type LeaseVerdict,
  type RenewalOutcome,
} from '../../src/inventory/lease.js';
import { lostLockMessage } from '../../src/inventory/lost-run.js';
import type { ChangeSetEntry } from '../../src/ssa/changeset.js';
import type { PruneResult } from '../../src/ssa/delete.js';

const e = (id: string): Entry => ({ id, v: 'v1' });
const A = e('ns_a__ConfigMap');
const B = e('ns_b__ConfigMap');
const C = e('ns_c__ConfigMap');
const D = e('ns_d__ConfigMap');

describe('leaseCheck', () => {
  it.each<[string, LeaseState, LeaseVerdict]>([
    ['just acquired', { sinceRenewedMs: 0, durationMs: 30_000 }, { kind: 'held' }],
    ['renewed a third ago (the timer is due)', { sinceRenewedMs: 10_000, durationMs: 30_000 }, { kind: 'held' }],
    ['just under half the lease', { sinceRenewedMs: 14_999, durationMs: 30_000 }, { kind: 'held' }],
    ['half the lease: renew before writing', { sinceRenewedMs: 15_000, durationMs: 30_000 }, { kind: 'renew' }],
    [
      'past the lease (stalled): renew before writing',
      { sinceRenewedMs: 95_000, durationMs: 30_000 },
      { kind: 'renew' },
    ],
    [
      'found lost before, even when fresh',
      { lost: 'it was taken over by run-B', sinceRenewedMs: 0, durationMs: 30_000 },
      { kind: 'lost', reason: 'it was taken over by run-B' },
    ],
  ])('%s', (_name, state, verdict) => {
    expect(leaseCheck(state)).toEqual(verdict);
  });
});

describe('afterRenewal', () => {
  const stalled = (s: string, d: string) => `while this run did not renew it for ${s} (its lease lasts ${d})`;
  it.each<[string, RenewalOutcome, number, LeaseVerdict]>([
    ['renewed late: still ours (nobody changed the lease)', { kind: 'renewed' }, 95_000, { kind: 'held' }],
    [
      'taken over, the taker still holds it',
      { kind: 'taken', holder: 'run-B' },
      42_500,
      { kind: 'lost', reason: `it was taken over by run-B, ${stalled('42.5s', '30s')}` },
    ],
    [
      'taken over and released since: the last holder is named',
      { kind: 'taken', lastHolder: 'run-B' },
      42_000,
      { kind: 'lost', reason: `it was taken over by run-B (released since), ${stalled('42s', '30s')}` },
    ],
    [
      'taken over and released, nobody named',
      { kind: 'taken' },
      42_000,
      { kind: 'lost', reason: `it was taken over by another run (released since), ${stalled('42s', '30s')}` },
    ],
    [
      'deleted',
      { kind: 'taken', gone: true },
      31_000,
      {
        kind: 'lost',
        reason: `it was deleted by another run (its Kustomization was removed), ${stalled('31s', '30s')}`,
      },
    ],
    [
      'taken over although this run renewed in time (clock skew): lost all the same',
      { kind: 'taken', holder: 'run-B' },
      16_000,
      { kind: 'lost', reason: `it was taken over by run-B, ${stalled('16s', '30s')}` },
    ],
    [
      'renewal failed, the lease has not run out: go on',
      { kind: 'failed', message: 'HTTP 503' },
      29_999,
      { kind: 'held' },
    ],
    [
      'renewal failed once the lease ran out: lost',
      { kind: 'failed', message: 'HTTP 503' },
      30_000,
      { kind: 'lost', reason: `it could not be renewed before it ran out, ${stalled('30s', '30s')}: HTTP 503` },
    ],
  ])('%s', (_name, outcome, sinceRenewedMs, verdict) => {
    expect(afterRenewal(outcome, { sinceRenewedMs, durationMs: 30_000 })).toEqual(verdict);
  });
});

describe('lostRunPending', () => {
  it.each<[string, Parameters<typeof lostRunPending>[0], Entry[], Entry[] | undefined]>([
    ['nothing written that still exists', { entries: [A], pending: [] }, [], undefined],
    ['written objects the new holder already records', { entries: [A], pending: [B] }, [A, B], undefined],
    ['a written object nobody records: pending, never confirmed', { entries: [A], pending: [B] }, [C], [B, C]],
    ['no record left (the Kustomization was removed)', undefined, [C, D], [C, D]],
  ])('%s', (_name, latest, still, pending) => {
    expect(lostRunPending(latest, still)).toEqual(pending);
  });
});

describe('pendingAfter', () => {
  it.each<[string, Parameters<typeof pendingAfter>[0], Entry[]]>([
    [
      'success settles everything',
      { succeeded: true, leftover: [A], recorded: [A, B], latest: [A, B], confirmed: [B] },
      [],
    ],
    [
      'failure keeps leftovers not confirmed',
      { succeeded: false, leftover: [A, C], recorded: [A, B, C], latest: [A, B, C], confirmed: [C] },
      [A],
    ],
    [
      'an entry added since by a run that lost the lock stays, even on success',
      { succeeded: true, leftover: [], recorded: [B], latest: [B, D], confirmed: [B] },
      [D],
    ],
    [
      'an added entry that this run confirmed is settled',
      { succeeded: true, leftover: [], recorded: [B], latest: [B, D], confirmed: [B, D] },
      [],
    ],
  ])('%s', (_name, opts, pending) => {
    expect(pendingAfter(opts)).toEqual(pending);
  });
});

describe('lostLockMessage', () => {
  const LOST =
    'lost the lock ns/l: it was taken over by run-B, while this run did not renew it for 40s (its lease lasts 30s)';
  const TAIL =
    ' The inventory is left to the run that holds the lock now; run this revision again if it is the one to apply.';
  const entry = (name: string, action: ChangeSetEntry['action']): ChangeSetEntry => ({
    subject: `ConfigMap/ns/${name}`,
    action,
    apiVersion: 'v1',
    kind: 'ConfigMap',
    namespace: 'ns',
    name,
  });
  const pruned = (name: string, action: PruneResult['action'], reason?: string): PruneResult => ({
    subject: `ConfigMap/ns/${name}`,
    action,
    ...(reason ? { reason } : {}),
    entry: e(`ns_${name}__ConfigMap`),
  });
  it.each<[string, ChangeSetEntry[], PruneResult[], string | undefined, string]>([
    [
      'stopped before anything',
      [entry('a', 'unchanged')],
      [],
      undefined,
      `${LOST}. This run stopped: it applied nothing more and pruned nothing. It had applied nothing.${TAIL}`,
    ],
    [
      'stopped between applies: only written objects count',
      [entry('a', 'unchanged'), entry('b', 'created'), entry('c', 'configured'), entry('d', 'skipped')],
      [],
      undefined,
      `${LOST}. This run stopped: it applied nothing more and pruned nothing. It had applied 2 object(s): ` +
        `ConfigMap/ns/b created, ConfigMap/ns/c configured.${TAIL}`,
    ],
    [
      'stopped during the prune: only real deletions count',
      [],
      [pruned('x', 'deleted'), pruned('y', 'deleted', 'already gone'), pruned('z', 'skipped', 'prune: disabled')],
      undefined,
      `${LOST}. This run stopped: it applied nothing more and pruned nothing more. It had applied nothing. ` +
        `It had pruned 1 object(s): ConfigMap/ns/x.${TAIL}`,
    ],
    [
      'another error on the way: kept after it',
      [],
      [],
      'health check failed after 5m0s',
      `${LOST}. This run stopped: it applied nothing more and pruned nothing. It had applied nothing.${TAIL}\n` +
        'health check failed after 5m0s',
    ],
  ])('%s', (_name, changeset, prunedSoFar, cause, message) => {
    expect(lostLockMessage(LOST, changeset, prunedSoFar, cause)).toBe(message);
  });
});
