// The managed-fields proof of "unchanged" (src/ssa/noop.ts) against the dry-run it replaces, on
// a real apiserver: for each change in Git or in the cluster, a preview that trusts the proof and
// one that dry-runs everything (always-dry-run) must give the same action for every object.
import { describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import type { Report } from '../../src/report/model.js';
import type { Mode } from '../../src/options/settings.js';
import { freshNamespace, writeTree } from '../helpers/cluster.js';
import { faultProxySuite, type FaultProxy, type RecordedRequest } from '../helpers/fault-proxy.js';
import { reconcileTree } from '../helpers/reconcile.js';

interface Tree {
  image: string;
  data: Record<string, string>;
  labels: Record<string, string>;
  env: { name: string; value: string }[];
  servicePorts: number[];
  memoryLimit: string;
  strings: Record<string, string>;
}

const BASE: Tree = {
  image: 'ghcr.io/stefanprodan/podinfo:6.7.1',
  data: { a: '1', b: '2' },
  labels: { team: 'x', tier: 'web' },
  env: [
    { name: 'A', value: '1' },
    { name: 'B', value: '2' },
  ],
  servicePorts: [80],
  memoryLimit: '64Mi',
  strings: { token: 'secret', user: 'admin' },
};

function files(ns: string, t: Tree): Record<string, string> {
  const labels = Object.entries(t.labels)
    .map(([k, v]) => `\n    ${k}: ${v}`)
    .join('');
  const data = Object.entries(t.data)
    .map(([k, v]) => `\n  ${k}: "${v}"`)
    .join('');
  const env = t.env.map((e) => `\n            - {name: ${e.name}, value: "${e.value}"}`).join('');
  const ports = t.servicePorts.map((p) => `\n    - {name: p${p}, port: ${p}, targetPort: 8080}`).join('');
  return {
    [`${ns}/cm.yaml`]: `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: ${ns}
  labels:${labels}
data:${data}
`,
    [`${ns}/secrets.yaml`]: `apiVersion: v1
kind: Secret
metadata: {name: by-data, namespace: ${ns}}
type: Opaque
data: {token: c2VjcmV0}
---
apiVersion: v1
kind: Secret
metadata: {name: by-string, namespace: ${ns}}
stringData:${Object.entries(t.strings)
      .map(([k, v]) => `\n  ${k}: ${v}`)
      .join('')}
`,
    [`${ns}/svc.yaml`]: `apiVersion: v1
kind: Service
metadata: {name: web, namespace: ${ns}}
spec:
  clusterIP: None
  selector: {app: web}
  ports:${ports}
`,
    [`${ns}/pdb.yaml`]: `apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: ${ns}}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: web}}
`,
    [`${ns}/deploy.yaml`]: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: ${ns}
  labels:${labels}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata:
      labels: {app: web}
    spec:
      tolerations:
        - {key: dedicated, operator: Equal, value: web, effect: NoSchedule}
      containers:
        - name: app
          image: ${t.image}
          args: ["--port=8080", "--level=info"]
          ports: [{containerPort: 8080, name: http}]
          env:${env}
          resources:
            requests: {cpu: 10m, memory: 16Mi}
            limits: {memory: ${t.memoryLimit}}
          readinessProbe:
            httpGet: {path: /readyz, port: 8080}
`,
  };
}

interface Scenario {
  name: string;
  /** The tree after the change (BASE when only the cluster changes). */
  git?: Partial<Tree>;
  /** A change made in the cluster after the first apply. */
  cluster?: (client: ClusterClient, ns: string) => Promise<unknown>;
  /** Actions the scenario must produce (both ways), beyond being equal. */
  expect: Record<string, string>;
}

const patch = (
  client: ClusterClient,
  path: string,
  body: unknown,
  contentType: string,
  fieldManager: string,
  extra: Record<string, string | boolean> = {},
) => client.request('PATCH', path, { body, contentType, query: { fieldManager, ...extra } });
const MERGE = 'application/merge-patch+json';
const cmPath = (ns: string) => `/api/v1/namespaces/${ns}/configmaps/settings`;
const deployPath = (ns: string) => `/apis/apps/v1/namespaces/${ns}/deployments/web`;

const SCENARIOS: Scenario[] = [
  {
    name: 'nothing changed',
    expect: { 'ConfigMap/settings': 'unchanged', 'Deployment/web': 'unchanged', 'Secret/by-string': 'unchanged' },
  },
  {
    name: 'Git: a value, an image and a memory limit changed',
    git: { data: { a: '1', b: '3' }, image: 'ghcr.io/stefanprodan/podinfo:6.7.2', memoryLimit: '128Mi' },
    expect: { 'ConfigMap/settings': 'configured', 'Deployment/web': 'configured', 'Service/web': 'unchanged' },
  },
  {
    name: 'Git: a key, a label and an env var removed',
    git: { data: { a: '1' }, labels: { team: 'x' }, env: [{ name: 'A', value: '1' }] },
    expect: { 'ConfigMap/settings': 'configured', 'Deployment/web': 'configured' },
  },
  {
    name: 'Git: a port added to the Service',
    git: { servicePorts: [80, 81] },
    expect: { 'Service/web': 'configured', 'ConfigMap/settings': 'unchanged' },
  },
  {
    name: 'Git: a stringData value changed',
    git: { strings: { token: 'rotated', user: 'admin' } },
    expect: { 'Secret/by-string': 'configured' },
  },
  {
    name: 'Git: a stringData key removed (the server keeps it in data)',
    git: { strings: { token: 'secret' } },
    expect: {},
  },
  {
    name: 'cluster: the data behind a stringData key edited',
    cluster: (c, ns) =>
      patch(c, `/api/v1/namespaces/${ns}/secrets/by-string`, { data: { token: 'ZWRpdGVk' } }, MERGE, 'kubectl-edit'),
    expect: { 'Secret/by-string': 'configured' },
  },
  {
    name: 'cluster: a value we own edited by hand',
    cluster: (c, ns) => patch(c, cmPath(ns), { data: { a: 'edited' } }, MERGE, 'kubectl-edit'),
    expect: { 'ConfigMap/settings': 'configured', 'Deployment/web': 'unchanged' },
  },
  {
    name: 'cluster: a label and an annotation added by another tool',
    cluster: (c, ns) =>
      patch(c, cmPath(ns), { metadata: { labels: { extra: 'y' }, annotations: { note: 'z' } } }, MERGE, 'other-tool'),
    expect: { 'ConfigMap/settings': 'unchanged' },
  },
  {
    name: 'cluster: scaled by another manager',
    cluster: (c, ns) => patch(c, `${deployPath(ns)}/scale`, { spec: { replicas: 3 } }, MERGE, 'kubectl-scale'),
    expect: { 'Deployment/web': 'configured' },
  },
  {
    name: 'cluster: a field we own removed by a JSON patch',
    cluster: (c, ns) =>
      patch(c, cmPath(ns), [{ op: 'remove', path: '/data/b' }], 'application/json-patch+json', 'other-tool'),
    expect: { 'ConfigMap/settings': 'configured' },
  },
  {
    name: 'cluster: the args list applied by another manager with the same value',
    cluster: (c, ns) =>
      patch(
        c,
        deployPath(ns),
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'web', namespace: ns },
          spec: {
            selector: { matchLabels: { app: 'web' } },
            template: {
              metadata: { labels: { app: 'web' } },
              spec: { containers: [{ name: 'app', args: ['--port=8080', '--level=info'] }] },
            },
          },
        },
        'application/apply-patch+yaml',
        'other-applier',
        { force: true },
      ),
    expect: {},
  },
  {
    name: 'cluster: a toleration edited by another manager',
    cluster: (c, ns) =>
      patch(
        c,
        deployPath(ns),
        [{ op: 'replace', path: '/spec/template/spec/tolerations/0/value', value: 'batch' }],
        'application/json-patch+json',
        'other-tool',
      ),
    expect: { 'Deployment/web': 'configured' },
  },
  {
    name: 'cluster: a client-side apply leftover',
    cluster: (c, ns) =>
      patch(
        c,
        cmPath(ns),
        { metadata: { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}' } } },
        MERGE,
        'kubectl-client-side-apply',
      ),
    expect: { 'ConfigMap/settings': 'configured' },
  },
];

describe('managed-fields proof of unchanged objects', () => {
  let client: ClusterClient;
  let proxy: FaultProxy;
  faultProxySuite((c, p) => {
    client = c;
    proxy = p;
  });

  /** Runs the tree's directory `ns` (so the Kustomization, named after its path, is the test's own). */
  async function run(root: string, ns: string, mode: Mode, alwaysDryRun: boolean) {
    const before = proxy.requests.length;
    const report = await reconcileTree(root, {
      mode,
      kubeconfig: { kind: 'path', path: proxy.kubeconfig },
      path: ns,
      alwaysDryRun,
      // Each scenario's trees are one repository's commits: one Kustomization.
      run: { holder: 'noop-proof test', source: 'acme/noop-proof' },
    });
    expect(report.error).toBeUndefined();
    return { report, seen: proxy.requests.slice(before) };
  }

  const actions = (r: Report) => Object.fromEntries(r.changeset.map((e) => [`${e.kind}/${e.name}`, e.action]));
  // Objects dry-run (an object that changed under the run, as a Deployment whose controller is
  // still at work, is dry-run again after a fresh read: counted once).
  const dryRuns = (seen: RecordedRequest[]) =>
    new Set(seen.filter((r) => r.method === 'PATCH' && r.query.includes('dryRun=All')).map((r) => r.path)).size;

  it.each(SCENARIOS)('$name: the same actions as dry-running every object', async (scenario) => {
    const ns = await freshNamespace(client, 'noop');
    await run(await writeTree(files(ns, BASE)), ns, 'apply', false);
    await scenario.cluster?.(client, ns);
    const root = await writeTree(files(ns, { ...BASE, ...scenario.git }));

    const proven = await run(root, ns, 'preview', false);
    const dryRun = await run(root, ns, 'preview', true);
    expect(actions(proven.report)).toEqual(actions(dryRun.report));
    expect(actions(proven.report)).toMatchObject(scenario.expect);
    expect(Object.keys(actions(dryRun.report))).toHaveLength(6);
    expect(dryRuns(dryRun.seen)).toBe(6);
    // Every object found changed was dry-run (the proof only ever settles "unchanged"); with
    // nothing changed, no object was.
    const changed = Object.values(actions(proven.report)).filter((a) => a !== 'unchanged').length;
    expect(dryRuns(proven.seen)).toBeGreaterThanOrEqual(changed);
    if (scenario.name === 'nothing changed') expect(dryRuns(proven.seen)).toBe(0);
  });
});
