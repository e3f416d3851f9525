import { describe, expect, it } from 'vitest';
import {
  finished,
  loggedEnd,
  parseLog,
  type Condition,
  type FluxKustomization,
  type FluxLogLine,
} from '../../test/flux/flux.ts';

const ks = (status: FluxKustomization['status'], generation = 2): FluxKustomization => ({
  metadata: { name: 'app', namespace: 'flux-system', generation },
  spec: {},
  status,
});
const ready = (status: string, reason: string, observedGeneration = 2): Condition => ({
  type: 'Ready',
  status,
  reason,
  observedGeneration,
});
const reconciling = (reason: string): Condition => ({
  type: 'Reconciling',
  status: 'True',
  reason,
  observedGeneration: 2,
});

describe('finished: whether the reconcile asked for is over', () => {
  it.each<[string, FluxKustomization['status'], { revision?: string; token?: string }, boolean]>([
    [
      'succeeded at the revision',
      {
        observedGeneration: 2,
        lastAttemptedRevision: 'r2',
        lastAppliedRevision: 'r2',
        conditions: [ready('True', 'ReconciliationSucceeded')],
      },
      { revision: 'r2' },
      true,
    ],
    [
      'succeeded at an older revision',
      {
        observedGeneration: 2,
        lastAttemptedRevision: 'r1',
        lastAppliedRevision: 'r1',
        conditions: [ready('True', 'ReconciliationSucceeded')],
      },
      { revision: 'r2' },
      false,
    ],
    [
      'started at the revision while Ready still tells of the last one',
      {
        observedGeneration: 2,
        lastAttemptedRevision: 'r2',
        lastAppliedRevision: 'r1',
        conditions: [ready('True', 'ReconciliationSucceeded')],
      },
      { revision: 'r2' },
      false,
    ],
    [
      'in progress',
      {
        observedGeneration: 1,
        lastAttemptedRevision: 'r2',
        conditions: [ready('Unknown', 'Progressing'), reconciling('Progressing')],
      },
      { revision: 'r2' },
      false,
    ],
    [
      'failed, retrying (observedGeneration stays behind)',
      {
        observedGeneration: 1,
        lastAttemptedRevision: 'r2',
        conditions: [ready('False', 'BuildFailed'), reconciling('ProgressingWithRetry')],
      },
      { revision: 'r2' },
      true,
    ],
    [
      'failed for an older generation',
      { observedGeneration: 1, lastAttemptedRevision: 'r2', conditions: [ready('False', 'BuildFailed', 1)] },
      { revision: 'r2' },
      false,
    ],
    [
      'waiting on a dependency',
      { lastAttemptedRevision: 'r2', conditions: [ready('False', 'DependencyNotReady')] },
      { revision: 'r2' },
      false,
    ],
    [
      'waiting on the source',
      { lastAttemptedRevision: 'r2', conditions: [ready('False', 'ArtifactFailed')] },
      { revision: 'r2' },
      false,
    ],
    [
      'success still marked reconciling',
      {
        observedGeneration: 2,
        lastAttemptedRevision: 'r2',
        conditions: [ready('True', 'ReconciliationSucceeded'), reconciling('Progressing')],
      },
      { revision: 'r2' },
      false,
    ],
    [
      'the requested reconcile handled',
      { observedGeneration: 2, lastHandledReconcileAt: 't2', conditions: [ready('True', 'ReconciliationSucceeded')] },
      { token: 't2' },
      true,
    ],
    [
      'an earlier requested reconcile handled',
      { observedGeneration: 2, lastHandledReconcileAt: 't1', conditions: [ready('True', 'ReconciliationSucceeded')] },
      { token: 't2' },
      false,
    ],
    ['no status yet', undefined, { revision: 'r2' }, false],
  ])('%s: %s', (_what, status, want, expected) => {
    expect(finished(ks(status), want)).toBe(expected);
  });
});

describe('loggedEnd: the controller logged the end of a reconcile', () => {
  const at = (ms: number) => new Date(ms).toISOString();
  it.each<[string, FluxLogLine[], boolean]>([
    [
      'a success after the trigger',
      [{ name: 'app', namespace: 'flux-system', ts: at(2000), msg: 'Reconciliation finished in 1s' }],
      true,
    ],
    [
      'an error after the trigger',
      [{ name: 'app', namespace: 'flux-system', ts: at(2000), level: 'error', msg: 'Reconciler error' }],
      true,
    ],
    [
      'a success before the trigger',
      [{ name: 'app', namespace: 'flux-system', ts: at(500), msg: 'Reconciliation finished in 1s' }],
      false,
    ],
    [
      'another Kustomization',
      [{ name: 'other', namespace: 'flux-system', ts: at(2000), msg: 'Reconciliation finished in 1s' }],
      false,
    ],
    [
      'progress only',
      [{ name: 'app', namespace: 'flux-system', ts: at(2000), msg: 'server-side apply completed' }],
      false,
    ],
  ])('%s: %s', (_what, lines, want) => {
    expect(loggedEnd(lines, 'flux-system', 'app', 1000)).toBe(want);
  });
});

describe('parseLog', () => {
  it('keeps the JSON lines, and leaves out plain text and a line being written', () => {
    const text = ['{"msg":"a","name":"x"}', 'plain text', '{"msg":"b"}', '{"msg":"half'].join('\n');
    expect(parseLog(text).map((l) => l.msg)).toEqual(['a', 'b']);
  });
});
