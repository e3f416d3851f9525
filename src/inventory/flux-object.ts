/**
 * Reads the Flux Kustomization of a Kustomization's namespace/name, for a hand-over from Flux (see
 * flux.ts). No Flux Kustomization CRD in the cluster and no such object are the same answer: the
 * API server says 404 to both.
 */
import type { ClusterClient } from '../cluster/client.js';
import { ApiError, isNotFound } from '../cluster/errors.js';
import { get, resourceOf } from '../cluster/verbs.js';
import { FLUX_API_VERSION, FLUX_GROUP } from '../objects/flux.js';
import type { FluxKustomization } from './flux.js';

export interface FluxLookup {
  /** The Flux Kustomization, when there is one. */
  object?: FluxKustomization;
  /** Why it could not be read (403), as a sentence; whether there is one is then unknown. */
  forbidden?: string;
}

export async function readFluxKustomization(
  client: ClusterClient,
  ks: { name: string; namespace: string },
  groupVersion = FLUX_API_VERSION,
): Promise<FluxLookup> {
  const ref = { resource: resourceOf(groupVersion, 'kustomizations'), namespace: ks.namespace, name: ks.name };
  try {
    return { object: await get<FluxKustomization>(client, ref) };
  } catch (err) {
    if (isNotFound(err)) return {};
    if (err instanceof ApiError && err.status === 403) {
      return {
        forbidden:
          `Flux Kustomization ${ks.namespace}/${ks.name} could not be read (${err.message}), so if Flux reconciled ` +
          'this Kustomization, its status.inventory was not imported and objects it applied that Git no longer has ' +
          `are not pruned. To take over from Flux, grant get on kustomizations.${FLUX_GROUP} in namespace ` +
          `${ks.namespace}; see docs/handover.md`,
      };
    }
    throw err;
  }
}
