// Flux's Kustomization CRD on the shared test cluster, as test/flux/build.sh collected it.
import type { ClusterClient } from '../../src/cluster/client.js';
import { installFluxCrds } from '../../test/flux/flux.ts';
import { eventually } from './cluster.js';

const CRD_NAME = 'kustomizations.kustomize.toolkit.fluxcd.io';

/**
 * Installs the Flux CRDs test/flux/build.sh collected (the Kustomization one among them; cluster-scoped,
 * shared by every test) by server-side apply, so tests racing each other all succeed, and waits until
 * the Kustomization API answers.
 */
export async function installFluxKustomizationCrd(client: ClusterClient): Promise<void> {
  await installFluxCrds(client);
  // Established says the API is served; the first object write can still race the handler's start.
  await eventually(`the ${CRD_NAME} API to answer`, 30_000, async () => {
    await client.request('GET', '/apis/kustomize.toolkit.fluxcd.io/v1/kustomizations?limit=1');
    return true;
  });
}

/** Flux's owner labels on an object of Kustomization `ns/name`, as kustomize-controller sets them. */
export const fluxOwnerLabels = (namespace: string, name: string): Record<string, string> => ({
  'kustomize.toolkit.fluxcd.io/name': name,
  'kustomize.toolkit.fluxcd.io/namespace': namespace,
});

export interface FluxKustomizationFixture {
  namespace: string;
  name: string;
  suspend: boolean;
  /** status.inventory.entries as Flux writes them. */
  entries: { id: string; v: string }[];
  kubeConfigSecret?: string;
}

/** Creates a Flux Kustomization and sets its status.inventory through the /status subresource. */
export async function createFluxKustomization(client: ClusterClient, f: FluxKustomizationFixture): Promise<void> {
  const base = `/apis/kustomize.toolkit.fluxcd.io/v1/namespaces/${f.namespace}/kustomizations`;
  const created = await client.request<{ metadata: { resourceVersion: string } }>('POST', base, {
    body: {
      apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
      kind: 'Kustomization',
      metadata: { name: f.name, namespace: f.namespace },
      spec: {
        interval: '10m',
        path: `./${f.name}`,
        prune: true,
        sourceRef: { kind: 'GitRepository', name: 'repo' },
        suspend: f.suspend,
        ...(f.kubeConfigSecret ? { kubeConfig: { secretRef: { name: f.kubeConfigSecret } } } : {}),
      },
    },
  });
  await client.request('PUT', `${base}/${f.name}/status`, {
    body: {
      apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
      kind: 'Kustomization',
      metadata: { name: f.name, namespace: f.namespace, resourceVersion: created.metadata.resourceVersion },
      status: { inventory: { entries: f.entries } },
    },
  });
}
