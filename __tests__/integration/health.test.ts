// Waiting for health on the real cluster (tier b: controllers and a kwok node make workloads real).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { adminClient, eventually, freshNamespace, kubeconfigPath, writeTree } from '../helpers/cluster.js';
import { startFaultProxy } from '../helpers/fault-proxy.js';
import { kustomizationYaml } from '../helpers/manifests.js';
import { reconcileTree } from '../helpers/reconcile.js';
import { installFluxKustomizationCrd } from '../helpers/flux-crd.js';
import { Discovery } from '../../src/cluster/discovery.js';
import { ResourceManager } from '../../src/ssa/manager.js';

const deployment = (ns: string, name: string, extra = '') => `apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}, namespace: ${ns}}
spec:
  replicas: 2
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:${extra}
      containers: [{name: web, image: "nginx:1.27"}]
`;

/**
 * Plays the custom resource's controller: once the object exists, writes its status (the CRDs here
 * have no status subresource). Not from Git: a status in Git is dropped before applying, as Flux does.
 */
function writeStatusOnceCreated(client: ClusterClient, path: string, status: unknown): Promise<boolean> {
  return eventually(`${path} to exist`, 60_000, async () => {
    await client.request('PATCH', path, { body: { status }, contentType: 'application/merge-patch+json' });
    return true;
  });
}

describe('health checks', () => {
  let client: ClusterClient;
  beforeAll(async () => {
    client = await adminClient();
  });
  afterAll(() => {
    client.close();
  });

  it('waits until a Deployment has rolled out, logging each status change once', async () => {
    const ns = await freshNamespace(client);
    const root = await writeTree({ 'app/web.yaml': deployment(ns, 'web') });
    const log: string[] = [];
    const report = await reconcileTree(root, { path: 'app', wait: true }, log);
    expect(report.error).toBeUndefined();
    expect(report.health).toEqual([
      { subject: `Deployment/${ns}/web`, status: 'Current', message: 'Deployment is available. Replicas: 2' },
    ]);
    const lines = log.filter((l) => l.startsWith(`Deployment/${ns}/web: `));
    expect(lines.at(-1)).toBe(`Deployment/${ns}/web: Current (Deployment is available. Replicas: 2)`);
    expect(new Set(lines).size).toBe(lines.length);
  });

  it('reads the objects it waits for by list, one per resource and namespace, and a lone one by GET', async () => {
    const ns = await freshNamespace(client);
    const cm = (name: string) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}, namespace: ${ns}}\ndata: {a: "1"}\n`;
    const root = await writeTree({
      'app/cms.yaml': ['c1', 'c2', 'c3', 'c4'].map(cm).join('---\n'),
      'app/web.yaml': deployment(ns, 'web'),
      'app/api.yaml': deployment(ns, 'api'),
      'app/svc.yaml': `apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: ${ns}}\nspec:\n  clusterIP: None\n  selector: {app: web}\n  ports: [{port: 80}]\n`,
    });
    const proxy = await startFaultProxy(kubeconfigPath());
    try {
      const report = await reconcileTree(root, {
        kubeconfig: { kind: 'path', path: proxy.kubeconfig },
        path: 'app',
        name: 'app-health',
        wait: true,
      });
      expect(report.error).toBeUndefined();
      expect(report.health?.map((h) => h.status)).toEqual(Array.from({ length: 7 }, () => 'Current'));
      const gets = proxy.requests.filter((r) => r.method === 'GET' && r.path.includes(`/namespaces/${ns}/`));
      const paths = (re: RegExp) => gets.filter((r) => re.test(r.path)).map((r) => r.path);
      // Each object is read once to plan it (its list), then polled: ConfigMaps and Deployments by list,
      // until one is left waiting (one Deployment rolled out before the other: a busy machine): that
      // one is read by GET.
      expect(paths(/\/configmaps\/./)).toEqual([]);
      expect(new Set(paths(/\/deployments\/./)).size).toBeLessThanOrEqual(1);
      expect(paths(/\/configmaps$/).length).toBeGreaterThanOrEqual(2);
      expect(paths(/\/deployments$/).length).toBeGreaterThanOrEqual(2);
      for (const list of gets.filter((r) => /\/(configmaps|deployments)$/.test(r.path))) {
        expect(decodeURIComponent(list.query)).toContain('labelSelector=kustomize.toolkit.fluxcd.io/name=app-health,');
      }
      // The one Service: a list to plan it, then a GET per poll.
      expect(paths(/\/services\/web$/).length).toBeGreaterThanOrEqual(1);
    } finally {
      await proxy.close();
    }
  });

  it('fails fast on a Failed object, listing it with its status and message', async () => {
    const ns = await freshNamespace(client);
    const group = `${ns}.example.com`;
    const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.${group}}
spec:
  group: ${group}
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetList}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          x-kubernetes-preserve-unknown-fields: true
          properties:
            # In progress from its creation until its "controller" (below) says otherwise.
            status:
              type: object
              x-kubernetes-preserve-unknown-fields: true
              default: {conditions: [{type: Reconciling, status: "True", reason: Starting, message: starting}]}
`;
    const root = await writeTree({
      'app/crd.yaml': crd,
      'app/gadget.yaml': `apiVersion: ${group}/v1
kind: Gadget
metadata: {name: broken, namespace: ${ns}}
`,
    });
    const controller = writeStatusOnceCreated(client, `/apis/${group}/v1/namespaces/${ns}/gadgets/broken`, {
      conditions: [{ type: 'Stalled', status: 'True', reason: 'BadConfig', message: 'the gadget cannot start' }],
    });
    const report = await reconcileTree(root, { path: 'app', wait: true, timeout: '2m' });
    await controller;
    expect(report.ok).toBe(false);
    expect(report.error).toBe(
      `health check failed: 1 object(s) Failed:\n  Gadget/${ns}/broken status: 'Failed': the gadget cannot start`,
    );
    await client.request('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.${group}`);
  });

  it('times out on an object that never becomes ready, listing each unhealthy object', async () => {
    const ns = await freshNamespace(client);
    const root = await writeTree({
      'app/ok.yaml': deployment(ns, 'ok'),
      'app/stuck.yaml': deployment(ns, 'stuck', '\n      nodeSelector: {no-such-node: "true"}'),
    });
    const report = await reconcileTree(root, { path: 'app', wait: true, timeout: '30s' });
    expect(report.ok).toBe(false);
    expect(report.error).toMatch(
      new RegExp(
        `^health check failed after 30s, timeout waiting for 1 object\\(s\\):\\n  Deployment/${ns}/stuck status: 'InProgress': `,
      ),
    );
    expect(report.health?.find((h) => h.subject === `Deployment/${ns}/ok`)?.status).toBe('Current');
  }, 90_000);

  it('checks spec.healthChecks objects outside the build', async () => {
    const ns = await freshNamespace(client);
    const seed = await writeTree({ 'app/db.yaml': deployment(ns, 'db') });
    expect((await reconcileTree(seed, { path: 'app', wait: true })).error).toBeUndefined();
    const root = await writeTree({
      'ks.yaml': kustomizationYaml({
        namespace: ns,
        spec: `healthChecks:
  - {kind: Deployment, name: db, namespace: ${ns}}`,
      }),
      'app/cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: ${ns}}\n`,
    });
    const report = await reconcileTree(root, { kustomizations: ['ks.yaml'] });
    expect(report.error).toBeUndefined();
    expect(report.health).toEqual([
      { subject: `Deployment/${ns}/db`, status: 'Current', message: 'Deployment is available. Replicas: 2' },
    ]);
  });

  it('fails a rollout whose image kwok refuses as soon as kstatus says Failed, naming the Deployment', async () => {
    const ns = await freshNamespace(client);
    const root = await writeTree({
      'app/good.yaml': deployment(ns, 'good'),
      // The test cluster's kwok never pulls images from fail.kwok.invalid (test/cluster/up.go).
      'app/bad.yaml': deployment(ns, 'bad')
        .replace('spec:\n  replicas: 2', 'spec:\n  progressDeadlineSeconds: 2\n  replicas: 2')
        .replace('"nginx:1.27"', '"fail.kwok.invalid/web:1"'),
    });
    const log: string[] = [];
    const report = await reconcileTree(root, { path: 'app', wait: true, timeout: '5m' }, log);
    expect(report.ok).toBe(false);
    // Failed, not the timeout: the deployment controller's ProgressDeadlineExceeded is what kstatus reads.
    expect(report.error).toBe(
      `health check failed: 1 object(s) Failed:\n  Deployment/${ns}/bad status: 'Failed': Progress deadline exceeded`,
    );
    const pods = await client.request<{ items: { status: { containerStatuses?: { state: unknown }[] } }[] }>(
      'GET',
      `/api/v1/namespaces/${ns}/pods`,
      { query: { labelSelector: 'app=bad' } },
    );
    expect(pods.items[0]?.status.containerStatuses?.[0]?.state).toEqual({
      waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "fail.kwok.invalid/web:1"' },
    });
    // The end of the wait is a count (each object's status was logged as it changed), not a table
    // that would print every object again.
    expect(log).toContainEqual(
      expect.stringMatching(/^Health: (1 Failed, 1 (Current|InProgress)|1 (Current|InProgress), 1 Failed)$/),
    );
    expect(log.some((l) => /^OBJECT +STATUS +MESSAGE$/.test(l))).toBe(false);
  }, 90_000);

  it('gates a custom resource on spec.healthCheckExprs, which kstatus alone would pass at once', async () => {
    const ns = await freshNamespace(client);
    const group = `${ns}.example.com`;
    const root = await writeTree({
      'ks.yaml': kustomizationYaml({
        namespace: ns,
        spec: `wait: true
timeout: 1m
healthCheckExprs:
  - apiVersion: ${group}/v1
    kind: Database
    inProgress: "status.?phase.orValue('') == 'Provisioning'"
    failed: "status.?phase.orValue('') == 'Error'"
    current: "status.?phase.orValue('') == 'Available' && status.replicas >= spec.replicas"`,
      }),
      'app/crd.yaml': `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: databases.${group}}
spec:
  group: ${group}
  scope: Namespaced
  names: {plural: databases, singular: database, kind: Database, listKind: DatabaseList}
  versions:
    - name: v1
      served: true
      storage: true
      subresources: {status: {}}
      schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`,
      // No status and no Ready condition: kstatus would call this Current immediately.
      'app/db.yaml': `apiVersion: ${group}/v1\nkind: Database\nmetadata: {name: main, namespace: ${ns}}\nspec: {replicas: 2}\n`,
    });
    const log: string[] = [];
    const running = reconcileTree(root, { kustomizations: ['ks.yaml'] }, log);
    const path = `/apis/${group}/v1/namespaces/${ns}/databases/main/status`;
    const setStatus = (status: object) =>
      client.request('PATCH', path, { body: { status }, contentType: 'application/merge-patch+json' });
    const subject = `Database/${ns}/main`;
    const seen = async (line: string) => {
      for (let i = 0; i < 100 && !log.includes(line); i++) await new Promise((r) => setTimeout(r, 100));
      expect(log, JSON.stringify(log)).toContain(line);
    };
    // No status at all: `status` is not even a variable, so every expression errors (Unknown), as in Flux.
    await seen(`${subject}: Unknown (healthCheckExprs: Unknown variable: status)`);
    await setStatus({ phase: 'Pending' });
    await seen(`${subject}: InProgress (healthCheckExprs: no expression is true yet)`);
    await setStatus({ phase: 'Provisioning', replicas: 0 });
    await seen(`${subject}: InProgress (healthCheckExprs: inProgress is true)`);
    await setStatus({ phase: 'Available', replicas: 2 });
    const report = await running;
    expect(report.error).toBeUndefined();
    expect(report.health?.find((h) => h.subject === subject)).toEqual({
      subject,
      status: 'Current',
      message: 'healthCheckExprs: current is true',
    });
    await client.request('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/databases.${group}`);
  }, 90_000);

  it('fails fast when a healthCheckExprs failed expression holds', async () => {
    const ns = await freshNamespace(client);
    const group = `${ns}.example.com`;
    const root = await writeTree({
      'ks.yaml': kustomizationYaml({
        namespace: ns,
        spec: `timeout: 5m
healthChecks:
  - {apiVersion: ${group}/v1, kind: Queue, name: q, namespace: ${ns}}
healthCheckExprs:
  - apiVersion: ${group}/v1
    current: "status.state == 'ok'"
    failed: "status.state == 'broken'"`,
      }),
      'app/crd.yaml': `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: queues.${group}}
spec:
  group: ${group}
  scope: Namespaced
  names: {plural: queues, singular: queue, kind: Queue, listKind: QueueList}
  versions:
    - name: v1
      served: true
      storage: true
      schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`,
      'app/q.yaml': `apiVersion: ${group}/v1\nkind: Queue\nmetadata: {name: q, namespace: ${ns}}\n`,
    });
    const controller = writeStatusOnceCreated(client, `/apis/${group}/v1/namespaces/${ns}/queues/q`, {
      state: 'broken',
    });
    const report = await reconcileTree(root, { kustomizations: ['ks.yaml'] });
    await controller;
    expect(report.error).toBe(
      `health check failed: 1 object(s) Failed:\n  Queue/${ns}/q status: 'Failed': healthCheckExprs: failed is true`,
    );
    await client.request('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/queues.${group}`);
  });

  it('ends the wait early when no controller has picked up an object of a Flux kind, naming the controller', async () => {
    const ns = await freshNamespace(client);
    // Flux's own OCIRepository CRD: it defaults status.observedGeneration to -1, which kstatus
    // reads as a generation not yet observed, so without its controller the wait would last its timeout.
    await installFluxKustomizationCrd(client);
    const path = `/apis/source.toolkit.fluxcd.io/v1/namespaces/${ns}/ocirepositories`;
    const create = (name: string) =>
      client.request('POST', path, {
        body: {
          apiVersion: 'source.toolkit.fluxcd.io/v1',
          kind: 'OCIRepository',
          metadata: { name, namespace: ns },
          spec: { interval: '5m', url: 'oci://registry.example.com/charts/podinfo' },
        },
      });
    await create('orphan');
    await create('served');
    // One of them gets a status from a (slow) controller: it is not judged unclaimed.
    await client.request('PATCH', `${path}/served/status`, {
      body: {
        status: {
          observedGeneration: 0,
          conditions: [
            {
              type: 'Ready',
              status: 'Unknown',
              reason: 'Progressing',
              message: 'fetching',
              lastTransitionTime: '2026-01-01T00:00:00Z',
            },
          ],
        },
      },
      contentType: 'application/merge-patch+json',
    });
    const target = (name: string) => ({
      subject: `OCIRepository/${ns}/${name}`,
      apiVersion: 'source.toolkit.fluxcd.io/v1',
      kind: 'OCIRepository',
      name,
      namespace: ns,
    });
    const started = Date.now();
    const manager = new ResourceManager(client, new Discovery(client), {
      fieldManager: 'health-test',
      concurrency: 2,
      log: () => undefined,
    });
    const outcome = await manager.wait([target('orphan'), target('served')], {
      timeoutMs: 120_000,
      intervalMs: 200,
      unclaimedMs: 1_000,
    });
    expect(outcome.timedOut).toBe(false);
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(outcome.results.find((r) => r.subject === `OCIRepository/${ns}/orphan`)).toEqual({
      subject: `OCIRepository/${ns}/orphan`,
      status: 'Failed',
      message:
        'no controller has picked it up: it has no status 1s after the apply; is source-controller running in this cluster? ' +
        '(without it, leave the object out of the wait: spec.wait: false, or spec.healthChecks without it)',
    });
    expect(outcome.results.find((r) => r.subject === `OCIRepository/${ns}/served`)?.status).toBe('InProgress');
  });
});
