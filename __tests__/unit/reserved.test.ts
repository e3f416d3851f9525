import { describe, expect, it } from 'vitest';
import { reservedProblem } from '../../src/inventory/reserved.js';
import { inventoryName } from '../../src/inventory/store.js';
import type { KubeObject } from '../../src/objects/kube.js';

const obj = (apiVersion: string, kind: string, name: string, extra: Partial<KubeObject['metadata']> = {}) =>
  ({ apiVersion, kind, metadata: { name, namespace: 'flux-system', ...extra } }) as KubeObject;

describe('reservedProblem', () => {
  const inventory = inventoryName({ namespace: 'flux-system', name: 'victim' });
  it.each([
    [
      'an inventory head',
      obj('v1', 'ConfigMap', inventory),
      /name "kustomize-reconcile\.flux-system\.victim" is reserved/,
    ],
    ['an inventory part', obj('v1', 'ConfigMap', `${inventory}.g3-0`), /is reserved/],
    ['a lock', obj('coordination.k8s.io/v1', 'Lease', inventory), /Leases named kustomize-reconcile\.… hold/],
    ['a lock of another API version', obj('coordination.k8s.io/v1beta1', 'Lease', inventory), /is reserved/],
    [
      'a ConfigMap labelled as an inventory',
      obj('v1', 'ConfigMap', 'innocent', { labels: { 'kustomize-reconcile/inventory': 'true' } }),
      /the label "kustomize-reconcile\/inventory" is reserved/,
    ],
    [
      'an inventory part label on any kind',
      obj('apps/v1', 'Deployment', 'web', { labels: { 'kustomize-reconcile/inventory-part': 'x' } }),
      /label "kustomize-reconcile\/inventory-part"/,
    ],
    [
      'a Lease with the last-holder annotation',
      obj('coordination.k8s.io/v1', 'Lease', 'mine', { annotations: { 'kustomize-reconcile/last-holder': 'run' } }),
      /the annotation "kustomize-reconcile\/last-holder" is reserved/,
    ],
  ])('refuses %s', (_, object, message) => {
    expect(reservedProblem(object)).toMatch(message);
  });

  it.each([
    ['an ordinary ConfigMap', obj('v1', 'ConfigMap', 'app-settings')],
    ['a ConfigMap whose name only contains the prefix', obj('v1', 'ConfigMap', 'my-kustomize-reconcile.settings')],
    ['a Secret named like an inventory (not a kind of ours)', obj('v1', 'Secret', inventory)],
    ['a Lease of another group named like a lock', obj('example.com/v1', 'Lease', inventory)],
    [
      'the managed-by label with our name (a value, not a key of ours)',
      obj('v1', 'ConfigMap', 'x', { labels: { 'app.kubernetes.io/managed-by': 'kustomize-reconcile' } }),
    ],
    ['a label of a similar prefix', obj('v1', 'ConfigMap', 'x', { labels: { 'kustomize-reconciler/x': 'y' } })],
  ])('accepts %s', (_, object) => {
    expect(reservedProblem(object)).toBeUndefined();
  });
});
