import type { KubeObject } from '../objects/kube.js';
import { groupOf } from '../objects/id.js';
import { isMap } from './json.js';

/**
 * The objects as Flux's kustomize-controller sends them to the server, so that our field manager
 * owns the field set Flux's would. Before it applies, Flux (fluxcd/pkg/ssa `normalize.UnstructuredList`)
 * converts each object of a built-in kind to its Go type and back, sets defaults the server's
 * structured merge cannot see, and strips what is never applied:
 *
 * - every object: `metadata.creationTimestamp` is emptied and top-level `status` dropped (a
 *   CustomResourceDefinition keeps its status); rbac.authorization.k8s.io/v1 Role and ClusterRole
 *   are left entirely as they are (kustomize-controller#1041);
 * - Secret: each `stringData` key becomes a base64 `data` key (stringData wins over a `data` key of
 *   the same name), so the manager owns `f:data`, and a key removed from Git is removed from the
 *   cluster;
 * - container ports of Pods and of the pod templates of Deployments, StatefulSets, DaemonSets,
 *   ReplicaSets, Jobs and CronJobs, and Service ports, get `protocol: TCP` when they have none;
 * - the Go round trip writes the struct-valued fields it always emits: a Namespace's and a
 *   Service's `spec`, a Deployment's `strategy`, a StatefulSet's and a DaemonSet's
 *   `updateStrategy` (and `serviceName`, empty), each container's `resources`, a pod template's and a job template's
 *   `metadata`, a volume claim template's `metadata`, `spec.resources` and `status`, a
 *   NetworkPolicy's `podSelector`, a PersistentVolumeClaim's `spec.resources`, and a Service
 *   port's `targetPort` (Flux sends 0, which the server defaults to the port; we send the port:
 *   the same field owned and the same value stored);
 * - it drops what Go's `omitempty` drops: empty `labels`/`annotations`, empty ConfigMap and Secret
 *   maps, a container's empty `env[].value` and empty lists of the container fields written here.
 *
 * What the round trip also does and this does not (docs/flux-differences.md): drop fields the Go
 * types do not know, drop other empty optional values, rewrite quantities to their canonical form
 * (`0.5` → `500m`), and leave an object untouched when a field has the wrong type. None of these
 * changes which fields a valid object owns.
 *
 * Pure: returns new objects and never changes its input.
 */
export function normalizeForApply(objects: readonly KubeObject[]): KubeObject[] {
  return objects.map(normalizeObject);
}

type Obj = Record<string, unknown>;

const BUILTIN_GROUPS = new Set([
  '',
  'admissionregistration.k8s.io',
  'apps',
  'authentication.k8s.io',
  'authorization.k8s.io',
  'autoscaling',
  'batch',
  'certificates.k8s.io',
  'coordination.k8s.io',
  'discovery.k8s.io',
  'events.k8s.io',
  'flowcontrol.apiserver.k8s.io',
  'internal.apiserver.k8s.io',
  'networking.k8s.io',
  'node.k8s.io',
  'policy',
  'rbac.authorization.k8s.io',
  'resource.k8s.io',
  'scheduling.k8s.io',
  'storage.k8s.io',
  'storagemigration.k8s.io',
]);

/** The paths (from the object) of the pod templates whose containers get `protocol: TCP`, by kind. */
const POD_SPECS: Record<string, readonly (readonly string[])[]> = {
  'v1/Pod': [['spec']],
  'apps/Deployment': [['spec', 'template', 'spec']],
  'apps/StatefulSet': [['spec', 'template', 'spec']],
  'apps/DaemonSet': [['spec', 'template', 'spec']],
  'apps/ReplicaSet': [['spec', 'template', 'spec']],
  'batch/Job': [['spec', 'template', 'spec']],
  'batch/CronJob': [['spec', 'jobTemplate', 'spec', 'template', 'spec']],
};

/** Pod templates of the kinds whose Go types Flux round-trips but whose ports it leaves alone. */
const TEMPLATE_ONLY: Record<string, readonly (readonly string[])[]> = {
  'v1/ReplicationController': [['spec', 'template', 'spec']],
  'v1/PodTemplate': [['template', 'spec']],
};

function normalizeObject(input: KubeObject): KubeObject {
  const group = groupOf(input.apiVersion);
  if (group === 'rbac.authorization.k8s.io' && (input.kind === 'Role' || input.kind === 'ClusterRole')) {
    return input;
  }
  const obj = structuredClone(input) as KubeObject & Obj;
  const { creationTimestamp: _created, ...metadata } = obj.metadata;
  obj.metadata = metadata;
  if (!(obj.kind === 'CustomResourceDefinition' && group === 'apiextensions.k8s.io')) delete obj['status'];
  if (!BUILTIN_GROUPS.has(group)) return obj;

  dropEmpty(obj.metadata, 'labels');
  dropEmpty(obj.metadata, 'annotations');
  const key = `${group === '' ? 'v1' : group}/${obj.kind}`;
  for (const path of POD_SPECS[key] ?? []) podTemplate(obj, path, key !== 'v1/Pod', true);
  for (const path of TEMPLATE_ONLY[key] ?? []) podTemplate(obj, path, true, false);
  switch (key) {
    case 'v1/Secret':
      secret(obj);
      break;
    case 'v1/ConfigMap':
      dropEmpty(obj, 'data');
      dropEmpty(obj, 'binaryData');
      break;
    case 'v1/Namespace':
      ensureMap(obj, 'spec');
      break;
    case 'v1/Service':
      service(ensureMap(obj, 'spec'));
      break;
    case 'v1/PersistentVolumeClaim':
      ensureMap(ensureMap(obj, 'spec'), 'resources');
      break;
    case 'apps/Deployment':
      ensureMap(ensureMap(obj, 'spec'), 'strategy');
      break;
    case 'apps/DaemonSet':
      ensureMap(ensureMap(obj, 'spec'), 'updateStrategy');
      break;
    case 'apps/StatefulSet': {
      const spec = ensureMap(obj, 'spec');
      ensureMap(spec, 'updateStrategy');
      // Optional since Kubernetes 1.32, but its Go field has no omitempty.
      if (spec['serviceName'] === undefined) spec['serviceName'] = '';
      for (const claim of listOf(spec, 'volumeClaimTemplates')) claimTemplate(claim, true);
      break;
    }
    case 'batch/CronJob':
      if (isMap(obj['spec']) && isMap(obj['spec']['jobTemplate'])) ensureMap(obj['spec']['jobTemplate'], 'metadata');
      break;
    case 'networking.k8s.io/NetworkPolicy':
      ensureMap(ensureMap(obj, 'spec'), 'podSelector');
      break;
    case 'scheduling.k8s.io/PriorityClass':
      // `globalDefault,omitempty`: the round trip through the Go type drops a false.
      if (obj['globalDefault'] === false) delete obj['globalDefault'];
      break;
  }
  return obj;
}

/** Converts stringData to base64 data: what Flux applies, and what makes removed keys owned removals. */
function secret(obj: Obj): void {
  const strings = obj['stringData'];
  if (isMap(strings) && Object.keys(strings).length > 0) {
    const data = isMap(obj['data']) ? obj['data'] : {};
    for (const [k, v] of Object.entries(strings)) {
      data[k] = typeof v === 'string' ? Buffer.from(v, 'utf8').toString('base64') : v;
    }
    obj['data'] = data;
  }
  delete obj['stringData'];
  dropEmpty(obj, 'data');
}

function service(spec: Obj): void {
  for (const port of listOf(spec, 'ports')) {
    if (!port['protocol']) port['protocol'] = 'TCP';
    if (!Object.hasOwn(port, 'targetPort') && port['port'] !== undefined) port['targetPort'] = port['port'];
  }
}

function podTemplate(obj: Obj, path: readonly string[], template: boolean, protocols: boolean): void {
  let node: unknown = obj;
  let parent: Obj | undefined;
  for (const segment of path) {
    if (!isMap(node)) return;
    parent = node;
    node = node[segment];
  }
  if (!isMap(node) || !parent) return;
  if (template) {
    const metadata = ensureMap(parent, 'metadata');
    dropEmpty(metadata, 'labels');
    dropEmpty(metadata, 'annotations');
  }
  for (const field of ['containers', 'initContainers', 'ephemeralContainers']) {
    for (const container of listOf(node, field)) {
      ensureMap(container, 'resources');
      for (const list of ['args', 'command', 'env', 'envFrom', 'ports', 'volumeMounts']) dropEmpty(container, list);
      for (const env of listOf(container, 'env')) if (env['value'] === '') delete env['value'];
      if (protocols && field === 'containers') {
        for (const port of listOf(container, 'ports')) if (!port['protocol']) port['protocol'] = 'TCP';
      }
    }
  }
  for (const volume of listOf(node, 'volumes')) {
    const ephemeral = volume['ephemeral'];
    if (isMap(ephemeral) && isMap(ephemeral['volumeClaimTemplate']))
      claimTemplate(ephemeral['volumeClaimTemplate'], false);
  }
}

/** A PersistentVolumeClaim template: its metadata and spec.resources always, status in a StatefulSet. */
function claimTemplate(claim: Obj, status: boolean): void {
  ensureMap(claim, 'metadata');
  ensureMap(ensureMap(claim, 'spec'), 'resources');
  if (status) ensureMap(claim, 'status');
}

function ensureMap(parent: Obj, key: string): Obj {
  const v = parent[key];
  if (isMap(v)) return v;
  if (v !== undefined && v !== null) return {};
  const created: Obj = {};
  parent[key] = created;
  return created;
}

function listOf(parent: Obj, key: string): Obj[] {
  const v = parent[key];
  return Array.isArray(v) ? v.filter(isMap) : [];
}

/** Go's omitempty on a map or list field: an empty one is not sent. */
function dropEmpty(parent: Obj, key: string): void {
  const v = parent[key];
  if ((isMap(v) && Object.keys(v).length === 0) || (Array.isArray(v) && v.length === 0))
    Reflect.deleteProperty(parent, key);
}
