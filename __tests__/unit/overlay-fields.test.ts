// The overlay build's label, annotation, replica and image transformers (src/kustomize/overlay-labels.ts,
// overlay-replicas.ts, overlay-images.ts, with kustomize's field specs in overlay-fieldspecs.ts)
// against the real kustomize: named cases per rule, each asserting which way the build went and
// that its answer is kustomize's; trees written as repositories write them; cases where kustomize
// fails or this build cannot be sure (it must give no answer); random trees from a seed.
import { describe, expect, it } from 'vitest';
import { build } from '../../src/kustomize/build.js';
import type { SpecFields } from '../../src/kustomize/kustomization.js';
import { splitImage } from '../../src/kustomize/overlay-images.js';
import { buildOverlay } from '../../src/kustomize/overlay.js';
import { mapLimit } from '../../src/util/concurrency.js';
import { expectKustomizesAnswer } from '../helpers/differential.js';
import { heavyFile } from '../helpers/heavy.js';
import { CONFIGMAP, deployment, KINDS, randomFieldsOverlay, SERVICE } from '../helpers/overlay-fields-trees.js';
import { KUSTOMIZE } from '../helpers/paths.js';
import { tempTree } from '../helpers/plain-trees.js';

heavyFile();

const tree = (files: Record<string, string>) => tempTree('kr-fields-', files);

/** Builds `path` both ways; the overlay build's answer, when it gives one, must be kustomize's. */
async function differential(root: string, path: string, what: string, spec: SpecFields = {}) {
  const fast = await buildOverlay(root, path, spec);
  if (fast === undefined) return 'kustomize';
  await expectKustomizesAnswer(fast, root, path, what, spec);
  return 'overlay';
}

const k = (body: string) => `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n${body}`;
/** A tree of every kind in KINDS (or those named) in `b`, and an overlay `ov` with `body` over it. */
const over = (body: string, kinds: string[] = Object.keys(KINDS), extra: Record<string, string> = {}) => ({
  'b/kustomization.yaml': k(`resources:\n${kinds.map((x) => `- ${x}.yaml\n`).join('')}`),
  ...Object.fromEntries(kinds.map((x) => [`b/${x}.yaml`, KINDS[x]!])),
  'ov/kustomization.yaml': k(`resources:\n- ../b\n${body}`),
  ...extra,
});

type Case = [string, Record<string, string>, ('overlay' | 'kustomize')?, SpecFields?];

describe('labels and annotations, differential against kustomize', () => {
  it.each<Case>([
    ['commonLabels on every kind (selectors, templates, volume claims, peers)', over('commonLabels:\n  team: a\n')],
    ['labels with includeSelectors', over('labels:\n- pairs:\n    team: a\n  includeSelectors: true\n')],
    ['labels with includeTemplates', over('labels:\n- pairs:\n    team: a\n  includeTemplates: true\n')],
    [
      'labels with both flags (selectors win)',
      over('labels:\n- pairs:\n    team: a\n  includeSelectors: true\n  includeTemplates: true\n'),
    ],
    [
      'labels with flags false',
      over('labels:\n- pairs:\n    team: a\n  includeSelectors: false\n  includeTemplates: false\n'),
    ],
    [
      'labels run before commonLabels: the same key ends with commonLabels’ value',
      over('commonLabels:\n  app: common\nlabels:\n- pairs:\n    app: labels\n  includeSelectors: true\n'),
    ],
    [
      'a later transformer sets every place of a label an earlier one made (one YAML node in kustomize)',
      {
        ...over('commonLabels:\n  team: b\n  tier: x\n', ['statefulset', 'deployment', 'cronjob']),
        'b/kustomization.yaml': k(
          'commonLabels:\n  team: a\nresources:\n- statefulset.yaml\n- deployment.yaml\n- cronjob.yaml\n',
        ),
      },
    ],
    [
      'a later transformer sets one place of a label an earlier one made in several (kustomize sets them all)',
      over('labels:\n- pairs:\n    team: a\n  includeTemplates: true\n- pairs:\n    team: b\n', [
        'statefulset',
        'deployment',
      ]),
      'overlay',
    ],
    [
      'commonLabels replace an existing selector value',
      over('commonLabels:\n  app: other\n', ['deployment', 'service', 'pdb', 'netpol']),
    ],
    [
      'values: empty, quoted words YAML 1.1 reads otherwise, dots and slashes',
      over('commonLabels:\n  a: ""\n  b: "true"\n  c: \'007\'\n  app.kubernetes.io/part-of: shop\n  d: "on"\n', [
        'deployment',
        'configmap',
      ]),
    ],
    ['empty maps do nothing', over('commonLabels: {}\nlabels:\n- pairs: {}\ncommonAnnotations: {}\n', ['deployment'])],
    ['a labels entry without pairs', over('labels:\n- includeSelectors: true\n', ['deployment'])],
    [
      'objects without labels, without a spec, a Service and a Deployment without one',
      {
        'ov/kustomization.yaml': k('commonLabels:\n  team: a\ncommonAnnotations:\n  owner: me\nresources:\n- a.yaml\n'),
        'ov/a.yaml': [
          'apiVersion: v1\nkind: Service\nmetadata:\n  name: bare\n',
          'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: bare\n',
          'apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: bare\n',
          'apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: bare\nspec:\n  serviceName: x\n',
          'apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: bare\nspec:\n  maxUnavailable: 1\n',
          'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: bare\nspec:\n  selector:\n    matchLabels:\n      x: y\n  template:\n    spec:\n      containers: []\n',
        ].join('---\n'),
      },
    ],
    [
      'kinds by group: a Deployment of another group, extensions/v1beta1, a Knative Service (version v1)',
      {
        'ov/kustomization.yaml': k('commonLabels:\n  team: a\ncommonAnnotations:\n  owner: me\nresources:\n- a.yaml\n'),
        'ov/a.yaml': [
          'apiVersion: example.com/v1\nkind: Deployment\nmetadata:\n  name: custom\nspec:\n  template: {}\n',
          'apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata:\n  name: old\nspec:\n  template:\n    metadata: {}\n',
          'apiVersion: example.com/v1\nkind: StatefulSet\nmetadata:\n  name: custom\nspec:\n  template: {}\n',
          'apiVersion: example.com/v2\nkind: Service\nmetadata:\n  name: v2svc\n',
          'apiVersion: example.com/v1\nkind: Job\nmetadata:\n  name: cjob\nspec:\n  template: {}\n',
          KINDS['knative']!,
          KINDS['rollout']!,
        ].join('---\n'),
      },
    ],
    [
      'labels with fields: a custom resource’s selector and template, created or not',
      over(
        'labels:\n- pairs:\n    team: a\n  fields:\n  - path: spec/selector/matchLabels\n    group: argoproj.io\n    kind: Rollout\n    create: true\n  - path: spec/template/metadata/labels\n    kind: Rollout\n  - path: spec/extra/labels\n    kind: Widget\n    create: true\n  - path: "spec/volumeClaimTemplates[]/metadata/labels"\n    kind: StatefulSet\n',
        ['rollout', 'widget', 'statefulset', 'deployment'],
      ),
    ],
    [
      'labels with fields that a default matches: the default is dropped (only Deployments get metadata labels)',
      over(
        'labels:\n- pairs:\n    team: a\n  includeTemplates: true\n  fields:\n  - path: metadata/labels\n    kind: Deployment\n    create: true\n',
        ['deployment', 'service', 'statefulset'],
      ),
    ],
    ['commonAnnotations on every kind', over('commonAnnotations:\n  owner: team-a\n  note: "1"\n')],
    [
      'base and overlay both label; a component between',
      {
        ...over('commonLabels:\n  env: prod\ncomponents:\n- ../c\n', ['deployment', 'service']),
        'b/kustomization.yaml': k('commonLabels:\n  app: web\nresources:\n- deployment.yaml\n- service.yaml\n'),
        'c/kustomization.yaml':
          'apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nlabels:\n- pairs:\n    comp: "yes"\n  includeTemplates: true\n',
      },
    ],
    [
      'namespace, labels and patches together',
      over(
        'namespace: prod\ncommonLabels:\n  env: prod\npatches:\n- target:\n    kind: Deployment\n  patch: |-\n    - op: add\n      path: /spec/template/metadata/labels/patched\n      value: "yes"\n',
        ['deployment', 'service', 'configmap'],
      ),
    ],
  ])('%s', async (what, files, way = 'overlay', spec) => {
    expect(await differential(await tree(files), 'ov', what, spec)).toBe(way);
  });
});

describe('replicas and images, differential against kustomize', () => {
  it.each<Case>([
    ['replicas by name, created when absent', over('replicas:\n- name: web\n  count: 5\n- name: db\n  count: 0\n')],
    [
      'replicas on a ReplicationController, a ReplicaSet',
      over('replicas:\n- name: legacy\n  count: 3\n- name: rs\n  count: 1\n'),
    ],
    [
      'replicas on a custom kind Deployment (any group) and one of several kinds of one name',
      {
        'ov/kustomization.yaml': k('replicas:\n- name: x\n  count: 4\nresources:\n- a.yaml\n'),
        'ov/a.yaml': [
          'apiVersion: example.com/v1\nkind: Deployment\nmetadata:\n  name: x\n',
          'apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: x\nspec:\n  replicas: 2\n',
          'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n',
        ].join('---\n'),
      },
    ],
    ['replicas after a namespace', over('namespace: prod\nreplicas:\n- name: web\n  count: 3\n', ['deployment'])],
    [
      'images: newTag, newName, digest, both, a registry with a port',
      over(
        'images:\n- name: nginx\n  newTag: "1.27"\n- name: postgres\n  newName: registry.example.com:5000/pg\n- name: busybox\n  digest: sha256:abc\n- name: ghcr.io/stefanprodan/podinfo\n  newName: ghcr.io/me/podinfo\n  newTag: 6.6.0\n  digest: sha256:def\n',
      ),
    ],
    [
      'images: only whole names match (ngin is not nginx; a prefix of a path is not the name)',
      over('images:\n- name: ngin\n  newTag: x\n- name: library/nginx\n  newTag: why\n- name: podinfo\n  newTag: z\n', [
        'deployment',
        'rc',
      ]),
    ],
    [
      'images: a dot matches any character, as in kustomize',
      over('images:\n- name: docker.io/library/nginx\n  newTag: "1.27"\n- name: busybox.\n  newTag: dotted\n', [
        'deployment',
      ]),
    ],
    [
      'images: chained entries, tagSuffix',
      over(
        'images:\n- name: nginx\n  newName: mirror/nginx\n- name: mirror/nginx\n  newTag: chained\n- name: postgres\n  tagSuffix: "-alpine"\n',
      ),
    ],
    [
      'images in a CronJob, a Pod’s image volume, a custom resource; not in a CRD',
      {
        'ov/kustomization.yaml': k(
          'images:\n- name: busybox\n  newTag: "1.36"\n- name: ghcr.io/example/tools\n  newTag: "2.0"\nresources:\n- a.yaml\n',
        ),
        'ov/a.yaml': [
          KINDS['cronjob']!.replaceAll('postgres:16', 'busybox'),
          KINDS['pod']!,
          'apiVersion: example.com/v1\nkind: Runner\nmetadata:\n  name: r\nspec:\n  steps:\n    - containers:\n        - name: s\n          image: busybox:1\n',
          'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: runners.example.com\nspec:\n  group: example.com\n  x:\n    containers:\n      - image: busybox\n',
        ].join('---\n'),
      },
    ],
    [
      'Flux’s spec.images merged into the file’s',
      over('images:\n- name: nginx\n  newTag: "1.0"\n', ['deployment']),
      'overlay',
      {
        images: [
          { name: 'nginx', newTag: '2.0' },
          { name: 'busybox', newName: 'mirror/busybox' },
        ],
      },
    ],
    [
      'replicas by the name in the file, a base’s name, or the current one after prefixes and suffixes',
      {
        ...over(
          'namePrefix: prod-\nreplicas:\n- name: web\n  count: 3\n- name: db-v1\n  count: 2\n- name: prod-rs-v1\n  count: 1\n',
          ['deployment', 'statefulset', 'replicaset'],
        ),
        'b/kustomization.yaml': k(
          'nameSuffix: "-v1"\nresources:\n- deployment.yaml\n- statefulset.yaml\n- replicaset.yaml\n',
        ),
      },
    ],
    [
      'an argo-cd style install: images by registry path, a namespace, commonLabels over a StatefulSet and a Deployment',
      {
        'base/kustomization.yaml': k('resources:\n- install.yaml\n'),
        'base/install.yaml': [
          deployment('argocd-server', 'quay.io/argoproj/argocd:v2.9.0'),
          KINDS['statefulset']!.replace('postgres:16', 'quay.io/argoproj/argocd:v2.9.0'),
          KINDS['service']!,
        ].join('---\n'),
        'ov/kustomization.yaml': k(
          'namespace: argocd\nresources:\n- ../base\ncommonLabels:\n  app.kubernetes.io/part-of: argocd\nimages:\n- name: quay.io/argoproj/argocd\n  newTag: v2.10.0\n- name: docker.io/library/nginx\n  newName: registry.internal:5000/nginx\n',
        ),
      },
    ],
    [
      'everything at once, as an overlays/production does',
      {
        'base/kustomization.yaml': k('resources:\n- deployment.yaml\n- service.yaml\n- configmap.yaml\n'),
        'base/deployment.yaml': deployment(),
        'base/service.yaml': SERVICE,
        'base/configmap.yaml': CONFIGMAP,
        'ov/kustomization.yaml': k(
          'namespace: production\nresources:\n- ../base\nlabels:\n- pairs:\n    app.kubernetes.io/part-of: shop\n  includeSelectors: false\n  includeTemplates: true\ncommonLabels:\n  env: production\ncommonAnnotations:\n  owner: team-shop\nreplicas:\n- name: web\n  count: 4\nimages:\n- name: ghcr.io/stefanprodan/podinfo\n  newTag: 6.7.0\n',
        ),
      },
    ],
  ])('%s', async (what, files, way = 'overlay', spec) => {
    expect(await differential(await tree(files), 'ov', what, spec)).toBe(way);
  });
});

describe('left to kustomize (it fails, or this build cannot be sure)', () => {
  const fails = async (root: string) =>
    build({ root, path: 'ov', kustomizeBin: KUSTOMIZE, plain: false }).then(
      () => false,
      () => true,
    );
  it.each<[string, Record<string, string>, boolean]>([
    ['a label value that is a number', over('commonLabels:\n  a: 1\n', ['deployment']), true],
    ['a replicas entry that matches nothing', over('replicas:\n- name: nothing\n  count: 2\n', ['deployment']), true],
    [
      'replicas where the object holds a string (kustomize keeps it quoted)',
      {
        'ov/kustomization.yaml': k('replicas:\n- name: x\n  count: 4\nresources:\n- a.yaml\n'),
        'ov/a.yaml': 'apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: x\nspec:\n  replicas: "2"\n',
      },
      false,
    ],
    ['a replicas count that is a string', over('replicas:\n- name: web\n  count: "2"\n', ['deployment']), true],
    [
      'an images entry with an unknown field',
      over('images:\n- name: nginx\n  newtag: x\n  bogus: y\n', ['deployment']),
      true,
    ],
    ['a label key in kustomize’s domain', over('commonLabels:\n  config.kubernetes.io/x: a\n', ['deployment']), false],
    [
      'a labels entry whose fields differ from a default only in create',
      over('labels:\n- pairs:\n    a: b\n  fields:\n  - path: metadata/labels\n    create: false\n', ['deployment']),
      true,
    ],
    [
      'a labels entry with a field path kustomize splits otherwise',
      over('labels:\n- pairs:\n    a: b\n  fields:\n  - path: /spec/x\n    create: true\n', ['deployment']),
      false,
    ],
    [
      'a Service whose spec is not a map',
      {
        'ov/kustomization.yaml': k('commonLabels:\n  a: b\nresources:\n- a.yaml\n'),
        'ov/a.yaml': 'apiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec: text\n',
      },
      true,
    ],
    [
      'labels that are null on the way',
      {
        'ov/kustomization.yaml': k('commonLabels:\n  a: b\nresources:\n- a.yaml\n'),
        'ov/a.yaml':
          'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: s\nspec:\n  template:\n    metadata:\n      labels: null\n',
      },
      false,
    ],
    [
      'an image name that is a regular expression',
      over('images:\n- name: ngin(x)\n  newTag: x\n', ['deployment']),
      false,
    ],
    [
      'an image that becomes a number',
      {
        'ov/kustomization.yaml': k('images:\n- name: a\n  newName: "1"\nresources:\n- a.yaml\n'),
        'ov/a.yaml':
          'apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: a\n',
      },
      false,
    ],
  ])('%s', async (_what, files, kustomizeFails) => {
    const root = await tree(files);
    expect(await buildOverlay(root, 'ov', {})).toBeUndefined();
    if (kustomizeFails) expect(await fails(root)).toBe(true);
  });
});

describe('image references', () => {
  it.each<[string, [string, string, string]]>([
    ['nginx', ['nginx', '', '']],
    ['nginx:1.25', ['nginx', '1.25', '']],
    ['nginx@sha256:abc', ['nginx', '', 'sha256:abc']],
    ['nginx:1.25@sha256:abc', ['nginx', '1.25', 'sha256:abc']],
    ['localhost:5000/app', ['localhost:5000/app', '', '']],
    ['localhost:5000/app:v1', ['localhost:5000/app', 'v1', '']],
    ['registry.example.com:5000/a/b@sha256:x', ['registry.example.com:5000/a/b', '', 'sha256:x']],
    [':tag', ['', 'tag', '']],
  ])('%s', (image, parts) => {
    expect(splitImage(image)).toEqual(parts);
  });
});

describe('random trees with labels, annotations, replicas and images', () => {
  const scale = Math.max(1, Number(process.env['KR_OVERLAY_FUZZ'] ?? 1));
  it(
    'every tree falls back or gives kustomize’s answer',
    async () => {
      const seeds = Array.from({ length: 160 * scale }, (_, i) => 1 + i);
      const ways = await mapLimit(seeds, 2, async (seed) => {
        const root = await tree(randomFieldsOverlay(seed));
        return differential(root, 'ov', `seed ${seed}: ${root}`);
      });
      const share = ways.filter((w) => w === 'overlay').length / seeds.length;
      console.log(`random field overlays built in process: ${Math.round(share * 100)} %`);
      expect(share).toBeGreaterThan(0.8);
    },
    120_000 * scale,
  );
});
