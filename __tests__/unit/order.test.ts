import { describe, expect, it } from 'vitest';
import { applyOrder, sortForApply, stageOf } from '../../src/objects/order.js';

const obj = (apiVersion: string, kind: string, name = 'x', namespace?: string) => ({
  apiVersion,
  kind,
  metadata: { name, ...(namespace ? { namespace } : {}) },
});

describe('stageOf', () => {
  it.each([
    ['apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'definitions'],
    ['v1', 'Namespace', 'definitions'],
    ['rbac.authorization.k8s.io/v1', 'ClusterRole', 'definitions'],
    ['rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', 'resources'],
    ['storage.k8s.io/v1', 'StorageClass', 'classes'],
    ['networking.k8s.io/v1', 'IngressClass', 'classes'],
    ['example.com/v1', 'WidgetClass', 'classes'],
    ['example.com/v1', 'Namespace', 'resources'],
    ['v1', 'ConfigMap', 'resources'],
    ['apps/v1', 'Deployment', 'resources'],
  ] as const)('%s %s → %s', (apiVersion, kind, stage) => {
    expect(stageOf({ apiVersion, kind })).toBe(stage);
  });
});

describe('sortForApply', () => {
  it.each([
    {
      why: 'ranked kinds first, in Flux order',
      input: [
        obj('apps/v1', 'Deployment'),
        obj('v1', 'Service'),
        obj('v1', 'Secret'),
        obj('v1', 'ConfigMap'),
        obj('v1', 'Namespace'),
      ],
      want: ['Namespace', 'ConfigMap', 'Secret', 'Service', 'Deployment'],
    },
    {
      why: 'unlisted kinds between the first list and webhooks',
      input: [
        obj('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration'),
        obj('example.com/v1', 'Widget'),
        obj('apps/v1', 'Deployment'),
      ],
      want: ['Deployment', 'Widget', 'ValidatingWebhookConfiguration'],
    },
    {
      why: 'webhooks in their listed order',
      input: [
        obj('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration'),
        obj('admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration'),
      ],
      want: ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'],
    },
    {
      why: 'unranked kinds by group, then kind',
      input: [obj('z.example.com/v1', 'Alpha'), obj('a.example.com/v1', 'Zeta'), obj('a.example.com/v1', 'Beta')],
      want: ['Beta', 'Zeta', 'Alpha'],
    },
  ])('$why', ({ input, want }) => {
    expect(sortForApply(input).map((o) => o.kind)).toEqual(want);
  });

  it('orders the same kind by namespace, then name, and leaves the input alone', () => {
    const input = [
      obj('v1', 'ConfigMap', 'b', 'ns2'),
      obj('v1', 'ConfigMap', 'z', 'ns1'),
      obj('v1', 'ConfigMap', 'a', 'ns2'),
    ];
    const sorted = sortForApply(input);
    expect(sorted.map((o) => `${o.metadata.namespace}/${o.metadata.name}`)).toEqual(['ns1/z', 'ns2/a', 'ns2/b']);
    expect(input[0]!.metadata.name).toBe('b');
  });
});

describe('applyOrder', () => {
  it('puts definitions, then classes, then the rest, each sorted', () => {
    const input = [
      obj('apps/v1', 'Deployment'),
      obj('storage.k8s.io/v1', 'StorageClass'),
      obj('v1', 'ConfigMap'),
      obj('v1', 'Namespace'),
      obj('apiextensions.k8s.io/v1', 'CustomResourceDefinition'),
    ];
    expect(applyOrder(input).map((o) => o.kind)).toEqual([
      'CustomResourceDefinition',
      'Namespace',
      'StorageClass',
      'ConfigMap',
      'Deployment',
    ]);
  });
});
