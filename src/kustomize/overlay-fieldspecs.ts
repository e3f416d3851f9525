/**
 * kustomize's default field specs (its builtinpluginconsts tables: where commonLabels,
 * templateLabels, commonAnnotations, replicas and images go, by kind, group and version) as data,
 * and its field spec walk (api/filters/fieldspec) on one object for the in-process overlay build.
 * A spec selects an object when each of its kind, group and version it sets equals the object's
 * (the group and version split at the apiVersion's first slash): a spec that names only a kind
 * selects that kind in every group (a custom resource of kind Deployment too). The walk follows the
 * path through maps, and through every element of any list it meets on the way; a path segment is
 * created when the spec says so (only where the transformer gives a kind to create). Anything the
 * walk would refuse or read otherwise (a scalar where a map or list is due, a null on the way) gives
 * false: the build then runs kustomize.
 */
import type { KubeObject } from '../objects/kube.js';
import { isRecord } from '../util/record.js';
import { groupVersion } from './legacy-order.js';

/** One field spec: the objects it selects (each field set must match) and the path in them. */
export interface FieldSpec {
  group?: string;
  version?: string;
  kind?: string;
  /** Segments split at `/`; a segment ending in `[]` names a list and is never created. */
  path: string;
  create: boolean;
}

const spec = (path: string, create: boolean, sel: Omit<FieldSpec, 'path' | 'create'> = {}): FieldSpec => ({
  ...sel,
  path,
  create,
});

/** The pod templates' labels kustomize's metadataLabelsFieldSpecs lists (after metadata/labels). */
const TEMPLATE_LABELS: readonly FieldSpec[] = [
  spec('spec/template/metadata/labels', true, { version: 'v1', kind: 'ReplicationController' }),
  spec('spec/template/metadata/labels', true, { kind: 'Deployment' }),
  spec('spec/template/metadata/labels', true, { kind: 'ReplicaSet' }),
  spec('spec/template/metadata/labels', true, { kind: 'DaemonSet' }),
  spec('spec/template/metadata/labels', true, { group: 'apps', kind: 'StatefulSet' }),
  spec('spec/volumeClaimTemplates[]/metadata/labels', true, { group: 'apps', kind: 'StatefulSet' }),
  spec('spec/template/metadata/labels', true, { group: 'batch', kind: 'Job' }),
  spec('spec/jobTemplate/metadata/labels', true, { group: 'batch', kind: 'CronJob' }),
  spec('spec/jobTemplate/spec/template/metadata/labels', true, { group: 'batch', kind: 'CronJob' }),
];

/** kustomize's metadataLabelsFieldSpecs: every object's labels, and its pod templates'. */
const METADATA_LABELS: readonly FieldSpec[] = [spec('metadata/labels', true), ...TEMPLATE_LABELS];

const AFFINITY = [
  'spec/template/spec/affinity/podAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels',
  'spec/template/spec/affinity/podAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels',
  'spec/template/spec/affinity/podAntiAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels',
  'spec/template/spec/affinity/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels',
  'spec/template/spec/topologySpreadConstraints/labelSelector/matchLabels',
];

/** kustomize's commonLabels field specs (selectors, then metadataLabelsFieldSpecs), in its order. */
export const COMMON_LABELS: readonly FieldSpec[] = [
  spec('spec/selector', true, { version: 'v1', kind: 'Service' }),
  spec('spec/selector', true, { version: 'v1', kind: 'ReplicationController' }),
  spec('spec/selector/matchLabels', true, { kind: 'Deployment' }),
  ...AFFINITY.map((p) => spec(p, false, { group: 'apps', kind: 'Deployment' })),
  spec('spec/selector/matchLabels', true, { kind: 'ReplicaSet' }),
  spec('spec/selector/matchLabels', true, { kind: 'DaemonSet' }),
  spec('spec/selector/matchLabels', true, { group: 'apps', kind: 'StatefulSet' }),
  ...AFFINITY.map((p) => spec(p, false, { group: 'apps', kind: 'StatefulSet' })),
  spec('spec/selector/matchLabels', false, { group: 'batch', kind: 'Job' }),
  spec('spec/jobTemplate/spec/selector/matchLabels', false, { group: 'batch', kind: 'CronJob' }),
  spec('spec/selector/matchLabels', false, { group: 'policy', kind: 'PodDisruptionBudget' }),
  spec('spec/podSelector/matchLabels', false, { group: 'networking.k8s.io', kind: 'NetworkPolicy' }),
  spec('spec/ingress/from/podSelector/matchLabels', false, { group: 'networking.k8s.io', kind: 'NetworkPolicy' }),
  spec('spec/egress/to/podSelector/matchLabels', false, { group: 'networking.k8s.io', kind: 'NetworkPolicy' }),
  ...METADATA_LABELS,
];

/** kustomize's templateLabels field specs (a `labels` entry with includeTemplates), then its own metadata/labels. */
export const TEMPLATE_LABEL_SPECS: readonly FieldSpec[] = METADATA_LABELS;

/** A `labels` entry without selectors or templates: metadata/labels only. */
export const METADATA_ONLY: readonly FieldSpec[] = [spec('metadata/labels', true)];

/** kustomize's commonAnnotations field specs. */
export const COMMON_ANNOTATIONS: readonly FieldSpec[] = [
  spec('metadata/annotations', true),
  spec('spec/template/metadata/annotations', true, { version: 'v1', kind: 'ReplicationController' }),
  spec('spec/template/metadata/annotations', true, { kind: 'Deployment' }),
  spec('spec/template/metadata/annotations', true, { kind: 'ReplicaSet' }),
  spec('spec/template/metadata/annotations', true, { kind: 'DaemonSet' }),
  spec('spec/template/metadata/annotations', true, { kind: 'StatefulSet' }),
  spec('spec/template/metadata/annotations', true, { group: 'batch', kind: 'Job' }),
  spec('spec/jobTemplate/metadata/annotations', true, { group: 'batch', kind: 'CronJob' }),
  spec('spec/jobTemplate/spec/template/metadata/annotations', true, { group: 'batch', kind: 'CronJob' }),
];

/** kustomize's replicas field specs. */
export const REPLICAS: readonly FieldSpec[] = [
  spec('spec/replicas', true, { kind: 'Deployment' }),
  spec('spec/replicas', true, { kind: 'ReplicationController' }),
  spec('spec/replicas', true, { kind: 'ReplicaSet' }),
  spec('spec/replicas', true, { kind: 'StatefulSet' }),
];

/** kustomize's images field specs (its image transformer creates nothing: it gives no kind to create). */
export const IMAGES: readonly FieldSpec[] = [
  spec('spec/containers[]/image', true),
  spec('spec/initContainers[]/image', true),
  spec('spec/volumes[]/image/reference', true),
  spec('spec/template/spec/containers[]/image', true),
  spec('spec/template/spec/initContainers[]/image', true),
  spec('spec/template/spec/volumes[]/image/reference', true),
];

/** True when `fs` selects an object of this apiVersion and kind (kustomize's isMatchGVK, Gvk.IsSelected). */
export function selects(fs: Omit<FieldSpec, 'path' | 'create'>, apiVersion: string, kind: string): boolean {
  if (fs.kind && fs.kind !== kind) return false;
  const [group, version] = groupVersion(apiVersion);
  if (fs.group && fs.group !== group) return false;
  return !fs.version || fs.version === version;
}

/**
 * What a field spec's walk makes at a path's last segment when it is absent: a map (labels,
 * annotations), a scalar (replicas: the setter writes the value), or nothing (images).
 */
export type CreateKind = 'map' | 'scalar' | 'none';

/**
 * Sets the value at the end of a path: `parent[key]` is the field (a map for labels, the scalar
 * for replicas and images; undefined when a scalar is being created), `where` its path in the
 * object (`/`-joined, list elements by index). False when kustomize would refuse it or this build
 * does not know its answer.
 */
export type Setter = (parent: Record<string, unknown>, key: string, where: string) => boolean;

/**
 * kustomize's field spec filter of `fs` on `obj` (nothing when `fs` does not select it): the
 * setter at every place the path reaches. False when kustomize would fail or might answer
 * otherwise; the object may then be changed in part (the build is given up).
 */
export function applyFieldSpec(obj: KubeObject, fs: FieldSpec, create: CreateKind, set: Setter): boolean {
  if (!selects(fs, obj.apiVersion, obj.kind)) return true;
  return walk(obj, fs.path.split('/'), fs.create ? create : 'none', set, '');
}

/** Every spec of `specs` on `obj`, in order. */
export function applyFieldSpecs(
  obj: KubeObject,
  specs: readonly FieldSpec[],
  create: CreateKind,
  set: Setter,
): boolean {
  return specs.every((fs) => applyFieldSpec(obj, fs, create, set));
}

function walk(node: unknown, path: readonly string[], create: CreateKind, set: Setter, trail: string): boolean {
  if (node === undefined) return true;
  // A null on the way is left alone by kustomize or turned into what the spec creates: not modelled.
  if (node === null) return false;
  if (Array.isArray(node)) return node.every((el, i) => walk(el, path, create, set, `${trail}${i}/`));
  if (!isRecord(node)) return false;
  const [segment, ...rest] = path as [string, ...string[]];
  const isSeq = segment.endsWith('[]');
  const name = isSeq ? segment.slice(0, -2) : segment;
  if (name === '' || name === '__proto__') return false;
  const field = Object.hasOwn(node, name) ? node[name] : undefined;
  if (field === null) return false;
  if (rest.length === 0) {
    if (field === undefined && (create === 'none' || isSeq)) return true;
    if (create === 'map' && field === undefined) node[name] = {};
    return set(node, name, `${trail}${name}`);
  }
  if (field === undefined) {
    if (create === 'none' || isSeq) return true;
    node[name] = {};
  }
  return walk(node[name], rest, create, set, `${trail}${name}/`);
}
