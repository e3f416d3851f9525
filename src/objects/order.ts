import type { KubeObject } from '../objects/kube.js';

/** Kinds applied first, in this order (Flux's ssa sort). */
const FIRST = [
  'CustomResourceDefinition',
  'Namespace',
  'ClusterRole',
  'ClusterClass',
  'RuntimeClass',
  'PriorityClass',
  'StorageClass',
  'VolumeSnapshotClass',
  'IngressClass',
  'GatewayClass',
  'ClusterRoleBinding',
  'ResourceQuota',
  'ServiceAccount',
  'Role',
  'RoleBinding',
  'ConfigMap',
  'Secret',
  'Service',
  'LimitRange',
  'Deployment',
  'StatefulSet',
  'CronJob',
  'PodDisruptionBudget',
];
/** Kinds applied last: webhooks, so that they never block the objects they would admit. */
const LAST = ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'];

function rank(kind: string): number {
  const first = FIRST.indexOf(kind);
  if (first >= 0) return first - FIRST.length; // negative: before unlisted kinds (rank 0)
  const last = LAST.indexOf(kind);
  return last >= 0 ? last + 1 : 0;
}

function group(apiVersion: string): string {
  return apiVersion.includes('/') ? apiVersion.split('/')[0]! : '';
}

/** Flux's apply order: kind rank, then group, kind, namespace and name. Returns a new array. */
export function sortForApply<T extends Pick<KubeObject, 'apiVersion' | 'kind' | 'metadata'>>(
  objects: readonly T[],
): T[] {
  return [...objects].sort(
    (a, b) =>
      rank(a.kind) - rank(b.kind) ||
      cmp(group(a.apiVersion), group(b.apiVersion)) ||
      cmp(a.kind, b.kind) ||
      cmp(a.metadata.namespace ?? '', b.metadata.namespace ?? '') ||
      cmp(a.metadata.name, b.metadata.name),
  );
}

export type Stage = 'definitions' | 'classes' | 'resources';

/**
 * Flux's stages: CRDs, Namespaces and ClusterRoles first (and waited for), then every kind named
 * `*Class`, then everything else.
 */
export function stageOf(obj: Pick<KubeObject, 'apiVersion' | 'kind'>): Stage {
  const g = group(obj.apiVersion);
  if (obj.kind.toLowerCase() === 'customresourcedefinition' && g === 'apiextensions.k8s.io') return 'definitions';
  if (obj.kind === 'Namespace' && obj.apiVersion === 'v1') return 'definitions';
  if (obj.kind === 'ClusterRole' && g === 'rbac.authorization.k8s.io') return 'definitions';
  if (obj.kind.endsWith('Class')) return 'classes';
  return 'resources';
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The whole apply order: stage by stage, Flux's sort within each stage. */
export function applyOrder<T extends Pick<KubeObject, 'apiVersion' | 'kind' | 'metadata'>>(objects: readonly T[]): T[] {
  const stages: Stage[] = ['definitions', 'classes', 'resources'];
  return stages.flatMap((stage) => sortForApply(objects.filter((o) => stageOf(o) === stage)));
}
