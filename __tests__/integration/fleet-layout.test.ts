// An OCI-synced fleet in Flux's D2 reference layout: clusters/<name>/ holds a FluxInstance, ResourceSets
// and the OCIRepository the cluster syncs from, beside the Kustomizations. The README's glob
// (clusters/*/*.yaml) matches all of them: files without a Kustomization are skipped with a note, the
// Kustomizations the FluxInstance and the ResourceSet generate are named as not seen, a cluster whose
// files hold no Kustomization is left out of the plan, and the source input names the OCIRepository
// that this checkout is, so the Kustomization sourced from it is built from the checkout.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { planRun } from '../../src/plan/run.js';
import { adminClient, freshNamespace, writeTree } from '../helpers/cluster.js';
import { reconcileTree, testSettings } from '../helpers/reconcile.js';

const GLOB = 'clusters/*/*.yaml';
const CHECKOUT = 'OCIRepository/flux-system/flux-system';

const fluxInstance = (path: string) => `apiVersion: fluxcd.controlplane.io/v1
kind: FluxInstance
metadata: {name: flux, namespace: flux-system}
spec:
  distribution: {version: "2.x", registry: ghcr.io/fluxcd}
  sync: {kind: OCIRepository, url: "oci://127.0.0.1:9/acme/fleet", ref: latest, path: ${path}}
`;

const resourceSet = (name: string) => `apiVersion: fluxcd.controlplane.io/v1
kind: ResourceSet
metadata: {name: ${name}, namespace: flux-system}
spec:
  inputs: [{tenant: team-a}, {tenant: team-b}]
  resources:
    - apiVersion: kustomize.toolkit.fluxcd.io/v1
      kind: Kustomization
      metadata: {name: << inputs.tenant >>-${name}, namespace: flux-system}
      spec:
        interval: 10m
        prune: true
        path: ./tenants/<< inputs.tenant >>
        sourceRef: {kind: OCIRepository, name: flux-system}
`;

/** The fleet: clusters/prod with a Kustomization of the OCIRepository; clusters/staging with none. */
const fleet = (ns: string, name: string) => ({
  'clusters/prod/flux-instance.yaml': fluxInstance('clusters/prod'),
  'clusters/prod/apps.yaml': resourceSet('apps'),
  // Unreachable on purpose: pulled, it would fail the Kustomization.
  'clusters/prod/source.yaml': `apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: flux-system, namespace: flux-system}
spec: {interval: 1m, url: "oci://127.0.0.1:9/acme/fleet", ref: {tag: latest}}
`,
  'clusters/prod/infra.yaml': `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: ${name}, namespace: flux-system}
spec:
  interval: 10m
  prune: true
  path: ./infra/prod
  sourceRef: {kind: OCIRepository, name: flux-system, namespace: flux-system}
`,
  'clusters/staging/flux-instance.yaml': fluxInstance('clusters/staging'),
  'clusters/staging/apps.yaml': resourceSet('apps'),
  'infra/prod/cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fleet, namespace: ${ns}}\ndata: {from: checkout}\n`,
});

describe('a Flux D2 fleet (FluxInstance, ResourceSets, OCIRepository) under clusters/*/*.yaml', () => {
  let client: ClusterClient;
  beforeAll(async () => {
    client = await adminClient();
  });
  afterAll(() => {
    client.close();
  });

  it('plans the Kustomizations there are, noting the files and generators it skips', async () => {
    const ns = await freshNamespace(client);
    const root = await writeTree(fleet(ns, `fleet-${ns}`));
    const log: string[] = [];
    const plan = await planRun(testSettings(root, { kustomizations: [GLOB], source: CHECKOUT }), undefined, (l) =>
      log.push(l),
    );
    expect(plan.clusters).toEqual(['prod']);
    expect(plan.all.map((e) => e.kustomization)).toEqual([`flux-system/fleet-${ns}`]);
    const text = log.join('\n');
    expect(text).toContain('clusters/prod/apps.yaml holds no kustomize.toolkit.fluxcd.io/v1 Kustomization');
    expect(text).toContain('clusters/prod/flux-instance.yaml holds no kustomize.toolkit.fluxcd.io/v1 Kustomization');
    expect(text).toContain(
      'ResourceSet flux-system/apps in clusters/prod/apps.yaml generates Kustomizations that this run does not see: flux-system/<< inputs.tenant >>-apps',
    );
    expect(text).toContain(
      'FluxInstance flux-system/flux in clusters/prod/flux-instance.yaml generates Kustomizations that this run does not see: flux-system/flux-system',
    );
    expect(text).toMatch(/cluster staging: no kustomize\.toolkit\.fluxcd\.io\/v1 Kustomization .*left out of the plan/);
  });

  it('applies the Kustomization of the OCIRepository the source input names from this checkout', async () => {
    const ns = await freshNamespace(client);
    const name = `fleet-${ns}`;
    const root = await writeTree(fleet(ns, name));
    const log: string[] = [];
    const report = await reconcileTree(
      root,
      { kustomizations: [GLOB], cluster: 'prod', source: CHECKOUT, inventoryNamespace: ns },
      log,
    );
    expect(report.ok, report.error).toBe(true);
    const cm = await client.request<{ data?: { from?: string } }>('GET', `/api/v1/namespaces/${ns}/configmaps/fleet`);
    expect(cm.data?.from).toBe('checkout');
    expect(log.join('\n')).toContain('clusters/prod/apps.yaml holds no kustomize.toolkit.fluxcd.io/v1 Kustomization');

    // Without the source input, the OCIRepository is pulled from its registry, never this checkout.
    const pulled = await reconcileTree(root, { kustomizations: [GLOB], cluster: 'prod', inventoryNamespace: ns }, []);
    expect(pulled.ok).toBe(false);
    expect(JSON.stringify(pulled)).toContain('OCIRepository flux-system/flux-system');
  }, 60_000);

  it('refuses a glob whose files hold no Kustomization at all, naming the pattern and the generators', async () => {
    const root = await writeTree({
      'clusters/staging/flux-instance.yaml': fluxInstance('clusters/staging'),
      'clusters/staging/apps.yaml': resourceSet('apps'),
    });
    const report = await reconcileTree(root, { kustomizations: [GLOB], source: CHECKOUT }, []);
    expect(report.ok).toBe(false);
    expect(report.error).toContain(
      'no kustomize.toolkit.fluxcd.io/v1 Kustomization in the files that kustomizations pattern "clusters/*/*.yaml" matches',
    );
    expect(report.error).toContain('ResourceSet flux-system/apps');
  });
});
