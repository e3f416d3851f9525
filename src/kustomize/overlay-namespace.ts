/**
 * kustomize's namespace transformer (the `namespace` field, and Flux's targetNamespace at the top)
 * for the in-process overlay build, on the kinds whose scope and references are known here.
 */
import type { KubeObject } from '../objects/kube.js';
import { isRecord } from '../util/record.js';
import { groupVersion } from './legacy-order.js';
import { apiNamespaced } from './overlay-scope.js';
import type { Built, FieldReader } from './overlay-types.js';

/** `namespace`: a non-empty string set on every object it applies to (setNamespace). */
export const namespaceReader: FieldReader = {
  fields: ['namespace'],
  read(k) {
    const ns = k['namespace'];
    if (typeof ns !== 'string' || ns === '') return undefined;
    // kustomize stores each object's id before it sets the namespace (an SMP patch finds it by either).
    const step = (b: Built) => {
      b.previousNamespaces = [...(b.previousNamespaces ?? []), b.obj.metadata.namespace ?? ''];
      return setNamespace(b.obj, ns);
    };
    return (built) => (built.every(step) ? built : undefined);
  },
};

/** Namespaced kinds whose other fields kustomize's namespace transformer rewrites, or not tried here: left to it. */
const NOT_HERE = new Set(['rbac.authorization.k8s.io/RoleBinding', '/Event']);

/** Cluster-scoped kinds at an apiVersion kustomize's built-in API schema has (it leaves them alone). */
const CLUSTER_SCOPED = new Set([
  'v1/PersistentVolume',
  'rbac.authorization.k8s.io/v1/ClusterRole',
  'storage.k8s.io/v1/StorageClass',
  'scheduling.k8s.io/v1/PriorityClass',
  'networking.k8s.io/v1/IngressClass',
]);

/**
 * kustomize's namespace transformer on one object: a namespaced kind (any kind its built-in API
 * schema does not know counts as one, so every custom resource) gets the namespace; a core
 * Namespace gets it as its name; known cluster-scoped kinds (a CRD without conversion) stay. False
 * for kinds whose other fields it rewrites (role binding subjects, webhook, API service and
 * conversion references) or whose scope this table does not know: left to kustomize.
 */
function setNamespace(obj: KubeObject, ns: string): boolean {
  const [group] = groupVersion(obj.apiVersion);
  if (obj.apiVersion === 'v1' && obj.kind === 'Namespace') {
    obj.metadata.name = ns;
    return true;
  }
  if (CLUSTER_SCOPED.has(`${obj.apiVersion}/${obj.kind}`)) return true;
  // A CRD's conversion webhook names a service's namespace, which kustomize sets too.
  if (obj.apiVersion === 'apiextensions.k8s.io/v1' && obj.kind === 'CustomResourceDefinition') {
    const spec = (obj as { spec?: unknown }).spec;
    return isRecord(spec) && spec['conversion'] === undefined;
  }
  const scope = apiNamespaced(group, obj.kind);
  if (scope === false || (scope === true && NOT_HERE.has(`${group}/${obj.kind}`))) return false;
  obj.metadata.namespace = ns;
  return true;
}
