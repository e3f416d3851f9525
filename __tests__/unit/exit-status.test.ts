import { describe, expect, it } from 'vitest';
import { exitPolicy, exitStatusOf, type Edge, type ExitPolicy } from '../../src/report/exit.js';
import { countReport, type Report } from '../../src/report/model.js';
import type { Mode } from '../../src/options/settings.js';
import type { ChangeSetEntry } from '../../src/ssa/changeset.js';

const entry = (action: ChangeSetEntry['action']): ChangeSetEntry => ({
  subject: 'ConfigMap/apps/a',
  action,
  apiVersion: 'v1',
  kind: 'ConfigMap',
  namespace: 'apps',
  name: 'a',
});

/**
 * A run's outcome, as a run of `mode` reports it: a drift run always gives its verdict; in the other
 * modes, `drift corrected` is a run that created an object.
 */
type Outcome = 'failed' | 'unchanged' | 'created' | 'deleted only' | 'drift corrected';

function outcome(mode: Mode, o: Outcome): Pick<Report, 'ok' | 'counts' | 'drift'> {
  const changeset = [entry(o === 'created' || o === 'drift corrected' ? 'created' : 'unchanged')];
  const pruned = o === 'deleted only' ? [{ subject: 'ConfigMap/apps/old', action: 'deleted' as const }] : [];
  const changed = o === 'created' || o === 'deleted only' || o === 'drift corrected';
  return {
    ok: o !== 'failed',
    counts: countReport(changeset, pruned),
    ...(mode === 'drift' ? { drift: { detected: o !== 'failed' && changed, corrected: o === 'drift corrected' } } : {}),
  };
}

const OUTCOMES: Outcome[] = ['failed', 'unchanged', 'created', 'deleted only', 'drift corrected'];

// Every command of both edges, with its exit status for each outcome (in the order of OUTCOMES). A
// merged report (CLI `report`, action mode: report) exits as a run of its mode at the same edge.
describe.each<{ command: string; edge: Edge; mode: Mode; policy: ExitPolicy; codes: number[] }>([
  { command: 'CLI diff', edge: 'cli', mode: 'preview', policy: 'changes', codes: [2, 0, 1, 1, 1] },
  { command: 'CLI apply', edge: 'cli', mode: 'apply', policy: 'errors', codes: [2, 0, 0, 0, 0] },
  { command: 'CLI drift', edge: 'cli', mode: 'drift', policy: 'drift', codes: [2, 0, 1, 1, 0] },
  { command: 'CLI report of diff jobs', edge: 'cli', mode: 'preview', policy: 'changes', codes: [2, 0, 1, 1, 1] },
  { command: 'CLI report of apply jobs', edge: 'cli', mode: 'apply', policy: 'errors', codes: [2, 0, 0, 0, 0] },
  { command: 'CLI report of drift jobs', edge: 'cli', mode: 'drift', policy: 'drift', codes: [2, 0, 1, 1, 0] },
  { command: 'action preview', edge: 'action', mode: 'preview', policy: 'errors', codes: [2, 0, 0, 0, 0] },
  { command: 'action apply', edge: 'action', mode: 'apply', policy: 'errors', codes: [2, 0, 0, 0, 0] },
  { command: 'action drift', edge: 'action', mode: 'drift', policy: 'drift', codes: [2, 0, 1, 1, 0] },
  { command: 'action report of previews', edge: 'action', mode: 'preview', policy: 'errors', codes: [2, 0, 0, 0, 0] },
  { command: 'action report of applies', edge: 'action', mode: 'apply', policy: 'errors', codes: [2, 0, 0, 0, 0] },
  { command: 'action report of drifts', edge: 'action', mode: 'drift', policy: 'drift', codes: [2, 0, 1, 1, 0] },
])('$command', ({ edge, mode, policy, codes }) => {
  it(`exits by ${policy}`, () => {
    expect(exitPolicy(edge, mode)).toBe(policy);
  });
  it.each(OUTCOMES.map((o, i) => ({ o, code: codes[i]! })))('$o → $code', ({ o, code }) => {
    expect(exitStatusOf(edge, mode, outcome(mode, o))).toBe(code);
  });
});

describe('a drift report without its verdict', () => {
  it.each([
    ['changes', [entry('configured')], 1],
    ['no changes', [entry('unchanged')], 0],
  ] as const)('exits by its %s', (_, changeset, code) => {
    expect(exitStatusOf('cli', 'drift', { ok: true, counts: countReport(changeset) })).toBe(code);
  });
});
