import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/objects/kube.js';
import { cleanupPatch, migrateManagedFields, unionFields } from '../../src/ssa/cleanup.js';
import { hasMarker } from '../../src/objects/flux.js';
import { immutableFields, policyOf, setOwnerLabels } from '../../src/ssa/policy.js';

const obj = (labels?: Record<string, string>, annotations?: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'c', namespace: 'n', ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) },
});
const SSA = 'kustomize.toolkit.fluxcd.io/ssa';

describe('hasMarker (Flux AnyInMetadata)', () => {
  it.each([
    [obj({ [SSA]: 'Ignore' }), 'Ignore', true],
    [obj(undefined, { [SSA]: 'ignore' }), 'Ignore', true],
    [obj({ [SSA]: '' }), '', false],
    [obj({ [SSA]: 'Merge' }), 'Ignore', false],
    [undefined, 'Ignore', false],
  ])('%j has %s → %s', (o, value, want) => {
    expect(hasMarker(o, SSA, value)).toBe(want);
  });
});

describe('policyOf', () => {
  it.each([
    {
      why: 'Ignore on the desired object skips',
      desired: obj({ [SSA]: 'Ignore' }),
      live: undefined,
      force: false,
      want: { skip: true, ifNotPresent: false, merge: false, force: false },
    },
    {
      why: 'Ignore on the live object skips',
      desired: obj(),
      live: obj(undefined, { [SSA]: 'Ignore' }),
      force: false,
      want: { skip: true, ifNotPresent: false, merge: false, force: false },
    },
    {
      why: 'reconcile: disabled skips',
      desired: obj(undefined, { 'kustomize.toolkit.fluxcd.io/reconcile': 'Disabled' }),
      live: undefined,
      force: false,
      want: { skip: true, ifNotPresent: false, merge: false, force: false },
    },
    {
      why: 'IfNotPresent skips only an existing object',
      desired: obj({ [SSA]: 'IfNotPresent' }),
      live: obj(),
      force: false,
      want: { skip: false, ifNotPresent: true, merge: false, force: false },
    },
    {
      why: 'IfNotPresent creates a missing object',
      desired: obj({ [SSA]: 'IfNotPresent' }),
      live: undefined,
      force: false,
      want: { skip: false, ifNotPresent: false, merge: false, force: false },
    },
    {
      why: 'IfNotPresent on the live object only is not honoured (Flux reads the desired one)',
      desired: obj(),
      live: obj({ [SSA]: 'IfNotPresent' }),
      force: false,
      want: { skip: false, ifNotPresent: false, merge: false, force: false },
    },
    {
      why: 'Merge on either',
      desired: obj(),
      live: obj(undefined, { [SSA]: 'merge' }),
      force: false,
      want: { skip: false, ifNotPresent: false, merge: true, force: false },
    },
    {
      why: 'force annotation',
      desired: obj(undefined, { 'kustomize.toolkit.fluxcd.io/force': 'Enabled' }),
      live: undefined,
      force: false,
      want: { skip: false, ifNotPresent: false, merge: false, force: true },
    },
    {
      why: 'spec.force',
      desired: obj(),
      live: undefined,
      force: true,
      want: { skip: false, ifNotPresent: false, merge: false, force: true },
    },
  ])('$why', ({ desired, live, force, want }) => {
    expect(policyOf(desired, live, force)).toEqual(want);
  });
});

describe('immutableFields', () => {
  it.each([
    {
      why: 'a cause naming the field',
      err: {
        status: 422,
        message: 'Job.batch "m" is invalid',
        details: { causes: [{ field: 'spec.template', message: 'Invalid value: ...: field is immutable' }] },
      },
      want: ['spec.template'],
    },
    { why: 'only the message', err: { status: 422, message: 'spec.selector: field is immutable' }, want: [] },
    {
      why: 'another validation error',
      err: {
        status: 422,
        message: 'invalid',
        details: { causes: [{ field: 'spec.ports[0].port', message: 'must be between 1 and 65535' }] },
      },
      want: undefined,
    },
    {
      why: 'a conflict is not immutability (Flux would recreate)',
      err: { status: 409, message: 'field is immutable' },
      want: undefined,
    },
  ])('$why', ({ err, want }) => {
    expect(immutableFields(err)).toEqual(want);
  });
});

describe('setOwnerLabels', () => {
  it('adds the Kustomization name and namespace, keeping other labels', () => {
    const [o] = setOwnerLabels([obj({ app: 'x' })], 'apps', 'flux-system');
    expect(o!.metadata.labels).toEqual({
      app: 'x',
      'kustomize.toolkit.fluxcd.io/name': 'apps',
      'kustomize.toolkit.fluxcd.io/namespace': 'flux-system',
    });
  });
});

describe('managedFields migration', () => {
  const f = (manager: string, operation: string, fields: Record<string, unknown>, subresource?: string) => ({
    manager,
    operation,
    fieldsType: 'FieldsV1',
    fieldsV1: fields,
    ...(subresource ? { subresource } : {}),
  });
  it.each([
    {
      why: 'kubectl edit merges into our Apply entry',
      entries: [
        f('kustomize-controller', 'Apply', { 'f:data': { 'f:a': {} } }),
        f('kubectl-edit', 'Update', { 'f:data': { 'f:b': {} } }),
      ],
      want: [f('kustomize-controller', 'Apply', { 'f:data': { 'f:a': {}, 'f:b': {} } })],
    },
    {
      why: 'without an Apply entry, the first kubectl entry becomes ours',
      entries: [f('kubectl-client-side-apply', 'Update', { 'f:x': {} }), f('other', 'Update', { 'f:y': {} })],
      want: [f('other', 'Update', { 'f:y': {} }), f('kustomize-controller', 'Apply', { 'f:x': {} })],
    },
    {
      why: 'status subresource entries and other managers stay',
      entries: [
        f('kubectl', 'Update', { 'f:status': {} }, 'status'),
        f('flux-client-side-apply', 'Update', { 'f:z': {} }),
      ],
      want: undefined,
    },
  ])('$why', ({ entries, want }) => {
    expect(migrateManagedFields(entries, 'kustomize-controller')).toEqual(want);
  });

  it('unions nested field sets', () => {
    expect(unionFields({ 'f:a': { 'f:b': {} } }, { 'f:a': { 'f:c': {} }, 'f:d': {} })).toEqual({
      'f:a': { 'f:b': {}, 'f:c': {} },
      'f:d': {},
    });
  });

  it('cleanupPatch removes CSA leftovers with escaped pointers, or says nothing is needed', () => {
    const live = {
      metadata: {
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}' },
        labels: { 'fluxcd.io/sync-gc-mark': 'x' },
        managedFields: [],
      },
    };
    expect(cleanupPatch(live, 'kustomize-controller')).toEqual([
      { op: 'remove', path: '/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration' },
      { op: 'remove', path: '/metadata/labels/fluxcd.io~1sync-gc-mark' },
    ]);
    expect(
      cleanupPatch({ metadata: { managedFields: [f('kustomize-controller', 'Apply', {})] } }, 'kustomize-controller'),
    ).toBeUndefined();
  });
});
