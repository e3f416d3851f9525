// Kustomization trees for the differential tests of the overlay build's label, annotation, replica
// and image transformers (src/kustomize/overlay-labels.ts, overlay-replicas.ts, overlay-images.ts):
// workloads as repositories write them, and random overlays from a seed combining commonLabels,
// labels, commonAnnotations, replicas and images with resources, bases, namespace and patches.
import { random } from './plain-trees.js';

type Random = ReturnType<typeof random>;

/** A pod spec as a real Deployment's: init container, probes, env, envFrom, resources, volumes. */
export function podSpec(indent: string, image = 'ghcr.io/stefanprodan/podinfo:6.5.0', extra = ''): string {
  return `${[
    'affinity:',
    '  podAntiAffinity:',
    '    preferredDuringSchedulingIgnoredDuringExecution:',
    '      - weight: 100',
    '        podAffinityTerm:',
    '          topologyKey: kubernetes.io/hostname',
    '          labelSelector:',
    '            matchLabels:',
    '              app: web',
    'topologySpreadConstraints:',
    '  - maxSkew: 1',
    '    topologyKey: topology.kubernetes.io/zone',
    '    whenUnsatisfiable: ScheduleAnyway',
    '    labelSelector:',
    '      matchLabels:',
    '        app: web',
    'initContainers:',
    '  - name: init',
    '    image: busybox:1.36',
    '    command: ["sh", "-c", "true"]',
    'containers:',
    '  - name: web',
    `    image: ${image}`,
    '    ports:',
    '      - name: http',
    '        containerPort: 9898',
    '        protocol: TCP',
    '    env:',
    '      - name: LOG_LEVEL',
    '        value: info',
    '      - name: FROM_CM',
    '        valueFrom:',
    '          configMapKeyRef:',
    '            name: web-config',
    '            key: level',
    '    envFrom:',
    '      - configMapRef:',
    '          name: web-config',
    '    livenessProbe:',
    '      httpGet:',
    '        path: /healthz',
    '        port: http',
    '      initialDelaySeconds: 5',
    '    readinessProbe:',
    '      httpGet:',
    '        path: /readyz',
    '        port: http',
    '    resources:',
    '      limits:',
    '        memory: 256Mi',
    '      requests:',
    '        cpu: 100m',
    '        memory: 64Mi',
    '    volumeMounts:',
    '      - name: data',
    '        mountPath: /data',
    '  - name: sidecar',
    '    image: docker.io/library/nginx:1.25@sha256:0123abcd',
    'volumes:',
    '  - name: data',
    '    emptyDir: {}',
    '  - name: config',
    '    configMap:',
    '      name: web-config',
  ]
    .map((l) => `${indent}${l}`)
    .join('\n')}\n${extra}`;
}

/** A Deployment `name` labelled app: web, with a full pod spec. */
export function deployment(name = 'web', image?: string): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  labels:
    app: web
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
      annotations:
        prometheus.io/scrape: "true"
    spec:
${podSpec('      ', image)}`;
}

export const SERVICE = `apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  type: ClusterIP
  selector:
    app: web
  ports:
    - name: http
      port: 80
      targetPort: http
`;

export const CONFIGMAP = `apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
data:
  level: info
`;

/** Workloads and selectors of every kind the field specs name, and some they do not. */
export const KINDS: Record<string, string> = {
  deployment: deployment(),
  service: SERVICE,
  configmap: CONFIGMAP,
  statefulset: `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  serviceName: db
  selector:
    matchLabels:
      app: db
  template:
    metadata:
      labels:
        app: db
    spec:
      containers:
        - name: db
          image: postgres:16
  volumeClaimTemplates:
    - metadata:
        name: data
      spec:
        accessModes: ["ReadWriteOnce"]
        resources:
          requests:
            storage: 1Gi
    - metadata:
        name: wal
        labels:
          tier: wal
      spec:
        accessModes: ["ReadWriteOnce"]
`,
  daemonset: `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels:
      app: agent
  template:
    metadata:
      labels:
        app: agent
    spec:
      containers:
        - name: agent
          image: quay.io/prometheus/node-exporter:v1.8.0
`,
  cronjob: `apiVersion: batch/v1
kind: CronJob
metadata:
  name: backup
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
            - name: backup
              image: postgres:16
`,
  job: `apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: migrate
          image: ghcr.io/example/migrate:v2
`,
  pdb: `apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: web
spec:
  minAvailable: 1
  selector:
    matchLabels:
      app: web
`,
  netpol: `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: web
spec:
  podSelector:
    matchLabels:
      app: web
  ingress:
    - from:
        - podSelector:
            matchLabels:
              app: frontend
        - namespaceSelector:
            matchLabels:
              team: a
        - ipBlock:
            cidr: 10.0.0.0/8
  egress:
    - to:
        - podSelector: {}
  policyTypes: ["Ingress", "Egress"]
`,
  hpa: `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: web
  minReplicas: 2
  maxReplicas: 4
`,
  ingress: `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
spec:
  rules:
    - host: web.example.com
      http:
        paths:
          - path: /
            pathType: Prefix
            backend:
              service:
                name: web
                port:
                  name: http
`,
  pod: `apiVersion: v1
kind: Pod
metadata:
  name: debug
spec:
  containers:
    - name: debug
      image: busybox
  volumes:
    - name: tools
      image:
        reference: ghcr.io/example/tools:1.0
        pullPolicy: IfNotPresent
`,
  rollout: `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: canary
spec:
  selector:
    matchLabels:
      app: canary
  template:
    metadata:
      labels:
        app: canary
    spec:
      containers:
        - name: app
          image: nginx:1.25
`,
  knative: `apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: hello
spec:
  template:
    spec:
      containers:
        - image: ghcr.io/knative/helloworld-go:latest
`,
  widget: `apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
spec:
  size: 3
`,
  crd: `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    kind: Widget
    plural: widgets
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
`,
  rc: `apiVersion: v1
kind: ReplicationController
metadata:
  name: legacy
spec:
  replicas: 1
  selector:
    app: legacy
  template:
    metadata:
      labels:
        app: legacy
    spec:
      containers:
        - name: legacy
          image: nginx
`,
  replicaset: `apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: rs
spec:
  selector:
    matchLabels:
      app: rs
  template:
    metadata:
      labels:
        app: rs
    spec:
      containers:
        - name: rs
          image: nginx:1.25
`,
  namespace: `apiVersion: v1
kind: Namespace
metadata:
  name: apps
`,
};

const LABEL_KEYS = ['app', 'team', 'app.kubernetes.io/part-of', 'env', 'tier'];
const VALUES = ['prod', '"yes"', "'1'", 'web', '""', 'a.b-c_d', '"true"', 'v1.2'];
const IMAGE_NAMES = ['nginx', 'postgres', 'busybox', 'ghcr.io/stefanprodan/podinfo', 'docker.io/library/nginx', 'ngin'];

function pairs(r: Random, indent: string): string {
  const n = 1 + r.int(3);
  return Array.from({ length: n }, () => `${indent}${r.pick(LABEL_KEYS)}: ${r.pick(VALUES)}\n`)
    .filter((l, i, all) => all.findIndex((x) => x.split(':')[0] === l.split(':')[0]) === i)
    .join('');
}

function labels(r: Random): string {
  let out = '';
  if (r.chance(0.5)) {
    out += 'labels:\n';
    for (let i = 0; i < 1 + r.int(2); i++) {
      out += `  - pairs:\n${pairs(r, '      ')}`;
      if (r.chance(0.5)) out += `    includeSelectors: ${r.pick(['true', 'false'])}\n`;
      if (r.chance(0.5)) out += `    includeTemplates: ${r.pick(['true', 'false'])}\n`;
      if (r.chance(0.15)) {
        const [path, kind] = r.pick([
          ['spec/template/metadata/labels', 'Deployment'],
          ['metadata/labels', 'Service'],
          ['spec/selector/matchLabels', 'Rollout'],
          ['"spec/volumeClaimTemplates[]/metadata/labels"', 'StatefulSet'],
        ]);
        out += `    fields:\n      - path: ${path}\n        kind: ${kind}\n        create: ${r.pick(['true', 'false'])}\n`;
      }
    }
  }
  if (r.chance(0.5)) out += `commonLabels:\n${pairs(r, '  ')}`;
  if (r.chance(0.4)) out += `commonAnnotations:\n${pairs(r, '  ').replaceAll('app.kubernetes.io/part-of', 'note')}`;
  return out;
}

function images(r: Random): string {
  if (!r.chance(0.5)) return '';
  let out = 'images:\n';
  for (let i = 0; i < 1 + r.int(3); i++) {
    out += `  - name: ${r.pick(IMAGE_NAMES)}\n`;
    if (r.chance(0.4))
      out += `    newName: ${r.pick(['registry.example.com:5000/mirror/nginx', 'postgres', 'quay.io/x/y'])}\n`;
    const t = r.int(4);
    if (t === 1 || t === 3) out += `    newTag: ${r.pick(['"1.27"', 'v2', 'latest', '"16"'])}\n`;
    if (t === 2 || t === 3) out += `    digest: sha256:${r.pick(['abc123', 'ffff'])}\n`;
  }
  return out;
}

function replicas(r: Random, names: readonly string[]): string {
  if (!r.chance(0.4)) return '';
  return `replicas:\n${Array.from({ length: 1 + r.int(2) }, () => `  - name: ${r.pick(names)}\n    count: ${r.int(5)}\n`).join('')}`;
}

function patches(r: Random): string {
  if (!r.chance(0.3)) return '';
  return `patches:\n  - target:\n      kind: ${r.pick(['Deployment', 'DaemonSet', 'StatefulSet'])}\n    patch: |-\n      - op: add\n        path: /spec/template/metadata/labels/${r.pick(['patched', 'app'])}\n        value: "yes"\n`;
}

/** The workloads of KINDS whose replicas kustomize sets, by name. */
const PRESENT: Record<string, string> = { deployment: 'web', statefulset: 'db', rc: 'legacy', replicaset: 'rs' };

/**
 * A random tree: one or two bases of workload files (some with their own transformer fields), an
 * overlay `ov` with namespace, labels, commonLabels, commonAnnotations, replicas, images, patches.
 */
export function randomFieldsOverlay(seed: number): Record<string, string> {
  const r = random(seed);
  const files: Record<string, string> = {};
  const kinds = Object.keys(KINDS);
  const used = new Set<string>();
  const bases = 1 + r.int(2);
  for (let b = 0; b < bases; b++) {
    const resources: string[] = [];
    for (let f = 0; f < 1 + r.int(4); f++) {
      const kind = r.pick(kinds);
      if (used.has(kind)) continue;
      used.add(kind);
      files[`base${b}/${kind}.yaml`] = KINDS[kind]!;
      resources.push(`${kind}.yaml`);
    }
    if (resources.length === 0) {
      files[`base${b}/cm.yaml`] = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: base${b}\n`;
      resources.push('cm.yaml');
    }
    const mine = Object.entries(PRESENT)
      .filter(([kind]) => resources.includes(`${kind}.yaml`))
      .map(([, name]) => name);
    const own = r.chance(0.3) ? labels(r) + images(r) + (mine.length > 0 ? replicas(r, mine) : '') : '';
    files[`base${b}/kustomization.yaml`] =
      `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n${resources.map((x) => `  - ${x}\n`).join('')}${own}`;
  }
  const ns = r.chance(0.5) ? `namespace: ${r.pick(['prod', 'staging'])}\n` : '';
  const names = Object.entries(PRESENT)
    .filter(([kind]) => used.has(kind))
    .map(([, name]) => name);
  // A name no object has now and then (kustomize fails).
  if (r.chance(0.05)) names.push('missing');
  files['ov/kustomization.yaml'] =
    `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n${ns}resources:\n${Array.from({ length: bases }, (_, b) => `  - ../base${b}\n`).join('')}${labels(r)}${names.length > 0 ? replicas(r, names) : ''}${images(r)}${patches(r)}`;
  return files;
}
