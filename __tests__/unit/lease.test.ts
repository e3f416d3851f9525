import { describe, expect, it } from 'vitest';
import type { Entry } from '../../src/objects/id.js';
import {
  afterRenewal,
  claimBounds,
  judgeClaim,
  leaseCheck,
  markedOurs,
  pendingAfter,
  unrecorded,
  type ClaimVerdict,
  type LeaseSpec,
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

describe('claimBounds', () => {
  it.each<[number, ReturnType<typeof claimBounds>]>([
    [30_000, { maxDurationMs: 60_000, maxAheadMs: 30_000 }],
    [2_000, { maxDurationMs: 60_000, maxAheadMs: 30_000 }],
    [45_000, { maxDurationMs: 90_000, maxAheadMs: 30_000 }],
  ])('a lease of %i ms', (leaseMs, bounds) => {
    expect(claimBounds(leaseMs)).toEqual(bounds);
  });
});

describe('markedOurs', () => {
  const LABEL = { 'app.kubernetes.io/managed-by': 'kustomize-reconcile' };
  it.each<[string, Record<string, string> | undefined, string, boolean]>([
    ['our label', LABEL, 'run-A', true],
    ['our label among others', { ...LABEL, team: 'x' }, 'anything at all', true],
    ['another manager', { 'app.kubernetes.io/managed-by': 'helm' }, 'run-A', false],
    ['no label, a workflow run', undefined, 'https://github.com/org/repo/actions/runs/42', true],
    [
      'no label, a workflow run with attempt and job',
      undefined,
      'https://github.com/org/repo/actions/runs/42 attempt 2 job deploy',
      true,
    ],
    ['no label, GitHub Enterprise', undefined, 'https://ghe.example/org/repo/actions/runs/7 job apply', true],
    ['no label, a local run', undefined, 'runner-host pid 4242', true],
    ['no label, any other holder', undefined, 'attacker', false],
    [
      'no label, a run URL with more after it',
      undefined,
      'https://github.com/org/repo/actions/runs/42 and more',
      false,
    ],
    ['no label, a URL that is not a run', undefined, 'https://github.com/org/repo', false],
  ])('%s', (_name, labels, holder, ours) => {
    expect(markedOurs(labels, holder)).toBe(ours);
  });
});

describe('judgeClaim', () => {
  const NOW = Date.parse('2024-05-01T12:00:00.000Z');
  const at = (offsetMs: number) => new Date(NOW + offsetMs).toISOString().replace(/Z$/, '000Z');
  const BOUNDS = claimBounds(30_000);
  const held = (spec: LeaseSpec): LeaseSpec => ({ holderIdentity: 'run 1', ...spec });
  const DURATION = 'its leaseDurationSeconds 2147483647 is more than the 60s a run of kustomize-reconcile ever writes';
  const AHEAD = (t: string, s: string) =>
    `its renewTime ${t} is ${s} ahead of this runner's clock (more than the 30s of clock skew tolerated)`;
  const Y2099 = '2099-01-01T00:00:00.000000Z';
  it.each<[string, LeaseSpec | undefined, boolean, number, ClaimVerdict]>([
    ['no lease', undefined, false, 0, { kind: 'free' }],
    ['released', { holderIdentity: null, renewTime: at(0), leaseDurationSeconds: 30 }, false, 0, { kind: 'free' }],
    [
      'ours, fresh',
      held({ renewTime: at(-10_000), leaseDurationSeconds: 30 }),
      true,
      0,
      { kind: 'held', untilMs: NOW + 20_000 },
    ],
    ['ours, expired', held({ renewTime: at(-31_000), leaseDurationSeconds: 30 }), true, 0, { kind: 'free' }],
    [
      'foreign but sane: judged as it says (waited for, at most its own short claim)',
      held({ renewTime: at(-10_000), leaseDurationSeconds: 30 }),
      false,
      0,
      { kind: 'held', untilMs: NOW + 20_000 },
    ],
    [
      'a renewTime a little ahead (clock skew): as it says',
      held({ renewTime: at(20_000), leaseDurationSeconds: 30 }),
      false,
      0,
      { kind: 'held', untilMs: NOW + 50_000 },
    ],
    [
      'foreign, renewTime 2099 and a huge duration: refused at once',
      held({ renewTime: Y2099, leaseDurationSeconds: 2_147_483_647 }),
      false,
      0,
      { kind: 'untrusted', absurd: [DURATION, AHEAD(Y2099, '27272 days')] },
    ],
    [
      'foreign, renewed now, an hour long: refused at once',
      held({ renewTime: at(0), leaseDurationSeconds: 3600 }),
      false,
      0,
      {
        kind: 'untrusted',
        absurd: ['its leaseDurationSeconds 3600 is more than the 60s a run of kustomize-reconcile ever writes'],
      },
    ],
    [
      'foreign, renewed an hour ago, an hour and a minute long: refused all the same',
      held({ renewTime: at(-3_600_000), leaseDurationSeconds: 3660 }),
      false,
      0,
      {
        kind: 'untrusted',
        absurd: ['its leaseDurationSeconds 3660 is more than the 60s a run of kustomize-reconcile ever writes'],
      },
    ],
    [
      'ours, renewTime 2099, huge duration: held until first seen + skew + the cap',
      held({ renewTime: Y2099, leaseDurationSeconds: 2_147_483_647 }),
      true,
      0,
      { kind: 'held', untilMs: NOW + 30_000 + 60_000, absurd: [DURATION, AHEAD(Y2099, '27272 days')] },
    ],
    [
      'ours, renewTime 2099, first seen 91s ago (this resourceVersion): taken over',
      held({ renewTime: Y2099, leaseDurationSeconds: 2_147_483_647 }),
      true,
      -91_000,
      { kind: 'free', absurd: [DURATION, AHEAD(Y2099, '27272 days')] },
    ],
    [
      'ours, a huge duration renewed two minutes ago: taken over (the cap ran out)',
      held({ renewTime: at(-120_000), leaseDurationSeconds: 2_147_483_647 }),
      true,
      0,
      { kind: 'free', absurd: [DURATION] },
    ],
    [
      'ours, ten minutes, renewed now: held for the cap only',
      held({ renewTime: at(0), leaseDurationSeconds: 600 }),
      true,
      0,
      {
        kind: 'held',
        untilMs: NOW + 60_000,
        absurd: ['its leaseDurationSeconds 600 is more than the 60s a run of kustomize-reconcile ever writes'],
      },
    ],
    [
      'an unparsable renewTime: free, as before',
      held({ renewTime: 'yesterday', leaseDurationSeconds: 15 }),
      false,
      0,
      { kind: 'free' },
    ],
  ])('%s', (_name, spec, ours, firstSeenOffset, verdict) => {
    expect(judgeClaim(spec, ours, NOW, NOW + firstSeenOffset, BOUNDS)).toEqual(verdict);
  });
});

describe('unrecorded', () => {
  it.each<[string, Parameters<typeof unrecorded>[0], Entry[], Entry[]]>([
    ['nothing written that still exists', { entries: [A], pending: [] }, [], []],
    ['written objects the new holder already records', { entries: [A], pending: [B] }, [A, B], []],
    ['a written object nobody records', { entries: [A], pending: [B] }, [C], [C]],
    ['no record left (the Kustomization was removed)', undefined, [C, D], [C, D]],
  ])('%s', (_name, latest, still, want) => {
    expect(unrecorded(latest, still)).toEqual(want);
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
  /** What it applied is not said to stay in the inventory: the new holder may have pruned it. */
  const NEW_HOLDER = 'the run that holds the lock now may have changed or pruned them since.';
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
        `ConfigMap/ns/b created, ConfigMap/ns/c configured; ${NEW_HOLDER}${TAIL}`,
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
      'applied, then pruned, then stopped: both said, the applied ones as possibly changed since',
      [entry('b', 'created')],
      [pruned('x', 'deleted')],
      undefined,
      `${LOST}. This run stopped: it applied nothing more and pruned nothing more. It had applied 1 object(s): ` +
        `ConfigMap/ns/b created; ${NEW_HOLDER} It had pruned 1 object(s): ConfigMap/ns/x.${TAIL}`,
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

  it('names the objects it wrote that no record holds', () => {
    expect(lostLockMessage(LOST, [entry('b', 'created')], [], undefined, [e('ns_b__ConfigMap')])).toBe(
      `${LOST}. This run stopped: it applied nothing more and pruned nothing. It had applied 1 object(s): ` +
        `ConfigMap/ns/b created; ${NEW_HOLDER}${TAIL} 1 object(s) it wrote exist but are in no inventory (a write already on its ` +
        'way when the lock was taken over), so no run prunes them: ConfigMap/ns/b; delete them, or apply a revision that has them.',
    );
  });
});
