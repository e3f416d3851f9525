// adoptStringDataKeys: the managedFields hand-over for a Secret applied with stringData before objects
// were normalised (src/ssa/cleanup.ts); the whole upgrade is in __tests__/integration/normalize.test.ts.
import { describe, expect, it } from 'vitest';
import { adoptStringDataKeys, cleanupPatch, type ManagedFieldsEntry } from '../../src/ssa/cleanup.js';

const M = 'kustomize-controller';
const entry = (manager: string, fieldsV1: Record<string, unknown>, operation = 'Apply'): ManagedFieldsEntry => ({
  manager,
  operation,
  apiVersion: 'v1',
  fieldsType: 'FieldsV1',
  fieldsV1,
});
const secret = (data: Record<string, string | undefined>, entries: ManagedFieldsEntry[]) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 's', namespace: 'n', managedFields: entries },
  data,
});
const labels = { 'f:metadata': { 'f:labels': { 'f:x': {} } } };

describe('adoptStringDataKeys', () => {
  it.each([
    {
      why: 'our f:stringData goes; every data key no one owns becomes ours',
      data: { a: 'YQ==', b: 'Yg==' },
      entries: [entry(M, { ...labels, 'f:stringData': { 'f:a': {} } })],
      want: [entry(M, { ...labels, 'f:data': { 'f:a': {}, 'f:b': {} } })],
    },
    {
      why: 'a key another manager owns stays theirs, ours keep what we had',
      data: { a: 'YQ==', c: 'Yw==', d: 'ZA==' },
      entries: [
        entry(M, { 'f:stringData': { 'f:a': {} }, 'f:data': { 'f:d': {} } }),
        entry('other', { 'f:data': { 'f:c': {} } }, 'Update'),
      ],
      want: [entry(M, { 'f:data': { 'f:a': {}, 'f:d': {} } }), entry('other', { 'f:data': { 'f:c': {} } }, 'Update')],
    },
    {
      why: 'no data left at all: only f:stringData goes',
      data: {},
      entries: [entry(M, { ...labels, 'f:stringData': {} })],
      want: [entry(M, labels)],
    },
    {
      why: 'nothing to do when we own no f:stringData',
      data: { a: 'YQ==' },
      entries: [entry(M, { 'f:data': { 'f:a': {} } })],
      want: undefined,
    },
    {
      why: 'nothing to do when f:stringData is another manager’s',
      data: { a: 'YQ==' },
      entries: [entry('other', { 'f:stringData': { 'f:a': {} } }), entry(M, labels)],
      want: undefined,
    },
  ])('$why', ({ data, entries, want }) => {
    expect(adoptStringDataKeys(secret(data, entries), entries, M)).toEqual(want);
  });

  it('is only for v1 Secrets', () => {
    const entries = [entry(M, { 'f:stringData': { 'f:a': {} } })];
    expect(adoptStringDataKeys({ ...secret({ a: 'x' }, entries), kind: 'ConfigMap' }, entries, M)).toBeUndefined();
  });

  it('makes cleanupPatch replace the managedFields', () => {
    const entries = [entry(M, { 'f:stringData': { 'f:a': {} } })];
    expect(cleanupPatch(secret({ a: 'YQ==', b: 'Yg==' }, entries), M)).toEqual([
      { op: 'replace', path: '/metadata/managedFields', value: [entry(M, { 'f:data': { 'f:a': {}, 'f:b': {} } })] },
    ]);
  });
});
