// Health checks of a kind the server does not serve (issue 34): they fail at once, naming the object and
// the kind, instead of polling until spec.timeout; a kind whose CRD this run applies is still waited for.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import type { Report } from '../../src/report/model.js';
import { adminClient, freshNamespace, writeTree } from '../helpers/cluster.js';
import { configMap, kustomizationYaml } from '../helpers/manifests.js';
import { reconcileTree } from '../helpers/reconcile.js';

/** A namespaced CRD `<plural>.<group>` serving v1, without a status subresource. */
const crd = (group: string, kind: string, plural: string) => `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: ${plural}.${group}}
spec:
  group: ${group}
  scope: Namespaced
  names: {plural: ${plural}, singular: ${kind.toLowerCase()}, kind: ${kind}, listKind: ${kind}List}
  versions:
    - name: v1
      served: true
      storage: true
      schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`;

/** A custom resource without a status, which kstatus reads as Current once it exists. */
const ready = (group: string, kind: string, ns: string, name: string) =>
  `apiVersion: ${group}/v1\nkind: ${kind}\nmetadata: {name: ${name}, namespace: ${ns}}\nspec: {size: 1}\n`;

describe('health checks of a kind the server does not serve', () => {
  let client: ClusterClient;
  const crds: string[] = [];
  beforeAll(async () => {
    client = await adminClient();
  });
  afterAll(async () => {
    for (const name of crds) {
      await client
        .request('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`)
        .catch(() => undefined);
    }
    client.close();
  });

  it('fails at once, naming the object, the kind and what to do, instead of waiting out spec.timeout', async () => {
    const ns = await freshNamespace(client);
    const group = `${ns}.unserved.example.com`;
    const root = await writeTree({
      // No spec.timeout: the default (spec.interval 10m minus 30s) is far longer than this test may take.
      'ks.yaml': kustomizationYaml({
        namespace: ns,
        spec: `healthChecks:
  - {apiVersion: ${group}/v1, kind: CephCluster, name: rook-ceph, namespace: ${ns}}
  - {apiVersion: v1, kind: ConfigMap, name: settings, namespace: ${ns}}`,
      }),
      'app/cm.yaml': configMap(ns, 'settings'),
    });
    const log: string[] = [];
    const report = await reconcileTree(root, { kustomizations: ['ks.yaml'] }, log);
    expect(report.ok).toBe(false);
    expect(report.failure?.reason).toBe('HealthCheckFailed');
    expect(report.error).toBe(
      `health check failed: 1 object(s) Failed:\n` +
        `  CephCluster/${ns}/rook-ceph status: 'Failed': the server has no resource for kind CephCluster in ${group}/v1: ` +
        `install its CustomResourceDefinition first (e.g. in a Kustomization this one dependsOn), ` +
        `or remove spec.healthChecks[0]`,
    );
    // The default wait names where its time comes from.
    expect(log).toContain(
      'Waiting up to 9m30s (spec.timeout, default: spec.interval 10m0s minus 30s) for 2 object(s) to become healthy',
    );
  }, 60_000);

  it('waits for a custom resource whose CRD the same Kustomization applies', async () => {
    const ns = await freshNamespace(client);
    const group = `${ns}.same.example.com`;
    crds.push(`widgets.${group}`);
    const root = await writeTree({
      'ks.yaml': kustomizationYaml({
        namespace: ns,
        spec: `timeout: 10m
healthChecks:
  - {apiVersion: ${group}/v1, kind: Widget, name: w, namespace: ${ns}}`,
      }),
      'app/crd.yaml': crd(group, 'Widget', 'widgets'),
      'app/w.yaml': ready(group, 'Widget', ns, 'w'),
    });
    const log: string[] = [];
    const report = await reconcileTree(root, { kustomizations: ['ks.yaml'] }, log);
    expect(report.error, log.join('\n')).toBeUndefined();
    expect(report.health?.map((h) => `${h.subject} ${h.status}`)).toEqual([`Widget/${ns}/w Current`]);
    expect(log).toContain('Waiting up to 10m0s (spec.timeout) for 1 object(s) to become healthy');
  }, 60_000);

  it('waits for a custom resource whose CRD a Kustomization it dependsOn applies', async () => {
    const ns = await freshNamespace(client);
    const group = `${ns}.dep.example.com`;
    crds.push(`gadgets.${group}`);
    const root = await writeTree({
      'ks.yaml': [
        kustomizationYaml({ name: 'crds', namespace: ns }),
        kustomizationYaml({
          name: 'apps',
          namespace: ns,
          spec: `timeout: 10m
wait: true
dependsOn:
  - name: crds`,
        }),
      ].join('---\n'),
      'crds/crd.yaml': crd(group, 'Gadget', 'gadgets'),
      'apps/g.yaml': ready(group, 'Gadget', ns, 'g'),
    });
    const log: string[] = [];
    const report = await reconcileTree(root, { kustomizations: ['ks.yaml'] }, log);
    expect(report.error, log.join('\n')).toBeUndefined();
    const apps = (report.kustomizations ?? []).find((r: Report) => r.kustomization === `${ns}/apps`);
    expect(apps?.health?.map((h) => `${h.subject} ${h.status}`)).toEqual([`Gadget/${ns}/g Current`]);
  }, 60_000);
});
