// The server-side apply engine on the real cluster: ownership, per-object policies, recreation on
// immutable fields, and stage-wide validation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { isNotFound } from '../../src/cluster/errors.js';
import type { Report } from '../../src/report/model.js';
import { adminClient, freshNamespace, writeTree } from '../helpers/cluster.js';
import { kustomizationYaml, migrateJob } from '../helpers/manifests.js';
import { reconcileIn, reconcileTree } from '../helpers/reconcile.js';

const actions = (r: Report) => Object.fromEntries(r.changeset.map((e) => [e.subject, e.action]));

describe('server-side apply engine', () => {
  let client: ClusterClient;
  beforeAll(async () => {
    client = await adminClient();
  });
  afterAll(() => {
    client.close();
  });

  it('sets owner labels and reverts a kubectl edit on the next run, taking over its fields', async () => {
    const { ns, root, report } = await reconcileIn(client, (ns) => ({
      'ks.yaml': kustomizationYaml({ namespace: ns }),
      'app/cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: ${ns}}\ndata: {mode: fast}\n`,
    }));
    expect(actions(report)).toEqual({ [`ConfigMap/${ns}/settings`]: 'created' });
    const path = `/api/v1/namespaces/${ns}/configmaps/settings`;
    const created = await client.request<{ metadata: { labels: Record<string, string> } }>('GET', path);
    expect(created.metadata.labels).toEqual({
      'kustomize.toolkit.fluxcd.io/name': 'app',
      'kustomize.toolkit.fluxcd.io/namespace': ns,
    });

    // What `kubectl edit` does: an Update by manager kubectl-edit, plus a client-side-apply leftover.
    await client.request('PATCH', path, {
      query: { fieldManager: 'kubectl-edit' },
      contentType: 'application/merge-patch+json',
      body: {
        metadata: { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}' } },
        data: { mode: 'slow', debug: 'true' },
      },
    });
    const second = await reconcileTree(root);
    expect(second.error).toBeUndefined();
    expect(actions(second)).toEqual({ [`ConfigMap/${ns}/settings`]: 'configured' });
    const reverted = await client.request<{
      data: Record<string, string>;
      metadata: { annotations?: Record<string, string>; managedFields: { manager: string }[] };
    }>('GET', path);
    expect(reverted.data).toEqual({ mode: 'fast' });
    expect(reverted.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration']).toBeUndefined();
    expect(reverted.metadata.managedFields.map((m) => m.manager)).not.toContain('kubectl-edit');

    expect(actions(await reconcileTree(root))).toEqual({ [`ConfigMap/${ns}/settings`]: 'unchanged' });
  });

  it('honours ssa: IfNotPresent and ssa: Ignore', async () => {
    const ns = await freshNamespace(client);
    await client.request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      body: { metadata: { name: 'seeded' }, data: { v: 'by-hand' } },
    });
    const root = await writeTree({
      'ks.yaml': kustomizationYaml({ namespace: ns }),
      'app/cm.yaml': `apiVersion: v1
kind: ConfigMap
metadata:
  name: seeded
  namespace: ${ns}
  annotations: {kustomize.toolkit.fluxcd.io/ssa: IfNotPresent}
data: {v: from-git}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: ignored
  namespace: ${ns}
  labels: {kustomize.toolkit.fluxcd.io/ssa: ignore}
data: {v: from-git}
`,
    });
    const report = await reconcileTree(root);
    expect(report.error).toBeUndefined();
    expect(actions(report)).toEqual({ [`ConfigMap/${ns}/ignored`]: 'skipped', [`ConfigMap/${ns}/seeded`]: 'skipped' });
    const seeded = await client.request<{ data: Record<string, string> }>(
      'GET',
      `/api/v1/namespaces/${ns}/configmaps/seeded`,
    );
    expect(seeded.data).toEqual({ v: 'by-hand' });
    await expect(client.request('GET', `/api/v1/namespaces/${ns}/configmaps/ignored`)).rejects.toSatisfy(isNotFound);
  });

  it('fails on a changed immutable field naming it, and recreates the object with force', async () => {
    const ns = await freshNamespace(client);
    const root = await writeTree({
      'ks.yaml': kustomizationYaml({ namespace: ns }),
      'app/job.yaml': migrateJob(ns, 'busybox:1.36', false),
    });
    expect(actions(await reconcileTree(root))).toEqual({ [`Job/${ns}/migrate`]: 'created' });
    const before = await client.request<{ metadata: { uid: string } }>(
      'GET',
      `/apis/batch/v1/namespaces/${ns}/jobs/migrate`,
    );

    const changed = await writeTree({
      'ks.yaml': kustomizationYaml({ namespace: ns }),
      'app/job.yaml': migrateJob(ns, 'busybox:1.37', false),
    });
    const refused = await reconcileTree(changed);
    expect(refused.ok).toBe(false);
    expect(refused.error).toMatch(
      new RegExp(
        `^Job/${ns}/migrate dry-run failed \\(Invalid\\): .*immutable field spec.template changed: force would delete and recreate the object \\(spec.force: true in the Kustomization, the force input or --force with path, or the annotation kustomize.toolkit.fluxcd.io/force: Enabled on the object\\)`,
      ),
    );

    const forced = await writeTree({
      'ks.yaml': kustomizationYaml({ namespace: ns }),
      'app/job.yaml': migrateJob(ns, 'busybox:1.37', true),
    });
    const report = await reconcileTree(forced);
    expect(report.error).toBeUndefined();
    expect(actions(report)).toEqual({ [`Job/${ns}/migrate`]: 'created' });
    const after = await client.request<{
      metadata: { uid: string };
      spec: { template: { spec: { containers: { image: string }[] } } };
    }>('GET', `/apis/batch/v1/namespaces/${ns}/jobs/migrate`);
    expect(after.metadata.uid).not.toBe(before.metadata.uid);
    expect(after.spec.template.spec.containers[0]!.image).toBe('busybox:1.37');
  });

  it('lists every invalid object of a stage and applies nothing of it', async () => {
    const { ns, report } = await reconcileIn(client, (ns) => ({
      'ks.yaml': kustomizationYaml({ namespace: ns }),
      'app/all.yaml': `apiVersion: v1
kind: ConfigMap
metadata: {name: fine, namespace: ${ns}}
data: {a: b}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: bad-key, namespace: ${ns}}
data: {"bad key!": x}
---
apiVersion: v1
kind: Service
metadata: {name: bad-port, namespace: ${ns}}
spec: {ports: [{port: 70000}]}
`,
    }));
    expect(report.ok).toBe(false);
    expect(report.error).toContain(
      '2 objects of the resources stage failed the dry-run; nothing of the stage was applied:',
    );
    expect(report.error).toContain(`ConfigMap/${ns}/bad-key dry-run failed (Invalid)`);
    expect(report.error).toContain(`Service/${ns}/bad-port dry-run failed (Invalid)`);
    await expect(client.request('GET', `/api/v1/namespaces/${ns}/configmaps/fine`)).rejects.toSatisfy(isNotFound);
  });
});

describe('spec.ignore and diffs', () => {
  let client: ClusterClient;
  beforeAll(async () => {
    client = await adminClient();
  });
  afterAll(() => {
    client.close();
  });

  it('leaves an HPA-owned spec.replicas alone when ignored, and reports field diffs with Secret values masked', async () => {
    const ns = await freshNamespace(client);
    const files = (replicas: number, password: string) => ({
      'ks.yaml': kustomizationYaml({
        namespace: ns,
        spec: 'ignore:\n  - paths: ["/spec/replicas"]\n    target: {kind: Deployment}',
      }),
      'app/all.yaml': `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ${ns}}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "nginx:1.27"}]
---
apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: ${ns}}
stringData: {password: ${password}}
`,
    });
    expect((await reconcileTree(await writeTree(files(1, 'first-Secret-Value')))).error).toBeUndefined();
    // An autoscaler scales the Deployment (another field manager owns spec.replicas now).
    await client.request('PATCH', `/apis/apps/v1/namespaces/${ns}/deployments/web/scale`, {
      query: { fieldManager: 'horizontal-pod-autoscaler' },
      contentType: 'application/merge-patch+json',
      body: { spec: { replicas: 4 } },
    });
    const report = await reconcileTree(await writeTree(files(1, 'second-Secret-Value')));
    expect(report.error).toBeUndefined();
    expect(actions(report)).toEqual({ [`Deployment/${ns}/web`]: 'unchanged', [`Secret/${ns}/creds`]: 'configured' });
    const d = await client.request<{ spec: { replicas: number } }>(
      'GET',
      `/apis/apps/v1/namespaces/${ns}/deployments/web`,
    );
    expect(d.spec.replicas).toBe(4);
    const diff = report.changeset.find((e) => e.kind === 'Secret')?.diff;
    expect(diff).toEqual([{ path: '/data/password', kind: 'changed', before: '*** (before)', after: '*** (after)' }]);
    const text = JSON.stringify(report);
    for (const secret of ['first-Secret-Value', 'second-Secret-Value']) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(Buffer.from(secret).toString('base64'));
    }
  });
});
