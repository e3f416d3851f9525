// override-manager-before-dry-run (src/ssa/takeover.ts): which managedFields entries the named
// managers take over, what the patch makes of them, and what a preview says when it cannot write one.
import { describe, expect, it } from 'vitest';
import type { ManagedFieldsEntry } from '../../src/ssa/cleanup.js';
import { namedManager, pendingTakeoverHint, takenFrom, takeoverPatch } from '../../src/ssa/takeover.js';
import type { KubeObject } from '../../src/objects/kube.js';

const OURS = 'kustomize-controller';
const entry = (manager: string, operation: string, fields: Record<string, unknown> = {}, subresource?: string) =>
  ({
    manager,
    operation,
    apiVersion: 'v1',
    fieldsType: 'FieldsV1',
    fieldsV1: fields,
    ...(subresource ? { subresource } : {}),
  }) as ManagedFieldsEntry;
const live = (...managedFields: ManagedFieldsEntry[]) => ({ metadata: { name: 'x', managedFields } });

describe('namedManager', () => {
  it.each([
    ['an Update of the manager named', entry('legacy-controller', 'Update'), ['legacy-controller'], true],
    ['an Apply of the manager named', entry('legacy-controller', 'Apply'), ['legacy-controller'], true],
    ['a manager the name begins (Flux matches by prefix)', entry('legacy-controller', 'Update'), ['legacy'], true],
    ['another manager', entry('helm', 'Update'), ['legacy'], false],
    ['a name longer than the manager', entry('legacy', 'Update'), ['legacy-controller'], false],
    ['a subresource entry (status)', entry('legacy', 'Update', {}, 'status'), ['legacy'], false],
    ['an empty name matches nothing', entry('legacy', 'Update'), [''], false],
    ['no names', entry('legacy', 'Update'), [], false],
  ])('%s', (_what, e, names, want) => {
    expect(namedManager(e, names)).toBe(want);
  });
});

describe('takeoverPatch', () => {
  const ours = entry(OURS, 'Apply', { 'f:data': { 'f:a': {} } });
  const legacy = entry('legacy', 'Update', { 'f:data': { 'f:b': {} } });
  const helm = entry('helm', 'Update', { 'f:data': { 'f:c': {} } });
  it.each([
    [
      'merges the named manager into our Apply entry, others kept',
      live(ours, legacy, helm),
      ['legacy'],
      [helm, { ...ours, fieldsV1: { 'f:data': { 'f:a': {}, 'f:b': {} } } }],
    ],
    [
      'without our entry, the first named one becomes it',
      live(legacy, helm),
      ['legacy'],
      [helm, { ...legacy, manager: OURS, operation: 'Apply' }],
    ],
    [
      'several named managers, one entry of ours',
      live(legacy, helm, ours),
      ['legacy', 'helm'],
      [{ ...ours, fieldsV1: { 'f:data': { 'f:a': {}, 'f:b': {}, 'f:c': {} } } }],
    ],
    ['nothing of the named managers', live(ours, helm), ['legacy'], undefined],
    ['no names', live(ours, legacy), [], undefined],
    ['a name that is our own manager takes nothing from us', live(ours), [OURS], undefined],
    ['no managedFields', { metadata: { name: 'x' } }, ['legacy'], undefined],
  ])('%s', (_what, obj, names, want) => {
    const got = takeoverPatch(obj, names, OURS);
    expect(got).toEqual(
      want === undefined ? undefined : [{ op: 'replace', path: '/metadata/managedFields', value: want }],
    );
  });
});

describe('takenFrom', () => {
  it.each([
    [
      live(entry('legacy-a', 'Update'), entry('legacy-b', 'Apply'), entry('helm', 'Update')),
      ['legacy'],
      ['legacy-a', 'legacy-b'],
    ],
    [live(entry(OURS, 'Apply'), entry(OURS, 'Update')), ['kustomize'], [OURS]],
    [live(entry('helm', 'Update')), ['legacy'], []],
  ])('%#', (obj, names, want) => {
    expect(takenFrom(obj, names, OURS)).toEqual(want);
  });
});

describe('pendingTakeoverHint', () => {
  const obj = (annotations: Record<string, string> = {}): KubeObject => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'x', namespace: 'ns', annotations },
  });
  const wedged = live(entry(OURS, 'Apply'), entry('legacy', 'Update'));
  it.each([
    ['a takeover pending', obj(), wedged, ['legacy'], /would first take over the fields of legacy \(override-manager/],
    ['no names', obj(), wedged, undefined, /^$/],
    ['nothing to take', obj(), live(entry(OURS, 'Apply')), ['legacy'], /^$/],
    ['no live object', obj(), undefined, ['legacy'], /^$/],
    ['ssa: Merge', obj({ 'kustomize.toolkit.fluxcd.io/ssa': 'Merge' }), wedged, ['legacy'], /^$/],
    ['ssa: IfNotPresent', obj({ 'kustomize.toolkit.fluxcd.io/ssa': 'IfNotPresent' }), wedged, ['legacy'], /^$/],
    ['ssa: Ignore', obj({ 'kustomize.toolkit.fluxcd.io/ssa': 'Ignore' }), wedged, ['legacy'], /^$/],
  ])('%s', (_what, desired, l, managers, want) => {
    expect(pendingTakeoverHint(desired, l, OURS, managers ? { managers } : {})).toMatch(want);
  });
});
