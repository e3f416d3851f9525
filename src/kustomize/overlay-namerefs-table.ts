/**
 * kustomize's nameReference field specs (v5.8.1, api/internal/konfig/builtinpluginconsts), as data:
 * for each kind whose name other objects name, the fields of those objects that name it. A field
 * path is split at `/` (a `\/` is a slash inside a key); a list on the way is walked element by
 * element, as kustomize's field specs are.
 */

/** A group/version/kind selector: an absent part selects every value. */
export interface GvkSelector {
  group?: string;
  version?: string;
  kind: string;
}

/** A field of the referrers a selector picks. */
export interface ReferrerField extends GvkSelector {
  path: string[];
}

export interface BackReference {
  target: GvkSelector;
  referrers: ReferrerField[];
}

function at(kind: string, path: string, more: Omit<GvkSelector, 'kind'> = {}): ReferrerField {
  return { kind, ...more, path: path.split(/(?<!\\)\//).map((p) => p.replaceAll('\\/', '/')) };
}

const WORKLOADS = ['Deployment', 'ReplicaSet', 'DaemonSet', 'StatefulSet', 'Job'];

/** The pod spec fields of every kind kustomize lists for ConfigMaps and Secrets, in its order. */
function podFields(fields: string[]): ReferrerField[] {
  return [
    ...fields.map((f) => at('Pod', `spec/${f}`, { version: 'v1' })),
    ...fields.map((f) => at('PodTemplate', `template/spec/${f}`)),
    ...WORKLOADS.flatMap((kind) => fields.map((f) => at(kind, `spec/template/spec/${f}`))),
    ...fields.map((f) => at('CronJob', `spec/jobTemplate/spec/template/spec/${f}`)),
  ];
}

/** One pod spec field of Pod, the workloads with ReplicationController, and CronJob (the later entries' list). */
function podField(field: string): ReferrerField[] {
  return [
    at('Pod', `spec/${field}`),
    ...['StatefulSet', 'Deployment', 'ReplicationController', 'Job', 'DaemonSet'].map((kind) =>
      at(kind, `spec/template/spec/${field}`),
    ),
    at('CronJob', `spec/jobTemplate/spec/template/spec/${field}`),
  ];
}

const RBAC = 'rbac.authorization.k8s.io';
const ADMISSION = 'admissionregistration.k8s.io';

export const NAME_REFERENCES: readonly BackReference[] = [
  ...['Deployment', 'ReplicationController', 'ReplicaSet', 'StatefulSet'].map((kind) => ({
    target: { kind },
    referrers: [at('HorizontalPodAutoscaler', 'spec/scaleTargetRef/name')],
  })),
  {
    target: { version: 'v1', kind: 'ConfigMap' },
    referrers: [
      ...podFields([
        'volumes/configMap/name',
        'containers/env/valueFrom/configMapKeyRef/name',
        'initContainers/env/valueFrom/configMapKeyRef/name',
        'containers/envFrom/configMapRef/name',
        'initContainers/envFrom/configMapRef/name',
        'volumes/projected/sources/configMap/name',
      ]),
      at('Node', 'spec/configSource/configMap'),
      at('Role', 'rules/resourceNames'),
      at('ClusterRole', 'rules/resourceNames'),
      at('Ingress', 'metadata/annotations/nginx.ingress.kubernetes.io\\/fastcgi-params-configmap'),
    ],
  },
  {
    target: { version: 'v1', kind: 'Secret' },
    referrers: [
      ...podFields([
        'volumes/secret/secretName',
        'containers/env/valueFrom/secretKeyRef/name',
        'initContainers/env/valueFrom/secretKeyRef/name',
        'containers/envFrom/secretRef/name',
        'initContainers/envFrom/secretRef/name',
        'imagePullSecrets/name',
        'volumes/projected/sources/secret/name',
      ]),
      at('Ingress', 'spec/tls/secretName'),
      at('Ingress', 'metadata/annotations/ingress.kubernetes.io\\/auth-secret'),
      at('Ingress', 'metadata/annotations/nginx.ingress.kubernetes.io\\/auth-secret'),
      at('Ingress', 'metadata/annotations/nginx.ingress.kubernetes.io\\/auth-tls-secret'),
      at('ServiceAccount', 'imagePullSecrets/name'),
      ...['secretName', 'adminSecretName', 'userSecretName', 'secretRef'].map((p) =>
        at('StorageClass', `parameters/${p}`),
      ),
      at('Role', 'rules/resourceNames'),
      at('ClusterRole', 'rules/resourceNames'),
      at('Service', 'spec/template/spec/containers/env/valueFrom/secretKeyRef/name', {
        group: 'serving.knative.dev',
        version: 'v1',
      }),
      at('PersistentVolume', 'spec/azureFile/secretName'),
    ],
  },
  {
    target: { version: 'v1', kind: 'Service' },
    referrers: [
      at('StatefulSet', 'spec/serviceName', { group: 'apps' }),
      at('Ingress', 'spec/rules/http/paths/backend/serviceName'),
      at('Ingress', 'spec/backend/serviceName'),
      at('Ingress', 'spec/rules/http/paths/backend/service/name'),
      at('Ingress', 'spec/defaultBackend/service/name'),
      at('APIService', 'spec/service/name', { group: 'apiregistration.k8s.io' }),
      at('ValidatingWebhookConfiguration', 'webhooks/clientConfig/service', { group: ADMISSION }),
      at('MutatingWebhookConfiguration', 'webhooks/clientConfig/service', { group: ADMISSION }),
    ],
  },
  { target: { group: RBAC, kind: 'Role' }, referrers: [at('RoleBinding', 'roleRef/name', { group: RBAC })] },
  {
    target: { group: RBAC, kind: 'ClusterRole' },
    referrers: [
      at('RoleBinding', 'roleRef/name', { group: RBAC }),
      at('ClusterRoleBinding', 'roleRef/name', { group: RBAC }),
    ],
  },
  {
    target: { version: 'v1', kind: 'ServiceAccount' },
    referrers: [
      at('RoleBinding', 'subjects', { group: RBAC }),
      at('ClusterRoleBinding', 'subjects', { group: RBAC }),
      ...podField('serviceAccountName'),
    ],
  },
  {
    target: { version: 'v1', kind: 'PersistentVolumeClaim' },
    referrers: podField('volumes/persistentVolumeClaim/claimName'),
  },
  {
    target: { version: 'v1', kind: 'PersistentVolume' },
    referrers: [at('PersistentVolumeClaim', 'spec/volumeName'), at('ClusterRole', 'rules/resourceNames')],
  },
  {
    target: { version: 'v1', group: 'storage.k8s.io', kind: 'StorageClass' },
    referrers: [
      at('PersistentVolume', 'spec/storageClassName'),
      at('PersistentVolumeClaim', 'spec/storageClassName'),
      at('StatefulSet', 'spec/volumeClaimTemplates/spec/storageClassName'),
    ],
  },
  {
    target: { version: 'v1', group: 'scheduling.k8s.io', kind: 'PriorityClass' },
    referrers: podField('priorityClassName'),
  },
  // kustomize's own spec names the group "networking.k8s.io/v1", which no object's group is.
  {
    target: { version: 'v1', group: 'networking.k8s.io/v1', kind: 'IngressClass' },
    referrers: [at('Ingress', 'spec/ingressClassName')],
  },
  {
    target: { group: ADMISSION, kind: 'ValidatingAdmissionPolicy' },
    referrers: [at('ValidatingAdmissionPolicyBinding', 'spec/policyName', { group: ADMISSION })],
  },
];
