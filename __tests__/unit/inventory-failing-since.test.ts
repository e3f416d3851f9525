// failingSince in an inventory's status (src/inventory/codec.ts): set when a run records Failed,
// carried while the runs keep failing (through the InProgress record each run writes first), cleared
// by a success; and kept through the ConfigMap's encoding.
import { describe, expect, it } from 'vitest';
import { decodeInventory, encodeInventory, failingSince, type InventoryStatus } from '../../src/inventory/codec.js';

const T = (minute: number): string => new Date(Date.UTC(2026, 10, 20, 14, minute)).toISOString();

type Result = InventoryStatus['result'];
const status = (result: Result, extra: Partial<InventoryStatus> = {}): InventoryStatus => ({
  kustomization: 'media/plex',
  result,
  startedAt: T(0),
  prune: true,
  deletionPolicy: 'MirrorPrune',
  timeoutMs: 300_000,
  ...extra,
});

describe('failingSince', () => {
  it.each<{ why: string; previous: InventoryStatus | undefined; result: Result; want: string | undefined }>([
    { why: 'a first run that fails starts it', previous: undefined, result: 'Failed', want: T(9) },
    { why: 'a first run in progress has none', previous: undefined, result: 'InProgress', want: undefined },
    { why: 'a failure after a success starts it', previous: status('Succeeded'), result: 'Failed', want: T(9) },
    {
      why: 'a failure after a failure keeps the first time',
      previous: status('Failed', { failingSince: T(1), finishedAt: T(5) }),
      result: 'Failed',
      want: T(1),
    },
    {
      why: 'a run in progress after a failure carries it',
      previous: status('Failed', { failingSince: T(1) }),
      result: 'InProgress',
      want: T(1),
    },
    {
      why: 'a failure after a run in progress that carried it keeps it',
      previous: status('InProgress', { failingSince: T(1) }),
      result: 'Failed',
      want: T(1),
    },
    {
      why: 'a failure after a killed run that followed a success starts it',
      previous: status('InProgress'),
      result: 'Failed',
      want: T(9),
    },
    {
      why: 'a success clears it',
      previous: status('Failed', { failingSince: T(1) }),
      result: 'Succeeded',
      want: undefined,
    },
    {
      why: 'a Failed status written before the field counts from its own end',
      previous: status('Failed', { finishedAt: T(4) }),
      result: 'Failed',
      want: T(4),
    },
    {
      why: 'a success after a success has none',
      previous: status('Succeeded', { failingSince: T(1) }),
      result: 'Succeeded',
      want: undefined,
    },
  ])('$why', ({ previous, result, want }) => {
    expect(failingSince(previous, result, T(9))).toBe(want);
  });

  it('across records: Failed → Failed keeps the first failure’s time, Succeeded clears it, the next Failed starts again', () => {
    // Each run records InProgress (under its lock), then its end; each record replaces the one before.
    const runs: Result[] = ['Succeeded', 'Failed', 'Failed', 'Failed', 'Succeeded', 'Failed'];
    let last: InventoryStatus | undefined;
    const seen: (string | undefined)[] = [];
    runs.forEach((result, i) => {
      const now = T(10 * i + 1);
      const begun = status('InProgress', { startedAt: now });
      const since = failingSince(last, 'InProgress', now);
      const inProgress = { ...begun, ...(since ? { failingSince: since } : {}) };
      const end = failingSince(inProgress, result, T(10 * i + 5));
      last = {
        ...status(result, { startedAt: now, finishedAt: T(10 * i + 5) }),
        ...(end ? { failingSince: end } : {}),
      };
      // The ConfigMap keeps it as it was written.
      last = decodeInventory(encodeInventory({ entries: [], pending: [], status: last }).data, {}).status;
      seen.push(last.failingSince);
    });
    expect(seen).toEqual([undefined, T(15), T(15), T(15), undefined, T(55)]);
  });
});
