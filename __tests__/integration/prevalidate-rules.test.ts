// prevalidate's rules agree with the real API server: for each kind it knows, a name it refuses is
// refused by the server's dry-run for metadata.name, and a name at the edge of what it accepts is
// not; the same for label keys and values and annotation keys.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { Discovery, objectPath } from '../../src/cluster/discovery.js';
import { ApiError } from '../../src/cluster/errors.js';
import type { KubeObject } from '../../src/objects/kube.js';
import { objectProblems } from '../../src/ssa/prevalidate.js';
import { adminClient, freshNamespace } from '../helpers/cluster.js';

type Kind = [apiVersion: string, kind: string, namespaced: boolean];
const SUBDOMAIN_KINDS: Kind[] = [
  ['v1', 'ConfigMap', true],
  ['v1', 'Secret', true],
  ['v1', 'ServiceAccount', true],
  ['v1', 'LimitRange', true],
  ['v1', 'ResourceQuota', true],
  ['apps/v1', 'Deployment', true],
  ['apps/v1', 'DaemonSet', true],
  ['batch/v1', 'Job', true],
  ['batch/v1', 'CronJob', true],
  ['networking.k8s.io/v1', 'Ingress', true],
  ['networking.k8s.io/v1', 'NetworkPolicy', true],
  ['autoscaling/v2', 'HorizontalPodAutoscaler', true],
  ['storage.k8s.io/v1', 'StorageClass', false],
  ['scheduling.k8s.io/v1', 'PriorityClass', false],
  ['coordination.k8s.io/v1', 'Lease', true],
];

const CASES: { kind: Kind; name: string; meta?: Record<string, unknown> }[] = [
  ...SUBDOMAIN_KINDS.flatMap((kind) => [
    { kind, name: 'Bad_Name' },
    { kind, name: 'a.b-c' },
  ]),
  { kind: ['v1', 'Namespace', false], name: 'a.b' },
  { kind: ['v1', 'Namespace', false], name: 'a-b' },
  { kind: ['v1', 'Service', true], name: '1a' },
  { kind: ['v1', 'Service', true], name: 'a.b' },
  { kind: ['v1', 'Service', true], name: 'a-1' },
  { kind: ['apps/v1', 'StatefulSet', true], name: 'a.b' },
  { kind: ['apps/v1', 'StatefulSet', true], name: 'a-b' },
  { kind: ['policy/v1', 'PodDisruptionBudget', true], name: 'Bad_Name' },
  { kind: ['batch/v1', 'CronJob', true], name: 'c'.repeat(53) },
  { kind: ['batch/v1', 'CronJob', true], name: 'c'.repeat(52) },
  { kind: ['rbac.authorization.k8s.io/v1', 'ClusterRole', false], name: 'system:Bad_Name' },
  { kind: ['rbac.authorization.k8s.io/v1', 'Role', true], name: 'Read_All' },
  { kind: ['v1', 'ConfigMap', true], name: 'label-key', meta: { labels: { 'app/x/y': 'v' } } },
  { kind: ['v1', 'ConfigMap', true], name: 'label-value', meta: { labels: { app: 'has space' } } },
  { kind: ['v1', 'ConfigMap', true], name: 'long-label', meta: { labels: { app: 'v'.repeat(64) } } },
  { kind: ['v1', 'ConfigMap', true], name: 'fine-labels', meta: { labels: { 'example.com/app': 'A.b_c-1', e: '' } } },
  { kind: ['v1', 'ConfigMap', true], name: 'annotation-key', meta: { annotations: { 'bad key!': 'x' } } },
  { kind: ['v1', 'ConfigMap', true], name: 'fine-annotation', meta: { annotations: { 'a.io/b_c': 'any text' } } },
];

describe('prevalidate agrees with the API server', () => {
  let client: ClusterClient;
  let discovery: Discovery;
  let ns: string;
  beforeAll(async () => {
    client = await adminClient();
    discovery = new Discovery(client);
    ns = await freshNamespace(client);
  });
  afterAll(async () => {
    await client.request('DELETE', `/api/v1/namespaces/${ns}`).catch(() => undefined);
    client.close();
  });

  it.each(
    CASES.map((c) => [`${c.kind[1]} ${c.name.length > 20 ? `${c.name.length} characters` : c.name}`, c] as const),
  )('%s', async (_, { kind: [apiVersion, kind, namespaced], name }) => {
    const obj: KubeObject = { apiVersion, kind, metadata: { name, ...(namespaced ? { namespace: ns } : {}) } };
    const ours = objectProblems([obj], await discovery.serverVersion()).filter((p) => p.includes('metadata.name'));
    const mapping = await discovery.mapping(apiVersion, kind);
    const server = await client
      .request('POST', objectPath(mapping, obj.metadata.namespace, ''), { body: obj, query: { dryRun: 'All' } })
      .then(
        () => [] as string[],
        (err: unknown) => {
          if (!(err instanceof ApiError)) throw err;
          return (err.details?.causes ?? []).filter((c) => c.field === 'metadata.name').map((c) => c.message ?? '');
        },
      );
    expect({ refusedByUs: ours.length > 0, refusedByServer: server.length > 0 }).toEqual({
      refusedByUs: server.length > 0,
      refusedByServer: ours.length > 0,
    });
  });
});
