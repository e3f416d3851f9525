// Stand-ins for what a Flux cluster runs besides kustomize-controller, for tests that apply Flux
// objects: minimal CRDs for kinds the test cluster does not serve (HelmRelease, HelmRepository,
// cert-manager and Gateway API kinds), and a loop that plays their controllers, marking each object
// Ready at its generation through the status subresource, as helm-controller and source-controller
// would once they had reconciled it.
import type { ClusterClient } from '../../src/cluster/client.js';
import { eventually } from './cluster.js';

export interface StandInKind {
  group: string;
  version: string;
  kind: string;
  plural: string;
  scope: 'Namespaced' | 'Cluster';
}

/** A CRD that takes any spec and has a status subresource. */
function crd(k: StandInKind): object {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${k.plural}.${k.group}`,
      // *.k8s.io groups are protected: the Gateway API's own CRDs carry this annotation too.
      ...(k.group.endsWith('.k8s.io')
        ? { annotations: { 'api-approved.kubernetes.io': 'https://github.com/kubernetes-sigs/gateway-api/pull/1538' } }
        : {}),
    },
    spec: {
      group: k.group,
      scope: k.scope,
      names: { plural: k.plural, singular: k.kind.toLowerCase(), kind: k.kind, listKind: `${k.kind}List` },
      versions: [
        {
          name: k.version,
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  };
}

/** Creates the CRDs of `kinds` the cluster does not serve yet (server-side apply), and waits until they answer. */
export async function installStandInCrds(client: ClusterClient, kinds: readonly StandInKind[]): Promise<void> {
  for (const k of kinds) {
    const name = `${k.plural}.${k.group}`;
    await client.request('PATCH', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`, {
      body: crd(k),
      contentType: 'application/apply-patch+yaml',
      query: { fieldManager: 'kr-test-stand-in', force: 'true' },
    });
    await eventually(`the ${name} API to answer`, 30_000, async () => {
      await client.request('GET', `/apis/${k.group}/${k.version}/${k.plural}?limit=1`);
      return true;
    });
  }
}

interface Listed {
  metadata: { name: string; namespace?: string; generation?: number };
  status?: { observedGeneration?: number };
}

/**
 * Marks every object of `kinds` Ready (condition Ready=True, observedGeneration = generation) until
 * stopped, polling; returns the stop function, which resolves once the loop has ended.
 */
export function playControllers(client: ClusterClient, kinds: readonly StandInKind[]): () => Promise<void> {
  const state = { running: true };
  const loop = (async () => {
    while (state.running) {
      for (const k of kinds) {
        const list = await client
          .request<{ items: Listed[] }>('GET', `/apis/${k.group}/${k.version}/${k.plural}`)
          .catch(() => ({ items: [] as Listed[] }));
        for (const o of list.items) {
          const generation = o.metadata.generation ?? 1;
          if (o.status?.observedGeneration === generation) continue;
          const at = o.metadata.namespace ? `namespaces/${o.metadata.namespace}/` : '';
          await client
            .request('PATCH', `/apis/${k.group}/${k.version}/${at}${k.plural}/${o.metadata.name}/status`, {
              body: {
                status: {
                  observedGeneration: generation,
                  conditions: [
                    {
                      type: 'Ready',
                      status: 'True',
                      reason: 'Succeeded',
                      message: 'reconciled by the test stand-in',
                      observedGeneration: generation,
                      lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
                    },
                  ],
                },
              },
              contentType: 'application/merge-patch+json',
            })
            .catch(() => undefined);
        }
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  return async () => {
    state.running = false;
    await loop;
  };
}

/** Stand-ins for kinds Flux users' repositories apply most: one definition each, so tests share them. */
export const STAND_IN = {
  HelmRelease: {
    group: 'helm.toolkit.fluxcd.io',
    version: 'v2',
    kind: 'HelmRelease',
    plural: 'helmreleases',
    scope: 'Namespaced',
  },
  HelmRepository: {
    group: 'source.toolkit.fluxcd.io',
    version: 'v1',
    kind: 'HelmRepository',
    plural: 'helmrepositories',
    scope: 'Namespaced',
  },
  ClusterIssuer: {
    group: 'cert-manager.io',
    version: 'v1',
    kind: 'ClusterIssuer',
    plural: 'clusterissuers',
    scope: 'Cluster',
  },
  GatewayClass: {
    group: 'gateway.networking.k8s.io',
    version: 'v1',
    kind: 'GatewayClass',
    plural: 'gatewayclasses',
    scope: 'Cluster',
  },
  Gateway: {
    group: 'gateway.networking.k8s.io',
    version: 'v1',
    kind: 'Gateway',
    plural: 'gateways',
    scope: 'Namespaced',
  },
  ClusterPolicy: {
    group: 'kyverno.io',
    version: 'v1',
    kind: 'ClusterPolicy',
    plural: 'clusterpolicies',
    scope: 'Cluster',
  },
  PodMonitor: {
    group: 'monitoring.coreos.com',
    version: 'v1',
    kind: 'PodMonitor',
    plural: 'podmonitors',
    scope: 'Namespaced',
  },
} as const satisfies Record<string, StandInKind>;
