/**
 * The scope of the Kubernetes API's own kinds, as far as the in-process overlay build
 * (overlay-namespace.ts, overlay-namerefs.ts) knows it for certain.
 */

/** Kinds of the Kubernetes API that are namespaced in every version, by group. */
const NAMESPACED: Record<string, readonly string[]> = {
  '': [
    'ConfigMap',
    'Secret',
    'Service',
    'ServiceAccount',
    'Pod',
    'PersistentVolumeClaim',
    'Endpoints',
    'LimitRange',
    'ResourceQuota',
    'ReplicationController',
    'PodTemplate',
    'Event',
  ],
  apps: ['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'ControllerRevision'],
  batch: ['Job', 'CronJob'],
  'networking.k8s.io': ['Ingress', 'NetworkPolicy'],
  'rbac.authorization.k8s.io': ['Role', 'RoleBinding'],
  autoscaling: ['HorizontalPodAutoscaler'],
  policy: ['PodDisruptionBudget'],
  'coordination.k8s.io': ['Lease'],
  'discovery.k8s.io': ['EndpointSlice'],
};

/** Groups of the Kubernetes API itself, whose other kinds' scope is not certain here. */
const API_GROUP = /^(?:|apps|batch|autoscaling|policy|extensions|[a-z0-9.-]*k8s\.io)$/;

/**
 * True for a kind of the Kubernetes API known to be namespaced, false for any other kind of its
 * groups (scope not certain here), undefined for a kind outside them (a custom resource).
 */
export function apiNamespaced(group: string, kind: string): boolean | undefined {
  if (!API_GROUP.test(group)) return undefined;
  return NAMESPACED[group]?.includes(kind) ?? false;
}
