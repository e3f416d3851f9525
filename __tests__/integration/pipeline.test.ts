import { cp, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { isNotFound } from '../../src/cluster/errors.js';
import type { Report } from '../../src/report/model.js';
import type { Mode } from '../../src/options/settings.js';
import { adminClient, eventually } from '../helpers/cluster.js';
import { REPO } from '../helpers/paths.js';
import { reconcileTree } from '../helpers/reconcile.js';

function run(root: string, path: string, mode: Mode = 'apply'): Promise<Report> {
  return reconcileTree(root, {
    mode,
    path,
    // The repository's copies in temporary directories are the same repository.
    run: { holder: 'pipeline test', source: 'acme/kustomize-reconcile' },
  });
}

function actions(report: Report): Record<string, string> {
  return Object.fromEntries(report.changeset.map((e) => [e.subject, e.action]));
}

const EXAMPLE_SUBJECTS = [
  'Namespace/kr-example',
  'ConfigMap/kr-example/podinfo-config',
  'Service/kr-example/podinfo',
  'Deployment/kr-example/podinfo',
];

// examples/ owns the namespace kr-example; these tests run in order against it.
describe('examples/ on the real cluster', () => {
  let client: ClusterClient;
  beforeAll(async () => {
    client = await adminClient();
    // A reused cluster (KR_TEST_KUBECONFIG) may hold the namespace from an earlier run.
    const path = '/api/v1/namespaces/kr-example';
    try {
      await client.request('DELETE', path);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    await eventually('namespace kr-example to be gone', 60_000, async () => {
      try {
        await client.request('GET', path);
        return undefined;
      } catch (err) {
        if (isNotFound(err)) return true;
        throw err;
      }
    });
  });
  afterAll(() => {
    client.close();
  });

  it('is created on the first apply and unchanged on the second', async () => {
    const first = await run(REPO, 'examples');
    expect(first.error).toBeUndefined();
    expect(actions(first)).toEqual(Object.fromEntries(EXAMPLE_SUBJECTS.map((s) => [s, 'created'])));
    // Flux's apply order: Namespace, then ConfigMap, Service, Deployment.
    expect(first.changeset.map((e) => e.subject)).toEqual(EXAMPLE_SUBJECTS);

    const cm = await client.request<{
      data: Record<string, string>;
      metadata: { managedFields: { manager: string; operation: string }[] };
    }>('GET', '/api/v1/namespaces/kr-example/configmaps/podinfo-config');
    expect(cm.data['PODINFO_UI_MESSAGE']).toBe('Hello from kustomize-reconcile');
    expect(cm.metadata.managedFields).toContainEqual(
      expect.objectContaining({ manager: 'kustomize-controller', operation: 'Apply' }),
    );

    const second = await run(REPO, 'examples');
    expect(second.error).toBeUndefined();
    expect(actions(second)).toEqual(Object.fromEntries(EXAMPLE_SUBJECTS.map((s) => [s, 'unchanged'])));
  });

  it('configures exactly the object whose field changed', async () => {
    const root = await mkdtemp(join(tmpdir(), 'kr-examples-'));
    await cp(join(REPO, 'examples'), join(root, 'examples'), { recursive: true });
    const file = join(root, 'examples', 'podinfo.yaml');
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.replace('Hello from kustomize-reconcile', 'Hello again'));

    const preview = await run(root, 'examples', 'preview');
    expect(preview.error).toBeUndefined();
    expect(preview.changeset.filter((e) => e.action !== 'unchanged')).toEqual([
      expect.objectContaining({ subject: 'ConfigMap/kr-example/podinfo-config', action: 'configured' }),
    ]);
    const untouched = await client.request<{ data: Record<string, string> }>(
      'GET',
      '/api/v1/namespaces/kr-example/configmaps/podinfo-config',
    );
    expect(untouched.data['PODINFO_UI_MESSAGE']).toBe('Hello from kustomize-reconcile');

    const report = await run(root, 'examples');
    expect(report.error).toBeUndefined();
    expect(actions(report)).toEqual({
      'Namespace/kr-example': 'unchanged',
      'ConfigMap/kr-example/podinfo-config': 'configured',
      'Service/kr-example/podinfo': 'unchanged',
      'Deployment/kr-example/podinfo': 'unchanged',
    });
    const cm = await client.request<{ data: Record<string, string> }>(
      'GET',
      '/api/v1/namespaces/kr-example/configmaps/podinfo-config',
    );
    expect(cm.data['PODINFO_UI_MESSAGE']).toBe('Hello again');
  });

  it('rolls the example Deployment out: availableReplicas reaches replicas', async () => {
    const status = await eventually('podinfo to be available', 90_000, async () => {
      const d = await client.request<{
        spec: { replicas: number };
        status?: { availableReplicas?: number; observedGeneration?: number };
        metadata: { generation: number };
      }>('GET', '/apis/apps/v1/namespaces/kr-example/deployments/podinfo');
      return d.status?.availableReplicas === d.spec.replicas && d.status.observedGeneration === d.metadata.generation
        ? d
        : undefined;
    });
    expect(status.spec.replicas).toBe(2);
    expect(status.status?.availableReplicas).toBe(2);
  });
});
