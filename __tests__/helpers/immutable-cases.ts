// Objects whose second version the API server refuses as an update: for each, the object as
// created and the object as changed, and the fields the recogniser must name (undefined: the
// error is not an immutable-field error and must never lead to a recreate).
import { randomBytes } from 'node:crypto';
import type { ClusterClient } from '../../src/cluster/client.js';
import type { ServerVersion } from '../../src/cluster/discovery.js';

type Obj = Record<string, unknown> & {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
};

export interface ImmutableCase {
  why: string;
  /** Applied first and left to settle (CRDs Established, claims Bound). */
  setup?: Obj[];
  before: Obj;
  after: Obj;
  /**
   * The fields immutableFields must return; undefined: not an immutable-field error; 'accepted':
   * the server makes the change in place.
   */
  want: string[] | undefined | 'accepted';
}

/** Two service IPs no Service uses yet, from the cluster's own ServiceCIDR. */
export async function freeServiceIPs(client: ClusterClient, n: number): Promise<string[]> {
  const cidrs = await client.request<{ items: { spec: { cidrs: string[] } }[] }>(
    'GET',
    '/apis/networking.k8s.io/v1/servicecidrs',
  );
  const v4 = cidrs.items.flatMap((c) => c.spec.cidrs).find((c) => c.includes('.'));
  if (!v4) throw new Error('the test cluster has no IPv4 ServiceCIDR');
  const [base, bits] = v4.split('/') as [string, string];
  const start = base.split('.').reduce((a, o) => a * 256 + Number(o), 0);
  const size = 2 ** (32 - Number(bits));
  const used = await client.request<{ items: { metadata: { name: string } }[] }>(
    'GET',
    '/apis/networking.k8s.io/v1/ipaddresses',
  );
  const taken = new Set(used.items.map((i) => i.metadata.name));
  const ips: string[] = [];
  // Start at a random point of the upper half so that parallel tests rarely pick the same IP.
  const offset = size / 2 + (randomBytes(2).readUInt16BE() % (size / 2 - 2));
  for (let i = 0; i < size && ips.length < n; i++) {
    const k = ((offset + i) % (size - 2)) + 1;
    const n32 = start + k;
    const ip = [24, 16, 8, 0].map((s) => (n32 >>> s) & 255).join('.');
    if (!taken.has(ip)) ips.push(ip);
  }
  return ips;
}

const svc = (ns: string, name: string, spec: Record<string, unknown>): Obj => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: ns },
  spec: { ports: [{ port: 80 }], ...spec },
});

const podSpec = (image: string) => ({
  containers: [{ name: 'c', image }],
});

const template = (labels: Record<string, string>, image = 'busybox:1.36') => ({
  metadata: { labels },
  spec: podSpec(image),
});

/** The cases, all in namespace `ns`; cluster-scoped ones are named with `suffix`. */
export function immutableCases(
  ns: string,
  suffix: string,
  ips: [string, string],
  server?: ServerVersion,
): ImmutableCase[] {
  // Up to 1.36 one sentence names the StatefulSet's whole spec; from 1.37 each field is named.
  const stsField = (field: string) => (server && server.major === 1 && server.minor >= 37 ? [field] : ['spec']);
  const job = (selector: string, image: string): Obj => ({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: `job-${selector}`, namespace: ns },
    spec: {
      template: { spec: { ...podSpec(image), restartPolicy: 'Never' } },
    },
  });
  const manualJob = (value: string): Obj => ({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'job-selector', namespace: ns },
    spec: {
      manualSelector: true,
      selector: { matchLabels: { run: value } },
      template: { metadata: { labels: { run: value } }, spec: { ...podSpec('busybox:1.36'), restartPolicy: 'Never' } },
    },
  });
  const workload = (kind: string, value: string, labels = value, name = kind.toLowerCase()): Obj => ({
    apiVersion: 'apps/v1',
    kind,
    metadata: { name, namespace: ns },
    spec: { selector: { matchLabels: { app: value } }, template: template({ app: labels }) },
  });
  const sts = (name: string, spec: Record<string, unknown>): Obj => ({
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name, namespace: ns },
    spec: { selector: { matchLabels: { app: name } }, template: template({ app: name }), ...spec },
  });
  const claim = (size: string) => ({
    metadata: { name: 'data' },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: size } } },
  });
  const pvc = (name: string, spec: Record<string, unknown>): Obj => ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: ns },
    spec: {
      accessModes: ['ReadWriteOnce'],
      storageClassName: 'none-such',
      resources: { requests: { storage: '1Gi' } },
      ...spec,
    },
  });
  const cm = (name: string, immutable: boolean, v: string): Obj => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: ns },
    immutable,
    data: { v },
  });
  const secret = (name: string, type: string, extra: Record<string, unknown> = {}): Obj => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: ns },
    type,
    stringData: { v: 'x' },
    ...extra,
  });
  const group = `imm-${suffix}.example.com`;
  const crd = (scope: string, plural: string, rule?: { message?: string }): Obj => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope,
      names: { plural, kind: `K${plural}` },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  properties: {
                    size: {
                      type: 'string',
                      ...(rule ? { 'x-kubernetes-validations': [{ rule: 'self == oldSelf', ...rule }] } : {}),
                    },
                  },
                },
              },
            },
          },
        },
      ],
    },
  });
  const cr = (plural: string, size: string): Obj => ({
    apiVersion: `${group}/v1`,
    kind: `K${plural}`,
    metadata: { name: 'one', namespace: ns },
    spec: { size },
  });
  const pv = (): Obj => ({
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: `imm-${suffix}` },
    spec: {
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      storageClassName: `imm-${suffix}`,
      hostPath: { path: '/tmp/imm' },
    },
  });
  const rb = (role: string): Obj => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'binding', namespace: ns },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: [{ kind: 'ServiceAccount', name: 'default', namespace: ns }],
  });
  const pc = (value: number): Obj => ({
    apiVersion: 'scheduling.k8s.io/v1',
    kind: 'PriorityClass',
    metadata: { name: `imm-${suffix}` },
    value,
  });
  const sc = (provisioner: string, parameters: Record<string, string>): Obj => ({
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: `imm-${suffix}` },
    provisioner,
    parameters,
  });
  const pod = (image: string, env: string): Obj => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'pod', namespace: ns },
    spec: { containers: [{ name: 'c', image, env: [{ name: 'E', value: env }] }] },
  });

  return [
    {
      why: 'Service spec.clusterIP changed',
      before: svc(ns, 'ip', { clusterIP: ips[0] }),
      after: svc(ns, 'ip', { clusterIP: ips[1] }),
      want: ['spec.clusterIPs[0]'],
    },
    {
      why: 'Service made headless (clusterIP: None)',
      before: svc(ns, 'headless', {}),
      after: svc(ns, 'headless', { clusterIP: 'None' }),
      want: ['spec.clusterIPs[0]'],
    },
    {
      why: 'Service spec.loadBalancerClass changed',
      before: svc(ns, 'lb', { type: 'LoadBalancer', loadBalancerClass: 'example.com/a' }),
      after: svc(ns, 'lb', { type: 'LoadBalancer', loadBalancerClass: 'example.com/b' }),
      want: ['spec.loadBalancerClass'],
    },
    {
      why: 'Job spec.template changed',
      before: job('template', 'busybox:1.36'),
      after: job('template', 'busybox:1.37'),
      want: ['spec.template'],
    },
    {
      why: 'Job spec.selector changed (manualSelector)',
      before: manualJob('a'),
      after: manualJob('b'),
      want: ['spec.selector', 'spec.template'],
    },
    {
      why: 'Deployment spec.selector changed',
      before: workload('Deployment', 'a'),
      after: workload('Deployment', 'b'),
      want: ['spec.selector'],
    },
    {
      why: 'DaemonSet spec.selector changed',
      before: workload('DaemonSet', 'a'),
      after: workload('DaemonSet', 'b'),
      want: ['spec.selector'],
    },
    {
      why: 'StatefulSet spec.selector changed',
      before: workload('StatefulSet', 'a'),
      after: workload('StatefulSet', 'b'),
      want: stsField('spec.selector'),
    },
    {
      why: 'StatefulSet spec.volumeClaimTemplates changed',
      before: sts('vct', { volumeClaimTemplates: [claim('1Gi')] }),
      after: sts('vct', { volumeClaimTemplates: [claim('2Gi')] }),
      want: stsField('spec.volumeClaimTemplates'),
    },
    {
      why: 'StatefulSet spec.serviceName changed',
      before: sts('svcname', { serviceName: 'a' }),
      after: sts('svcname', { serviceName: 'b' }),
      want: stsField('spec.serviceName'),
    },
    {
      why: 'PersistentVolumeClaim (not bound) spec.resources.requests changed',
      before: pvc('pending', {}),
      after: pvc('pending', { resources: { requests: { storage: '500Mi' } } }),
      want: ['spec'],
    },
    {
      why: 'PersistentVolumeClaim spec.accessModes changed',
      before: pvc('modes', {}),
      after: pvc('modes', { accessModes: ['ReadWriteMany'] }),
      want: ['spec'],
    },
    {
      why: 'ConfigMap with immutable: true, data changed',
      before: cm('frozen', true, 'a'),
      after: cm('frozen', true, 'b'),
      want: ['data'],
    },
    {
      why: 'ConfigMap immutable: true set back to false',
      before: cm('thawed', true, 'a'),
      after: cm('thawed', false, 'a'),
      want: ['immutable'],
    },
    {
      why: 'Secret with immutable: true, data changed',
      before: secret('frozen', 'Opaque', { immutable: true }),
      after: { ...secret('frozen', 'Opaque', { immutable: true }), stringData: { v: 'y' } },
      want: ['data'],
    },
    {
      why: 'Secret type changed',
      before: secret('typed', 'Opaque'),
      after: secret('typed', 'example.com/other'),
      want: ['type'],
    },
    {
      why: 'CustomResourceDefinition spec.scope changed',
      before: crd('Namespaced', 'scopes'),
      after: crd('Cluster', 'scopes'),
      want: ['spec.scope'],
    },
    {
      why: 'a custom resource field under the CEL rule self == oldSelf, with a message',
      setup: [crd('Namespaced', 'ruled', { message: 'Value is immutable' })],
      before: cr('ruled', 'small'),
      after: cr('ruled', 'large'),
      want: ['spec.size'],
    },
    {
      why: 'a custom resource field under the CEL rule self == oldSelf, without a message',
      setup: [crd('Namespaced', 'bare', {})],
      before: cr('bare', 'small'),
      after: cr('bare', 'large'),
      want: ['spec.size'],
    },
    {
      why: 'RoleBinding roleRef changed',
      before: rb('view'),
      after: rb('edit'),
      want: ['roleRef'],
    },
    {
      why: 'PriorityClass value changed',
      before: pc(1000),
      after: pc(2000),
      want: ['value'],
    },
    {
      why: 'StorageClass provisioner and parameters changed',
      before: sc('example.com/a', { k: 'a' }),
      after: sc('example.com/b', { k: 'b' }),
      want: ['parameters', 'provisioner'],
    },
    {
      why: 'Pod spec field other than image changed',
      before: pod('busybox:1.36', 'a'),
      after: pod('busybox:1.36', 'b'),
      want: ['spec'],
    },
    // Not immutable-field errors: a recreate would not help, or would lose the object.
    {
      why: 'a bad port number on an existing Service (plain validation)',
      before: svc(ns, 'port', {}),
      after: { ...svc(ns, 'port', {}), spec: { ports: [{ port: 70000 }] } },
      want: undefined,
    },
    {
      why: 'a changed clusterIP together with a bad port (the recreate would fail)',
      before: svc(ns, 'mixed', {}),
      after: svc(ns, 'mixed', { clusterIP: 'None', ports: [{ port: 70000 }] }),
      want: undefined,
    },
    {
      why: 'a Deployment selector that does not match its template labels',
      before: workload('Deployment', 'a', 'a', 'mismatch'),
      after: workload('Deployment', 'a', 'z', 'mismatch'),
      want: undefined,
    },
    {
      why: 'a bound PersistentVolumeClaim request made smaller',
      setup: [pv()],
      before: pvc('bound', { storageClassName: `imm-${suffix}`, volumeName: `imm-${suffix}` }),
      after: pvc('bound', {
        storageClassName: `imm-${suffix}`,
        volumeName: `imm-${suffix}`,
        resources: { requests: { storage: '500Mi' } },
      }),
      want: undefined,
    },
    {
      why: 'Service spec.ipFamilies changed on a single-stack cluster (the new family cannot be had)',
      before: svc(ns, 'family', { ipFamilies: ['IPv4'] }),
      after: svc(ns, 'family', { ipFamilies: ['IPv6'] }),
      want: undefined,
    },
    {
      why: 'Service spec.ipFamilyPolicy made RequireDualStack on a single-stack cluster',
      before: svc(ns, 'policy', { ipFamilyPolicy: 'SingleStack' }),
      after: svc(ns, 'policy', { ipFamilyPolicy: 'RequireDualStack' }),
      want: undefined,
    },
    // Changes the server makes in place: nothing to recreate.
    {
      why: 'Service type ClusterIP to ExternalName',
      before: svc(ns, 'to-external', {}),
      after: { ...svc(ns, 'to-external', { type: 'ExternalName', externalName: 'example.com' }) },
      want: 'accepted',
    },
    {
      why: 'Service type ExternalName to ClusterIP',
      before: svc(ns, 'from-external', { type: 'ExternalName', externalName: 'example.com' }),
      after: svc(ns, 'from-external', {}),
      want: 'accepted',
    },
    {
      why: 'Service spec.ipFamilyPolicy SingleStack to PreferDualStack',
      before: svc(ns, 'prefer', { ipFamilyPolicy: 'SingleStack' }),
      after: svc(ns, 'prefer', { ipFamilyPolicy: 'PreferDualStack' }),
      want: 'accepted',
    },
  ];
}
