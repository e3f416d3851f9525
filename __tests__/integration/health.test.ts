// Waiting for health on the real cluster (tier b: controllers and a kwok node make workloads real).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { reconcile } from '../../src/reconcile.js';
import { normalize } from '../../src/settings.js';
import { adminClient, freshNamespace, kubeconfigPath, writeTree } from '../helpers/cluster.js';
import { KUSTOMIZE } from '../helpers/paths.js';

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

describe('health checks', () => {
  let client: ClusterClient;
  beforeAll(async () => {
    client = await adminClient();
  });
  afterAll(() => {
    client.close();
  });

  function run(
    root: string,
    raw: { path?: string; kustomizations?: string[]; wait?: boolean; timeout?: string },
    log: string[] = [],
  ) {
    const settings = normalize({
      kubeconfig: { kind: 'path', path: kubeconfigPath() },
      root,
      kustomizeBin: KUSTOMIZE,
      ...raw,
    });
    return reconcile(settings, { log: (l) => log.push(l), secret: () => {} });
  }

  it('waits until a Deployment has rolled out, logging each status change once', async () => {
    const ns = await freshNamespace(client);
    const root = await writeTree({ 'app/web.yaml': deployment(ns, 'web') });
    const log: string[] = [];
    const report = await run(root, { path: 'app', wait: true }, log);
    expect(report.error).toBeUndefined();
    expect(report.health).toEqual([
      { subject: `Deployment/${ns}/web`, status: 'Current', message: 'Deployment is available. Replicas: 2' },
    ]);
    const lines = log.filter((l) => l.startsWith(`Deployment/${ns}/web: `));
    expect(lines.at(-1)).toBe(`Deployment/${ns}/web: Current (Deployment is available. Replicas: 2)`);
    expect(new Set(lines).size).toBe(lines.length);
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
      schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`;
    const root = await writeTree({
      'app/crd.yaml': crd,
      'app/gadget.yaml': `apiVersion: ${group}/v1
kind: Gadget
metadata: {name: broken, namespace: ${ns}}
status:
  conditions:
    - {type: Stalled, status: "True", reason: BadConfig, message: "the gadget cannot start"}
`,
    });
    const started = Date.now();
    const report = await run(root, { path: 'app', wait: true, timeout: '2m' });
    expect(Date.now() - started).toBeLessThan(60_000);
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
    const report = await run(root, { path: 'app', wait: true, timeout: '30s' });
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
    expect((await run(seed, { path: 'app', wait: true })).error).toBeUndefined();
    const root = await writeTree({
      'ks.yaml': `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: app, namespace: ${ns}}
spec:
  interval: 10m
  prune: false
  path: ./app
  sourceRef: {kind: GitRepository, name: repo}
  healthChecks:
    - {kind: Deployment, name: db, namespace: ${ns}}
`,
      'app/cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: ${ns}}\n`,
    });
    const report = await run(root, { kustomizations: ['ks.yaml'] });
    expect(report.error).toBeUndefined();
    expect(report.health).toEqual([
      { subject: `Deployment/${ns}/db`, status: 'Current', message: 'Deployment is available. Replicas: 2' },
    ]);
  });
});
