// Kustomization specs for the unit tests of modules that take a parsed spec.
import type { KustomizationSpec } from '../../src/flux/types.js';

/**
 * What a minimal v1 Kustomization file `flux-system/apps` in clusters/prod.yaml parses to (interval 10m,
 * prune: true, sourceRef the GitRepository flux-system), the defaults Flux's API and controller use;
 * `fields` replace or add fields.
 */
export function defaultSpec(fields: Partial<KustomizationSpec> = {}): KustomizationSpec {
  return {
    name: 'apps',
    namespace: 'flux-system',
    origin: { kind: 'file', file: 'clusters/prod.yaml', document: 1 },
    path: '.',
    sourceRef: { kind: 'GitRepository', name: 'flux-system', namespace: 'flux-system' },
    interval: 600_000,
    retryInterval: 600_000,
    timeout: 570_000,
    prune: true,
    wait: false,
    force: false,
    suspend: false,
    deletionPolicy: 'MirrorPrune',
    patches: [],
    images: [],
    components: [],
    ignoreMissingComponents: false,
    healthChecks: [],
    healthCheckExprs: [],
    ignore: [],
    dependsOn: [],
    ...fields,
  };
}
