/**
 * What kustomize's strategic merge (kyaml merge2) reads from its built-in Kubernetes schema (the
 * v1.21.2 OpenAPI compiled into kyaml), for the kinds the in-process overlay build patches: which
 * lists merge element by element and by which keys (x-kubernetes-patch-strategy containing `merge`,
 * keys from x-kubernetes-list-map-keys, else x-kubernetes-patch-merge-key, none for a list of
 * scalars), and whether the kind is namespaced. Every other list of such an object is replaced by
 * the patch's. A kind the schema does not have (any custom resource) has no merged list at all;
 * a kind of a Kubernetes API group not written here leaves the build to kustomize.
 *
 * Paths are field names joined by `.`, `[]` after a list for its elements.
 */
import { groupVersion } from './legacy-order.js';

type Lists = ReadonlyMap<string, readonly string[]>;

/** The merged lists of object metadata (ObjectMeta). */
const META: [string, string[]][] = [
  ['finalizers', []],
  ['ownerReferences', ['uid']],
];

/** The merged lists of a pod spec (PodSpec). */
const POD: [string, string[]][] = [
  ['containers', ['name']],
  ['containers[].env', ['name']],
  ['containers[].ports', ['containerPort', 'protocol']],
  ['containers[].volumeDevices', ['devicePath']],
  ['containers[].volumeMounts', ['mountPath']],
  ['ephemeralContainers', ['name']],
  ['ephemeralContainers[].env', ['name']],
  ['ephemeralContainers[].volumeDevices', ['devicePath']],
  ['ephemeralContainers[].volumeMounts', ['mountPath']],
  ['hostAliases', ['ip']],
  ['imagePullSecrets', ['name']],
  ['initContainers', ['name']],
  ['initContainers[].env', ['name']],
  ['initContainers[].ports', ['containerPort', 'protocol']],
  ['initContainers[].volumeDevices', ['devicePath']],
  ['initContainers[].volumeMounts', ['mountPath']],
  ['topologySpreadConstraints', ['topologyKey', 'whenUnsatisfiable']],
  // merge,retainKeys: kyaml reads the merge and ignores retainKeys.
  ['volumes', ['name']],
  ...META.map(([p, k]): [string, string[]] => [`volumes[].ephemeral.volumeClaimTemplate.metadata.${p}`, k]),
];

const CONDITIONS: [string, string[]] = ['status.conditions', ['type']];

function under(prefix: string, lists: [string, string[]][]): [string, string[]][] {
  return lists.map(([p, k]) => [`${prefix}${p}`, k]);
}

/** A workload whose pod template is at `template` (its metadata and spec). */
function workload(template: string, extra: [string, string[]][] = []): [string, string[]][] {
  return [
    ...under('metadata.', META),
    ...under(`${template}.metadata.`, META),
    ...under(`${template}.spec.`, POD),
    ...extra,
  ];
}

const plain = (extra: [string, string[]][] = []): [string, string[]][] => [...under('metadata.', META), ...extra];

/** Kinds of the built-in schema, by apiVersion and kind: namespaced or not, and their merged lists. */
const KINDS: Record<string, { namespaced: boolean; lists: [string, string[]][] }> = {
  'apps/v1/Deployment': { namespaced: true, lists: workload('spec.template', [CONDITIONS]) },
  'apps/v1/StatefulSet': {
    namespaced: true,
    lists: workload('spec.template', [
      CONDITIONS,
      ...under('spec.volumeClaimTemplates[].metadata.', META),
      ['spec.volumeClaimTemplates[].status.conditions', ['type']],
    ]),
  },
  'apps/v1/DaemonSet': { namespaced: true, lists: workload('spec.template', [CONDITIONS]) },
  'apps/v1/ReplicaSet': { namespaced: true, lists: workload('spec.template', [CONDITIONS]) },
  'batch/v1/Job': { namespaced: true, lists: workload('spec.template', [CONDITIONS]) },
  'batch/v1/CronJob': {
    namespaced: true,
    lists: workload('spec.jobTemplate.spec.template', under('spec.jobTemplate.metadata.', META)),
  },
  'v1/Pod': {
    namespaced: true,
    lists: [...under('metadata.', META), ...under('spec.', POD), CONDITIONS, ['status.podIPs', ['ip']]],
  },
  'v1/Service': { namespaced: true, lists: plain([['spec.ports', ['port', 'protocol']], CONDITIONS]) },
  'v1/ConfigMap': { namespaced: true, lists: plain() },
  'v1/Secret': { namespaced: true, lists: plain() },
  'v1/ServiceAccount': { namespaced: true, lists: plain([['secrets', ['name']]]) },
  'v1/PersistentVolumeClaim': { namespaced: true, lists: plain([CONDITIONS]) },
  'v1/Namespace': { namespaced: false, lists: plain([CONDITIONS]) },
  'networking.k8s.io/v1/Ingress': { namespaced: true, lists: plain() },
  'networking.k8s.io/v1/NetworkPolicy': { namespaced: true, lists: plain() },
  'policy/v1/PodDisruptionBudget': { namespaced: true, lists: plain([CONDITIONS]) },
  'rbac.authorization.k8s.io/v1/Role': { namespaced: true, lists: plain() },
  'rbac.authorization.k8s.io/v1/RoleBinding': { namespaced: true, lists: plain() },
  'rbac.authorization.k8s.io/v1/ClusterRole': { namespaced: false, lists: plain() },
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': { namespaced: false, lists: plain() },
  'autoscaling/v1/HorizontalPodAutoscaler': { namespaced: true, lists: plain() },
  'autoscaling/v2beta2/HorizontalPodAutoscaler': { namespaced: true, lists: plain() },
};

/** The API groups of the built-in schema: a kind of any other group is not in it (a custom resource). */
const SCHEMA_GROUPS = new Set([
  '',
  'admission.k8s.io',
  'admissionregistration.k8s.io',
  'apiextensions.k8s.io',
  'apiregistration.k8s.io',
  'apps',
  'authentication.k8s.io',
  'authorization.k8s.io',
  'autoscaling',
  'batch',
  'certificates.k8s.io',
  'coordination.k8s.io',
  'discovery.k8s.io',
  'events.k8s.io',
  'extensions',
  'flowcontrol.apiserver.k8s.io',
  'imagepolicy.k8s.io',
  'internal.apiserver.k8s.io',
  'networking.k8s.io',
  'node.k8s.io',
  'policy',
  'rbac.authorization.k8s.io',
  'scheduling.k8s.io',
  'storage.k8s.io',
]);

/** Kinds of the schema's groups at versions it does not have (no schema: every list is replaced). */
const NOT_IN_SCHEMA = new Set(['autoscaling/v2/HorizontalPodAutoscaler']);

const EMPTY: Lists = new Map();
const TABLES = new Map<string, { namespaced: boolean; lists: Lists }>(
  Object.entries(KINDS).map(([id, { namespaced, lists }]) => [id, { namespaced, lists: new Map(lists) }]),
);

/**
 * The merged lists of objects of `apiVersion` and `kind` (path → merge keys; an empty map for a
 * kind without schema), and whether kustomize takes the kind for namespaced, or undefined for a
 * kind of a Kubernetes API group not written here.
 */
export function schemaOf(apiVersion: string, kind: string): { namespaced: boolean; lists: Lists } | undefined {
  const id = `${apiVersion}/${kind}`;
  const known = TABLES.get(id);
  if (known !== undefined) return known;
  if (NOT_IN_SCHEMA.has(id) || !SCHEMA_GROUPS.has(groupVersion(apiVersion)[0])) {
    return { namespaced: true, lists: EMPTY };
  }
  return undefined;
}
