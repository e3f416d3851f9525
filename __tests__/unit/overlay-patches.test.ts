// The overlay build's patch readers (src/kustomize/overlay-patches.ts, overlay-smp.ts) against the
// real kustomize: strategic merge patches (inline, from files, by id or by a target;
// patchesStrategicMerge) and JSON 6902 patches from files (patches, patchesJson6902). Named cases
// say which way each went, and where the overlay build answers, that answer is kustomize's; random
// trees of realistic workloads check the same over many combinations.
import { describe, expect, it } from 'vitest';
import type { SpecFields } from '../../src/kustomize/kustomization.js';
import { buildOverlay } from '../../src/kustomize/overlay.js';
import { mapLimit } from '../../src/util/concurrency.js';
import { expectKustomizesAnswer } from '../helpers/differential.js';
import { heavyFile } from '../helpers/heavy.js';
import { deployment, randomPatchTree } from '../helpers/overlay-patch-trees.js';
import { tempTree } from '../helpers/plain-trees.js';

heavyFile();

async function differential(files: Record<string, string>, spec: SpecFields = {}): Promise<'overlay' | 'kustomize'> {
  const root = await tempTree('kr-patches-', files);
  const fast = await buildOverlay(root, 'ov', spec);
  if (fast === undefined) return 'kustomize';
  await expectKustomizesAnswer(fast, root, 'ov', root, spec);
  return 'overlay';
}

const k = (body: string) => `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n${body}`;
const cm = (name: string, extra = '') => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n${extra}`;
const head = (apiVersion: string, kind: string, name: string, meta = '') =>
  `apiVersion: ${apiVersion}\nkind: ${kind}\nmetadata:\n  name: ${name}\n${meta}`;
const base = { 'b/kustomization.yaml': 'resources:\n- app.yaml\n', 'b/app.yaml': deployment('web') };
const inline = (text: string) => `- patch: |-\n${text.replace(/^/gm, '    ')}\n`;

const PATCH_DEPLOY = `${head('apps/v1', 'Deployment', 'web')}spec:
  replicas: 3
  template:
    spec:
      containers:
        - name: web
          image: ghcr.io/example/web:2.0.0
          env:
            - name: LOG_LEVEL
              value: debug
            - name: NEW
              value: "1"
          resources:
            limits:
              memory: 256Mi
        - name: sidecar
          image: busybox:1.36
          args: [sleep, "3600"]
      volumes:
        - name: cache
          emptyDir: {}
`;

describe('strategic merge and JSON patches, differential against kustomize', () => {
  it.each<[string, 'overlay' | 'kustomize', Record<string, string>, SpecFields?]>([
    [
      'an overlay patch file on a Deployment: replicas, image, env, resources, an extra container and volume',
      'overlay',
      {
        ...base,
        'ov/kustomization.yaml': k('resources:\n- ../b\npatches:\n- path: patches/web.yaml\n'),
        'ov/patches/web.yaml': PATCH_DEPLOY,
      },
    ],
    [
      'the same as patchesStrategicMerge',
      'overlay',
      {
        ...base,
        'ov/kustomization.yaml': k('resources:\n- ../b\npatchesStrategicMerge:\n- web.yaml\n'),
        'ov/web.yaml': PATCH_DEPLOY,
      },
    ],
    [
      'inline, with a namespace set by the overlay (patches run first)',
      'overlay',
      { ...base, 'ov/kustomization.yaml': k(`namespace: prod\nresources:\n- ../b\npatches:\n${inline(PATCH_DEPLOY)}`) },
    ],
    [
      'the base set a namespace: a patch without one finds it by its id before',
      'overlay',
      {
        'b/kustomization.yaml': 'namespace: apps\nresources:\n- app.yaml\n',
        'b/app.yaml': deployment('web'),
        'ov/kustomization.yaml': k('resources:\n- ../b\npatchesStrategicMerge:\n- web.yaml\n'),
        'ov/web.yaml': `${head('apps/v1', 'Deployment', 'web')}spec:\n  replicas: 2\n`,
      },
    ],
    [
      'the base set a namespace: a patch with it',
      'overlay',
      {
        'b/kustomization.yaml': 'namespace: apps\nresources:\n- app.yaml\n',
        'b/app.yaml': deployment('web'),
        'ov/kustomization.yaml': k(
          `resources:\n- ../b\npatches:\n${inline(`${head('apps/v1', 'Deployment', 'web', '  namespace: apps\n')}spec:\n  replicas: 2\n`)}`,
        ),
      },
    ],
    [
      'labels and annotations of the patch merge; its namespace does not (with a target)',
      'overlay',
      {
        ...base,
        'ov/kustomization.yaml': k(
          `resources:\n- ../b\npatches:\n- target:\n    kind: Deployment\n  patch: |-\n${`${head('apps/v1', 'Deployment', 'other', '  namespace: zzz\n  labels:\n    tier: web\n  annotations:\n    a: b\n')}spec:\n  paused: true\n`.replace(/^/gm, '    ')}\n`,
        ),
      },
    ],
    [
      'a target by label selector over several kinds of objects',
      'overlay',
      {
        'b/kustomization.yaml': 'resources:\n- app.yaml\n',
        'b/app.yaml': [deployment('web'), deployment('api')].join('---\n'),
        'ov/kustomization.yaml': k(
          'resources:\n- ../b\npatches:\n- path: p.yaml\n  target:\n    labelSelector: app=api\n',
        ),
        'ov/p.yaml': `${head('apps/v1', 'Deployment', 'any')}spec:\n  replicas: 7\n`,
      },
    ],
    [
      'merged lists: new elements first, then the others; ports, volume mounts, finalizers',
      'overlay',
      {
        ...base,
        'ov/kustomization.yaml': k(
          `resources:\n- ../b\npatches:\n${inline(`${head('apps/v1', 'Deployment', 'web', '  finalizers: [one, two]\n')}spec:\n  template:\n    spec:\n      containers:\n        - name: first\n          image: a\n        - name: web\n          ports:\n            - containerPort: 9090\n              name: metrics\n          volumeMounts:\n            - name: cache\n              mountPath: /cache\n      imagePullSecrets:\n        - name: regcred\n`)}`,
        ),
      },
    ],
    [
      'lists without merge keys are replaced (tolerations, args, a custom resource’s lists)',
      'overlay',
      {
        'b/kustomization.yaml': 'resources:\n- app.yaml\n',
        'b/app.yaml': [
          deployment('web').replace('          resources:', '          args: [a, b]\n          resources:'),
          'apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  items:\n    - name: a\n      size: 1\n    - name: b\n      size: 2\n',
        ].join('---\n'),
        'ov/kustomization.yaml': k(
          `resources:\n- ../b\npatches:\n${inline(`${head('apps/v1', 'Deployment', 'web')}spec:\n  template:\n    spec:\n      containers:\n        - name: web\n          args: [c]\n      tolerations:\n        - key: k\n          operator: Exists\n`)}${inline(`${head('example.com/v1', 'Widget', 'w')}spec:\n  items:\n    - name: b\n      size: 3\n`)}`,
        ),
      },
    ],
    [
      'a Service port merged by port',
      'overlay',
      {
        'b/kustomization.yaml': 'resources:\n- s.yaml\n',
        'b/s.yaml': `${head('v1', 'Service', 's')}spec:\n  ports:\n    - name: http\n      port: 80\n      targetPort: 8080\n`,
        'ov/kustomization.yaml': k(
          `resources:\n- ../b\npatches:\n${inline(`${head('v1', 'Service', 's')}spec:\n  type: LoadBalancer\n  ports:\n    - port: 80\n      targetPort: 9090\n    - name: https\n      port: 443\n`)}`,
        ),
      },
    ],
    [
      'JSON 6902 patches from files: patches and patchesJson6902 (after the labels)',
      'overlay',
      {
        ...base,
        'ov/kustomization.yaml': k(
          'resources:\n- ../b\nlabels:\n- pairs:\n    env: prod\npatches:\n- path: ops.yaml\n  target:\n    kind: Deployment\npatchesJson6902:\n- target:\n    group: apps\n    version: v1\n    kind: Deployment\n    name: web\n  path: ops.json\n',
        ),
        'ov/ops.yaml': '- op: replace\n  path: /spec/replicas\n  value: 4\n',
        'ov/ops.json': '[{"op": "add", "path": "/metadata/labels/json", "value": "yes"}]\n',
      },
    ],
    [
      'several patches on one object, in order',
      'overlay',
      {
        'ov/kustomization.yaml': k(
          `resources:\n- a.yaml\npatchesStrategicMerge:\n- p1.yaml\npatches:\n${inline(`${head('v1', 'ConfigMap', 'a')}data:\n  x: second\n`)}- target:\n    name: a\n  patch: |-\n    - op: replace\n      path: /data/x\n      value: third\n`,
        ),
        'ov/a.yaml': cm('a', 'data:\n  x: base\n'),
        'ov/p1.yaml': `${head('v1', 'ConfigMap', 'a')}data:\n  x: first\n  z: only\n`,
      },
    ],
    [
      'a target that selects nothing',
      'overlay',
      {
        ...base,
        'ov/kustomization.yaml': k(
          `resources:\n- ../b\npatches:\n- target:\n    kind: StatefulSet\n  patch: |-\n${PATCH_DEPLOY.replace(/^/gm, '    ')}\n`,
        ),
      },
    ],
    [
      'a patch whose id no object has (kustomize fails)',
      'kustomize',
      {
        ...base,
        'ov/kustomization.yaml': k(
          `resources:\n- ../b\npatches:\n${inline(`${head('apps/v1', 'Deployment', 'nope')}spec:\n  replicas: 2\n`)}`,
        ),
      },
    ],
    [
      'a missing patch file',
      'kustomize',
      { ...base, 'ov/kustomization.yaml': k('resources:\n- ../b\npatches:\n- path: absent.yaml\n') },
    ],
    [
      'a patch file outside the kustomization’s directory',
      'kustomize',
      {
        ...base,
        'ov/kustomization.yaml': k('resources:\n- ../b\npatchesStrategicMerge:\n- ../p.yaml\n'),
        'p.yaml': PATCH_DEPLOY,
      },
    ],
    [
      'a JSON patch without a target',
      'kustomize',
      {
        ...base,
        'ov/kustomization.yaml': k('resources:\n- ../b\npatches:\n- path: ops.yaml\n'),
        'ov/ops.yaml': '- op: remove\n  path: /spec/replicas\n',
      },
    ],
    [
      'a $patch: delete directive',
      'kustomize',
      {
        ...base,
        'ov/kustomization.yaml': k(
          `resources:\n- ../b\npatches:\n${inline(`${head('apps/v1', 'Deployment', 'web')}spec:\n  template:\n    spec:\n      volumes:\n        - name: data\n          $patch: delete\n`)}`,
        ),
      },
    ],
    [
      'a null that deletes a field',
      'kustomize',
      {
        ...base,
        'ov/kustomization.yaml': k(
          `resources:\n- ../b\npatches:\n${inline(`${head('apps/v1', 'Deployment', 'web')}spec:\n  replicas: null\n`)}`,
        ),
      },
    ],
    [
      'options that allow a name change',
      'kustomize',
      {
        ...base,
        'ov/kustomization.yaml': k(
          `resources:\n- ../b\npatches:\n- options:\n    allowNameChange: true\n  target:\n    kind: Deployment\n  patch: |-\n${`${head('apps/v1', 'Deployment', 'renamed')}spec:\n  replicas: 2\n`.replace(/^/gm, '    ')}\n`,
        ),
      },
    ],
    [
      'a map where the object has a scalar (kustomize fails)',
      'kustomize',
      {
        ...base,
        'ov/kustomization.yaml': k(
          `resources:\n- ../b\npatches:\n${inline(`${head('apps/v1', 'Deployment', 'web')}spec:\n  replicas:\n    a: b\n`)}`,
        ),
      },
    ],
    [
      'a kind of the Kubernetes API whose schema is not written here',
      'kustomize',
      {
        'ov/kustomization.yaml': k(
          `resources:\n- q.yaml\npatches:\n${inline(`${head('v1', 'ResourceQuota', 'q')}spec:\n  hard:\n    pods: "10"\n`)}`,
        ),
        'ov/q.yaml': `${head('v1', 'ResourceQuota', 'q')}spec:\n  hard:\n    cpu: "1"\n`,
      },
    ],
  ])('%s', async (_why, way, files, spec) => {
    expect(await differential(files, spec)).toBe(way);
  });

  // KR_OVERLAY_FUZZ=<n> runs n times as many seeds (a longer search than CI's, by hand).
  const scale = Math.max(1, Number(process.env['KR_OVERLAY_FUZZ'] ?? 1));
  it(
    'random trees of workloads and patches',
    async () => {
      const seeds = Array.from({ length: 150 * scale }, (_, i) => 1 + i);
      const ways = await mapLimit(seeds, 2, (seed) => differential(randomPatchTree(seed)));
      const inProcess = ways.filter((w) => w === 'overlay').length;
      console.log(`overlay-patches random trees: ${inProcess}/${seeds.length} in process`);
      expect(inProcess).toBeGreaterThan(seeds.length * 0.2);
    },
    240_000 * scale,
  );
});
