/**
 * kustomize's resource ids and output order, for the plain-directory build that does not run it:
 * `kustomize build` without `--reorder` and without `sortOptions` sorts with the legacy order
 * (api/internal/builtins/SortOrderTransformer.go), and refuses two resources with one id.
 */
import type { KubeObject } from '../objects/kube.js';

/** The legacy order's kinds placed first and last, in order (defaultOrderFirst, defaultOrderLast). */
const ORDER_FIRST = [
  'Namespace',
  'ResourceQuota',
  'StorageClass',
  'CustomResourceDefinition',
  'ServiceAccount',
  'PodSecurityPolicy',
  'Role',
  'ClusterRole',
  'RoleBinding',
  'ClusterRoleBinding',
  'ConfigMap',
  'Secret',
  'Endpoints',
  'Service',
  'LimitRange',
  'PriorityClass',
  'PersistentVolume',
  'PersistentVolumeClaim',
  'Deployment',
  'StatefulSet',
  'CronJob',
  'PodDisruptionBudget',
];
const ORDER_LAST = ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'];
const TYPE_ORDER = new Map<string, number>([
  ...ORDER_FIRST.map((k, i) => [k, i - ORDER_FIRST.length] as const),
  ...ORDER_LAST.map((k, i) => [k, 1 + i] as const),
]);

/** resid.ParseGroupVersion: the group before the first `/`, the version after it (or all of it). */
export function groupVersion(apiVersion: string): [string, string] {
  const i = apiVersion.indexOf('/');
  return i === -1 ? ['', apiVersion] : [apiVersion.slice(0, i), apiVersion.slice(i + 1)];
}

/** Go compares strings by their UTF-8 bytes: that is the order of code points, not of UTF-16 units. */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x < y ? -1 : 1;
    if (x > 0xffff) i++;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

interface Keyed {
  obj: KubeObject;
  /** legacyGVKSortString: group_version_kind with ~G, ~V for empty parts. */
  gvk: string;
  typeOrder: number;
  /** legacyResIDSortString past the GVK, which is the same whenever it is compared: namespace|name. */
  id: string;
}

/**
 * `objects` in kustomize's legacy order: by kind (ORDER_FIRST, then the rest, then ORDER_LAST),
 * then by group, version and kind, then by namespace (none last) and name. Go's sort is not stable,
 * but no two resources compare equal once duplicate ids are refused, and group and version hold
 * no `_` or `~` (checked by the caller), so this order is total and any sort gives it. Undefined
 * when a custom resource is of kind Namespace: kustomize v5.5 began to sort the core Namespace
 * before those (#5458), so the order depends on its version.
 */
export function legacyOrder(objects: readonly KubeObject[]): KubeObject[] | undefined {
  if (objects.some((o) => o.kind === 'Namespace' && groupVersion(o.apiVersion)[0] !== '')) return undefined;
  const keyed: Keyed[] = objects.map((obj) => {
    const [group, version] = groupVersion(obj.apiVersion);
    return {
      obj,
      gvk: `${group || '~G'}_${version || '~V'}_${obj.kind}`,
      typeOrder: TYPE_ORDER.get(obj.kind) ?? 0,
      id: `${obj.metadata.namespace || '~X'}|${obj.metadata.name}`,
    };
  });
  keyed.sort((a, b) => {
    if (a.gvk !== b.gvk) {
      if (a.typeOrder !== b.typeOrder) return a.typeOrder - b.typeOrder;
      return compareCodePoints(a.gvk, b.gvk);
    }
    return compareCodePoints(a.id, b.id);
  });
  return keyed.map((k) => k.obj);
}

/**
 * Kinds no API kustomize knows of makes cluster-scoped: two of them with one name in different
 * namespaces are two resources to kustomize. Any other kind may be cluster-scoped in its openapi
 * data, where the namespace does not tell them apart.
 */
const NAMESPACED_KINDS = new Set([
  'ConfigMap',
  'Secret',
  'Service',
  'ServiceAccount',
  'Deployment',
  'StatefulSet',
  'DaemonSet',
  'ReplicaSet',
  'Job',
  'CronJob',
  'Pod',
  'PersistentVolumeClaim',
  'Role',
  'RoleBinding',
  'NetworkPolicy',
  'Ingress',
  'HorizontalPodAutoscaler',
  'PodDisruptionBudget',
  'Endpoints',
  'EndpointSlice',
  'LimitRange',
  'ResourceQuota',
  'Lease',
]);

/**
 * True when kustomize could see two of `objects` as one resource (and refuse the build), or our
 * own object keys could (an origin would be lost): two objects with one group, kind and name count
 * as one unless their kind is in NAMESPACED_KINDS and their effective namespaces (none is
 * `default`) differ. Errs towards yes: the build then runs kustomize, which gives its own answer.
 */
export function mayHaveDuplicateIds(objects: readonly KubeObject[]): boolean {
  const seen = new Map<string, Set<string>>();
  for (const obj of objects) {
    const [group] = groupVersion(obj.apiVersion);
    const key = `${group}\u0000${obj.kind}\u0000${obj.metadata.name}`;
    const namespaces = seen.get(key);
    const ns = obj.metadata.namespace || 'default';
    if (namespaces === undefined) {
      seen.set(key, new Set([ns]));
      continue;
    }
    if (!NAMESPACED_KINDS.has(obj.kind) || namespaces.has(ns)) return true;
    namespaces.add(ns);
  }
  return false;
}
