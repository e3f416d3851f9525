import { describe, expect, it } from 'vitest';
import { parseReportFile, reportFileText } from '../../src/report/file.js';
import { reportOf, type Report, type ReportParts } from '../../src/report/model.js';
import type { ChangeSetEntry } from '../../src/ssa/changeset.js';

// Every field of a report, each one set: `Required<...>` makes this fail to compile when Report gains
// a field, and the round trip below fails when the file schema (report/file-schema.ts) cannot read it.
const entry: Required<ChangeSetEntry> = {
  subject: 'Deployment/apps/web',
  action: 'created',
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  namespace: 'apps',
  name: 'web',
  diff: [
    { path: '/spec/replicas', kind: 'changed', before: 2, after: 3 },
    { path: '/metadata/labels/tier', kind: 'added', after: 'web' },
    { path: '/spec/paused', kind: 'removed', before: null },
  ],
  yamlDiff: ['-  replicas: 2', '+  replicas: 3'],
  note: 'its namespace is yet to be created',
  movedFrom: 'flux-system/old',
  recreated: ['spec.selector'],
};

const kustomization: Required<Omit<ReportParts, 'kustomizations'>> = {
  mode: 'drift',
  kustomization: 'flux-system/apps',
  cluster: 'production',
  level: 1,
  path: 'apps',
  server: 'https://k8s.example.com',
  changeset: [entry, { ...entry, subject: 'ConfigMap/apps/a', action: 'unchanged', kind: 'ConfigMap', name: 'a' }],
  durationMs: 2100.5,
  health: [{ subject: 'Deployment/apps/web', status: 'Current', message: 'ready' }],
  pruned: [
    { subject: 'ConfigMap/apps/old', action: 'deleted', reason: 'left Git', by: 'the garbage collector' },
    { subject: 'ConfigMap/apps/moved', action: 'moved', movedTo: 'flux-system/other' },
    { subject: 'ConfigMap/gone/x', action: 'deleted', removedWith: 'flux-system/gone' },
  ],
  renamed: [{ from: 'ConfigMap/apps/a-1', to: 'ConfigMap/apps/a-2', cost: 'nothing' }],
  approval: { label: 'destructive-ok', objects: ['PersistentVolumeClaim/apps/data'] },
  removed: [
    {
      kustomization: 'flux-system/gone',
      inventory: 'flux-system/kustomize-reconcile.flux-system.gone',
      objects: 2,
      deletionPolicy: 'MirrorPrune',
      action: 'renamed',
      reason: 'handed over',
      handedTo: ['flux-system/apps'],
      handedOver: 1,
    },
  ],
  inventory: 'flux-system/kustomize-reconcile.flux-system.apps',
  notes: ['spec.suspend is false'],
  problems: [{ subject: 'Deployment/apps/web', message: 'refused', file: 'apps/web.yaml', line: 3 }],
  drift: { detected: true, corrected: false },
  source: { ref: 'OCIRepository flux-system/apps', revision: 'v1@sha256:abc', originRevision: 'main@sha1:def' },
  error: 'health check failed',
  failure: { stage: 'health', reason: 'HealthCheckFailed', message: 'health check failed', userError: true },
  before: { result: 'Failed', since: '2026-11-20T14:03:12.000Z', message: 'health check failed' },
};

describe('a report file', () => {
  it('reads back every field of a report reportOf made, as it was written', () => {
    const report: Report = reportOf({
      ...kustomization,
      kustomizations: [reportOf(kustomization), reportOf({ ...kustomization, kustomization: 'flux-system/b' })],
    } satisfies Required<ReportParts>);
    const file = parseReportFile(reportFileText(report, { revision: 'abc', runUrl: 'u', job: 'j' }), 'r.json');
    expect(file.report).toStrictEqual(report);
  });
});
