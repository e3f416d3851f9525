// Kustomization trees (overlays over bases) for the differential tests of the overlay build
// (src/kustomize/overlay.ts): the benchmark's overlay shape, and random trees from a seed with the
// fields, kinds, targets, operations and values kustomize might treat otherwise.
import { random } from './plain-trees.js';

type Random = ReturnType<typeof random>;

/** bench/overlay/run.sh's tree: N ConfigMaps in a base; an overlay with a Namespace, namespace:, a label and a JSON patch. */
export function overlayTree(n: number, ns = 'kr-overlay'): Record<string, string> {
  const files: Record<string, string> = {};
  const list: string[] = [];
  for (let i = 0; i < n; i++) {
    list.push(`- cm-${i}.yaml`);
    files[`base/cm-${i}.yaml`] =
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-${i}\ndata:\n  generation: "1"\n  app.properties: |\n    x=cm-${i}\n    y=${'v'.repeat(64)}\n`;
  }
  files['base/kustomization.yaml'] =
    `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n${list.join('\n')}\n`;
  files['overlay/ns.yaml'] = `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${ns}\n`;
  files['overlay/kustomization.yaml'] = `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: ${ns}
labels:
  - pairs:
      bench: overlay
resources:
  - ns.yaml
  - ../base
patches:
  - target:
      kind: ConfigMap
    patch: |-
      - op: add
        path: /data/overlay
        value: "yes"
`;
  return files;
}

const KINDS: [apiVersion: string, kind: string, body: (r: Random, name: string) => string][] = [
  ['v1', 'ConfigMap', (r) => `data:\n  a: "1"\n  b: ${r.pick(['x', '"y"', "'z'", 'long text'])}\n`],
  ['v1', 'Secret', () => `type: Opaque\nstringData:\n  k: v\n`],
  ['v1', 'Service', () => `spec:\n  ports:\n    - port: 80\n      targetPort: 8080\n  selector:\n    app: web\n`],
  [
    'apps/v1',
    'Deployment',
    (_r, name) =>
      `spec:\n  replicas: 1\n  selector:\n    matchLabels:\n      app: ${name}\n  template:\n    metadata:\n      labels:\n        app: ${name}\n    spec:\n      containers:\n        - name: c\n          image: nginx:1.27\n`,
  ],
  ['example.com/v1', 'Widget', () => `spec:\n  size: 3\n`],
  ['cert-manager.io/v1', 'ClusterIssuer', () => `spec:\n  selfSigned: {}\n`],
  ['rbac.authorization.k8s.io/v1', 'ClusterRole', () => `rules: []\n`],
  [
    'v1',
    'PersistentVolume',
    () => `spec:\n  capacity:\n    storage: 1Gi\n  accessModes: [ReadWriteOnce]\n  hostPath:\n    path: /tmp/x\n`,
  ],
  ['storage.k8s.io/v1', 'StorageClass', () => `provisioner: example.com/x\n`],
  ['networking.k8s.io/v1', 'Ingress', () => `spec:\n  rules: []\n`],
  ['batch/v1', 'Job', () => `spec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: []\n`],
  ['v1', 'Namespace', () => ''],
  ['apiextensions.k8s.io/v1', 'CustomResourceDefinition', () => `spec:\n  group: example.com\n  scope: Namespaced\n`],
  [
    'rbac.authorization.k8s.io/v1',
    'RoleBinding',
    () =>
      `roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: Role\n  name: r\nsubjects:\n  - kind: ServiceAccount\n    name: default\n`,
  ],
  ['policy/v1', 'PodDisruptionBudget', () => `spec:\n  maxUnavailable: 1\n`],
  ['v1', 'Event', () => `reason: x\n`],
];

const NAMES = ['a', 'b', 'web', 'cm-1', 'x.y', 'xay', 'db', 'z9'];
const WORDS = [
  'alpha',
  '"quoted"',
  "'single'",
  'yes',
  '"yes"',
  'on',
  '"007"',
  '007',
  '1.0',
  'true',
  '"true"',
  '12',
  'two words',
  'null',
];

function object(r: Random, used: Set<string>): string | undefined {
  const [apiVersion, kind, body] = r.pick(KINDS.slice(0, r.chance(0.15) ? KINDS.length : 11));
  const name = r.pick(NAMES);
  const key = `${kind}/${name}`;
  if (used.has(key) && !r.chance(0.05)) return undefined;
  used.add(key);
  const ns = r.chance(0.25) ? `  namespace: ${r.pick(['one', 'two'])}\n` : '';
  const labels = r.chance(0.4) ? `  labels:\n    app: ${r.pick(['web', 'db', '"1"'])}\n` : '';
  const annotations = r.chance(0.2) ? `  annotations:\n    note: ${r.pick(['x', '"y"'])}\n` : '';
  return `apiVersion: ${apiVersion}\nkind: ${kind}\nmetadata:\n  name: ${name}\n${ns}${labels}${annotations}${body(r, name)}`;
}

function target(r: Random): string {
  const fields = r.pick([
    [['kind', r.pick(['ConfigMap', 'Deployment', 'Widget', 'Config.*', 'Service', 'Namespace'])]],
    [['name', r.pick(NAMES)]],
    [
      ['kind', r.pick(['ConfigMap', 'Deployment'])],
      ['name', r.pick(NAMES)],
    ],
    [['group', r.pick(['apps', 'example.com', 'exampleXcom'])]],
    [['version', r.pick(['v1', 'v2'])]],
    [['namespace', 'one']],
    [['labelSelector', 'app=web']],
  ]);
  return fields.map(([k, v]) => `      ${k}: ${v}\n`).join('');
}

function op(r: Random): string {
  const value = () =>
    r.pick([
      `"${r.pick(['v', 'yes', '1'])}"`,
      r.pick(WORDS),
      '3',
      'true',
      '{a: b}',
      '\n          k: v',
      '[1, 2]',
      '\n          - x',
    ]);
  return r.pick([
    () => `- op: add\n        path: /metadata/labels/${r.pick(['x', 'app', 'a~1b'])}\n        value: ${value()}\n`,
    () => `- op: add\n        path: /metadata/annotations/${r.pick(['n', 'note'])}\n        value: ${value()}\n`,
    () => `- op: add\n        path: /data/${r.pick(['a', 'k', 'new'])}\n        value: ${value()}\n`,
    () => `- op: replace\n        path: /data/${r.pick(['a', 'k'])}\n        value: ${value()}\n`,
    () =>
      `- op: remove\n        path: /${r.pick(['data/a', 'data/b', 'metadata/labels/app', 'metadata/annotations/note', 'spec'])}\n`,
    () =>
      `- op: add\n        path: /spec/ports/${r.pick(['-', '0', '1', '5', '01'])}\n        value:\n          port: 81\n`,
    () => `- op: replace\n        path: /spec/replicas\n        value: ${r.pick(['2', '"2"'])}\n`,
    () =>
      `- op: add\n        path: /spec/template/spec/containers/0/env\n        value:\n          - name: A\n            value: "1"\n`,
    () => `- op: add\n        path: /metadata/namespace\n        value: ${r.pick(['three', '"one"'])}\n`,
    () =>
      `- op: ${r.pick(['test', 'move', 'copy'])}\n        path: /data/a\n        ${r.pick(['value: "1"', 'from: /data/b'])}\n`,
    () => `- op: add\n        path: /metadata/name\n        value: renamed\n`,
    () =>
      `- op: ${r.pick(['add', 'replace'])}\n        path: /metadata/${r.pick(['annotations', 'labels'])}\n        value: {k: v}\n`,
  ])();
}

function patches(r: Random): string {
  const n = r.int(3);
  let out = n > 0 ? 'patches:\n' : '';
  for (let i = 0; i < n; i++) {
    const ops = Array.from({ length: 1 + r.int(2) }, () => `      ${op(r)}`).join('');
    out += `  - target:\n${target(r)}    patch: |-\n${ops}`;
  }
  return out;
}

function labels(r: Random): string {
  const n = r.int(3);
  if (n === 0) return '';
  let out = 'labels:\n';
  for (let i = 0; i < n; i++) {
    out += `  - pairs:\n      ${r.pick(['team', 'app', 'tier', 'a.b/c'])}: ${r.pick(WORDS.slice(0, 8))}\n`;
    if (r.chance(0.15)) out += `    includeSelectors: ${r.pick(['false', 'true'])}\n`;
  }
  return out;
}

/**
 * A random overlay tree: up to three bases (one may list another), each of files of objects of
 * many kinds, with namespace, labels and patches here and there, and an overlay `ov` over them.
 */
export function randomOverlay(seed: number): Record<string, string> {
  const r = random(seed);
  const used = new Set<string>();
  const files: Record<string, string> = {};
  const bases = 1 + r.int(3);
  for (let b = 0; b < bases; b++) {
    const resources: string[] = [];
    for (let f = 0; f < 1 + r.int(3); f++) {
      const docs = Array.from({ length: 1 + r.int(3) }, () => object(r, used)).filter((d) => d !== undefined);
      if (docs.length === 0) continue;
      files[`base${b}/f${f}.yaml`] = docs.join('---\n');
      resources.push(`f${f}.yaml`);
    }
    if (b > 0 && r.chance(0.3)) resources.push(`../base${b - 1}`);
    if (resources.length === 0) resources.push(`f0.yaml`);
    if (!files[`base${b}/f0.yaml`])
      files[`base${b}/f0.yaml`] = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: base${b}\n`;
    const ns = r.chance(0.3) ? `namespace: ${r.pick(['one', 'b-ns'])}\n` : '';
    const head = r.chance(0.5) ? 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n' : '';
    files[`base${b}/kustomization.yaml`] =
      `${head}${ns}resources:\n${resources.map((x) => `  - ${x}\n`).join('')}${r.chance(0.3) ? labels(r) : ''}${r.chance(0.3) ? patches(r) : ''}`;
  }
  const own = object(r, used);
  const resources = [
    ...(own ? ['own.yaml'] : []),
    ...Array.from({ length: bases }, (_, b) => `../base${b}`).filter(() => r.chance(0.7)),
  ];
  if (own) files['ov/own.yaml'] = own;
  if (resources.length === 0) resources.push('../base0');
  const ns = r.chance(0.6) ? `namespace: ${r.pick(['prod', 'one'])}\n` : '';
  files['ov/kustomization.yaml'] =
    `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n${ns}resources:\n${resources.map((x) => `  - ${x}\n`).join('')}${labels(r)}${patches(r)}`;
  return files;
}
