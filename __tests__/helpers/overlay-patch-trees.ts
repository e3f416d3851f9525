// Kustomization trees with strategic merge and JSON 6902 patches (inline, from files, by id or by a
// target; patches, patchesStrategicMerge, patchesJson6902) over bases of realistic workloads, for
// the differential tests of the overlay build's patch readers (src/kustomize/overlay-patches.ts).
import { random } from './plain-trees.js';

type Random = ReturnType<typeof random>;

const NAMES = ['web', 'api', 'db'];

/** A Deployment as public repositories write them: containers, env, ports, volumes, probes, resources. */
export function deployment(name: string, extra = ''): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  labels:
    app: ${name}
spec:
  replicas: 1
  selector:
    matchLabels:
      app: ${name}
  template:
    metadata:
      labels:
        app: ${name}
    spec:
      containers:
        - name: ${name}
          image: ghcr.io/example/${name}:1.0.0
          ports:
            - containerPort: 8080
              name: http
          env:
            - name: LOG_LEVEL
              value: info
            - name: PORT
              value: "8080"
          envFrom:
            - configMapRef:
                name: ${name}-config
          readinessProbe:
            httpGet:
              path: /healthz
              port: http
          resources:
            requests:
              cpu: 100m
              memory: 64Mi
          volumeMounts:
            - name: data
              mountPath: /data
      volumes:
        - name: data
          emptyDir: {}
${extra}`;
}

const service = (name: string) =>
  `apiVersion: v1\nkind: Service\nmetadata:\n  name: ${name}\nspec:\n  selector:\n    app: ${name}\n  ports:\n    - name: http\n      port: 80\n      targetPort: http\n`;
const configMap = (name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}-config\ndata:\n  mode: base\n`;
const widget = (name: string) =>
  `apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: ${name}\nspec:\n  items:\n    - name: a\n      size: 1\n    - name: b\n      size: 2\n`;

/** The body of a strategic merge patch on Deployment `name` (after its metadata). */
function deploymentPatch(r: Random, name: string): string {
  const container = r.pick([name, name, 'sidecar']);
  const parts = [
    () => `  replicas: ${r.pick(['3', '5'])}\n`,
    () =>
      `  template:\n    spec:\n      containers:\n        - name: ${container}\n          resources:\n            limits:\n              memory: ${r.pick(['128Mi', '256Mi'])}\n`,
    () =>
      `  template:\n    spec:\n      containers:\n        - name: ${container}\n          env:\n            - name: ${r.pick(['LOG_LEVEL', 'NEW', 'PORT'])}\n              value: ${r.pick(['debug', '"1"'])}\n${r.chance(0.4) ? '            - name: EXTRA\n              value: x\n' : ''}`,
    () =>
      `  template:\n    spec:\n      containers:\n        - name: ${container}\n          image: ghcr.io/example/${name}:${r.pick(['2.0.0', '1.1.0'])}\n`,
    () =>
      `  template:\n    spec:\n      containers:\n        - name: sidecar\n          image: busybox:1.36\n          args: [${r.pick(['sleep, "3600"', 'sh'])}]\n`,
    () =>
      `  template:\n    spec:\n      volumes:\n        - name: ${r.pick(['data', 'cache'])}\n          ${r.pick(['emptyDir: {medium: Memory}', 'configMap: {name: extra}'])}\n`,
    () =>
      `  template:\n    spec:\n      containers:\n        - name: ${container}\n          ports:\n            - containerPort: ${r.pick(['8080', '9090'])}\n              name: ${r.pick(['http', 'metrics'])}\n`,
    () =>
      `  template:\n    spec:\n      tolerations:\n        - key: dedicated\n          operator: Exists\n      nodeSelector:\n        pool: ${r.pick(['a', 'b'])}\n`,
    () => `  template:\n    metadata:\n      annotations:\n        note: ${r.pick(['x', '"y"'])}\n`,
  ];
  return `spec:\n${r.pick(parts)()}`;
}

function smp(r: Random, kind: 'Deployment' | 'Service' | 'ConfigMap' | 'Widget', name: string): string {
  const head = (apiVersion: string, n: string) =>
    `apiVersion: ${apiVersion}\nkind: ${kind}\nmetadata:\n  name: ${n}\n${r.chance(0.2) ? '  labels:\n    patched: "true"\n' : ''}${r.chance(0.1) ? '  namespace: other\n' : ''}`;
  switch (kind) {
    case 'Deployment':
      return head('apps/v1', name) + deploymentPatch(r, name);
    case 'Service':
      return (
        head('v1', name) +
        `spec:\n  ports:\n    - port: ${r.pick(['80', '443'])}\n      ${r.pick(['targetPort: 8443', 'name: https'])}\n`
      );
    case 'ConfigMap':
      return head('v1', `${name}-config`) + `data:\n  mode: ${r.pick(['prod', '"1"'])}\n`;
    default:
      return head('example.com/v1', name) + `spec:\n  items:\n    - name: b\n      size: 3\n`;
  }
}

const indent = (text: string, n: number) =>
  text
    .split('\n')
    .map((l) => (l === '' ? l : ' '.repeat(n) + l))
    .join('\n');

/**
 * A random tree: a base per app (Deployment, Service, ConfigMap, sometimes a custom resource), an
 * overlay `ov` over them with a namespace here and there and patches of every form, some in files
 * in a subdirectory; a few that kustomize refuses (a missing file, an id nothing has).
 */
export function randomPatchTree(seed: number): Record<string, string> {
  const r = random(seed);
  const files: Record<string, string> = {};
  const apps = NAMES.slice(0, 1 + r.int(3));
  for (const app of apps) {
    const docs = [deployment(app), service(app), configMap(app), ...(r.chance(0.3) ? [widget(app)] : [])];
    files[`base/${app}/resources.yaml`] = docs.join('---\n');
    const ns = r.chance(0.3) ? `namespace: ${app}-ns\n` : '';
    files[`base/${app}/kustomization.yaml`] = `${ns}resources:\n  - resources.yaml\n`;
  }
  const patches: string[] = [];
  const psm: string[] = [];
  const json: string[] = [];
  for (let i = 0; i < 1 + r.int(4); i++) {
    const app = r.chance(0.05) ? 'missing' : r.pick(apps);
    const kind = r.pick(['Deployment', 'Deployment', 'Service', 'ConfigMap', 'Widget'] as const);
    const text = smp(r, kind, app);
    const form = r.int(6);
    if (form === 0) patches.push(`  - patch: |-\n${indent(text, 6)}\n`);
    else if (form === 1) {
      files[`ov/patches/p${i}.yaml`] = text;
      patches.push(`  - path: patches/p${i}.yaml\n`);
    } else if (form === 2) {
      files[`ov/p${i}.yaml`] = text;
      psm.push(`  - p${i}.yaml\n`);
    } else if (form === 3) {
      files[`ov/t${i}.yaml`] = text;
      const target = r.pick([
        `kind: ${kind}`,
        `name: ${app}`,
        `labelSelector: app=${app}`,
        `kind: ${kind}\n      name: ${r.pick(apps)}`,
      ]);
      patches.push(`  - path: t${i}.yaml\n    target:\n      ${target}\n`);
    } else if (form === 4) {
      const ops = `- op: ${r.pick(['add', 'replace'])}\n  path: /spec/replicas\n  value: ${r.pick(['2', '4'])}\n`;
      files[`ov/j${i}.yaml`] = ops;
      if (r.chance(0.5))
        json.push(
          `  - target:\n      group: apps\n      version: v1\n      kind: Deployment\n      name: ${app}\n    path: j${i}.yaml\n`,
        );
      else patches.push(`  - path: j${i}.yaml\n    target:\n      kind: Deployment\n      name: ${app}\n`);
    } else {
      patches.push(`  - path: ${r.chance(0.5) ? 'absent.yaml' : `../base/${app}/resources.yaml`}\n`);
    }
  }
  const ns = r.chance(0.4) ? 'namespace: prod\n' : '';
  const labels = r.chance(0.3) ? 'labels:\n  - pairs:\n      env: prod\n' : '';
  const list = (field: string, items: string[]) => (items.length > 0 ? `${field}:\n${items.join('')}` : '');
  files['ov/kustomization.yaml'] =
    `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n${ns}resources:\n${apps.map((a) => `  - ../base/${a}\n`).join('')}${labels}${list('patches', patches)}${list('patchesStrategicMerge', psm)}${list('patchesJson6902', json)}`;
  return files;
}
