// A run that lost its lock says only what is true of what it applied (src/reconcile/record.ts
// causeOf, src/ssa/apply.ts ApplyError): its apply error keeps what failed, without the sentence a
// run holding its lock adds ("they stay in the cluster and in the inventory"), which lostLockMessage
// replaces (the new holder may have changed or pruned them).
import { describe, expect, it } from 'vitest';
import { causeOf } from '../../src/reconcile/record.js';
import { StageError } from '../../src/reconcile/errors.js';
import { ApplyError } from '../../src/ssa/apply.js';
import type { ChangeSetEntry } from '../../src/ssa/changeset.js';

const LOST = 'lost the lock ns/l: it was taken over by run-B';
const created: ChangeSetEntry = {
  subject: 'ConfigMap/ns/a',
  action: 'created',
  apiVersion: 'v1',
  kind: 'ConfigMap',
  namespace: 'ns',
  name: 'a',
};
const FAILED = 'ConfigMap/ns/b dry-run failed: invalid';
const HELD = `${FAILED}\nAlready applied by this run: ConfigMap/ns/a (created); they stay in the cluster and in the inventory.`;

describe('causeOf (a lost lock)', () => {
  it.each<[string, StageError, string | undefined]>([
    ['the loss itself: no cause', new StageError('apply', LOST), undefined],
    [
      'an apply failure: what failed, not what stays',
      StageError.of('apply', new ApplyError(FAILED, [created], [], true)),
      FAILED,
    ],
    ['an apply failure without written objects', StageError.of('apply', new ApplyError(FAILED, [], [], true)), FAILED],
    [
      'any other error: its message',
      StageError.of('health', new Error('health check failed after 5m0s')),
      'health check failed after 5m0s',
    ],
  ])('%s', (_name, err, want) => {
    expect(causeOf(err, LOST)).toBe(want);
  });

  it('a run that holds its lock still says what it applied stays', () => {
    expect(new ApplyError(FAILED, [created], [], true).message).toBe(HELD);
    expect(new ApplyError(FAILED, [created]).message).toBe(FAILED);
  });
});
