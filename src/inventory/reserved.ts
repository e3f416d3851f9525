/**
 * The objects this tool keeps in the cluster for itself, which no build may contain, pure. Its
 * inventory (a head ConfigMap and numbered parts) and its lock (a Lease) are named
 * `kustomize-reconcile.<namespace>.<name>…` and carry labels and annotations under
 * `kustomize-reconcile/`. A tree that could apply such an object could forge another
 * Kustomization's inventory (and have that Kustomization's objects pruned by the next run) or hold
 * its lock for ever. Under Flux the inventory lives in a status subresource that no manifest can
 * write; here the equivalent is a name and a label space that no build may produce, checked after
 * substitution and commonMetadata, that is on the objects exactly as they would be sent.
 */
import { groupOf } from '../objects/id.js';
import type { KubeObject } from '../objects/kube.js';

/** Every inventory and lock name starts with this (inventoryName in store.ts builds them with it). */
export const RESERVED_NAME_PREFIX = 'kustomize-reconcile.';
/** Every label and annotation key this tool writes on its own objects starts with this. */
export const RESERVED_KEY_PREFIX = 'kustomize-reconcile/';

/** The kinds this tool keeps its state in: the inventory's ConfigMaps and the lock's Lease. */
const STATE_KINDS: readonly { group: string; kind: string }[] = [
  { group: '', kind: 'ConfigMap' },
  { group: 'coordination.k8s.io', kind: 'Lease' },
];

/**
 * Why a built object may not be applied (undefined when it may): it is a ConfigMap or Lease named
 * like this tool's inventory or lock, or it carries a label or annotation key of this tool's own.
 * The message says what to change; the caller names the object and its file.
 */
export function reservedProblem(obj: Pick<KubeObject, 'apiVersion' | 'kind' | 'metadata'>): string | undefined {
  const name = typeof obj.metadata.name === 'string' ? obj.metadata.name : '';
  const group = groupOf(typeof obj.apiVersion === 'string' ? obj.apiVersion : '');
  const stateKind = STATE_KINDS.some((k) => k.kind === obj.kind && k.group === group);
  if (stateKind && name.startsWith(RESERVED_NAME_PREFIX)) {
    return (
      `the name "${name}" is reserved: ${obj.kind}s named ${RESERVED_NAME_PREFIX}… hold kustomize-reconcile's ` +
      'inventories and locks, which a build may not write (it could forge which objects another Kustomization ' +
      'prunes, or hold its lock). Rename the object'
    );
  }
  for (const [field, map] of [
    ['label', obj.metadata.labels],
    ['annotation', obj.metadata.annotations],
  ] as const) {
    const key = Object.keys(map ?? {}).find((k) => k.startsWith(RESERVED_KEY_PREFIX));
    if (key !== undefined) {
      return (
        `the ${field} "${key}" is reserved: keys under ${RESERVED_KEY_PREFIX} mark kustomize-reconcile's own ` +
        `inventories and locks, which a build may not write. Remove the ${field} (from the object, a patch, ` +
        'commonLabels/commonAnnotations or spec.commonMetadata)'
      );
    }
  }
  return undefined;
}
