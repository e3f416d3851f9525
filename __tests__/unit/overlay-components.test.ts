// Components and Flux's spec fields in the overlay build (src/kustomize/overlay.ts), against the
// real kustomize: a component (kind: Component) runs on what its kustomization accumulated so far,
// after that kustomization's resources and generators and before its transformers; components nest;
// Flux's spec.components and spec.patches are merged into the top kustomization. Wherever the
// overlay build answers, the answer must be kustomize's; where kustomize fails, it must not answer.
import { describe, expect, it } from 'vitest';
import type { SpecFields } from '../../src/kustomize/kustomization.js';
import { buildOverlay } from '../../src/kustomize/overlay.js';
import { expectKustomizesAnswer } from '../helpers/differential.js';
import { heavyFile } from '../helpers/heavy.js';
import { tempTree } from '../helpers/plain-trees.js';

heavyFile();

const tree = (files: Record<string, string>) => tempTree('kr-overlay-comp-', files);
const cm = (name: string, extra = '') => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n${extra}`;
const k = (body: string) => `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n${body}`;
const comp = (body: string) => `apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n${body}`;
const jsonPatch = (kind: string, path: string, value: string) =>
  `- target:\n    kind: ${kind}\n  patch: |-\n    - op: add\n      path: ${path}\n      value: ${value}\n`;

/** A base whose commonLabels kustomize writes as one node at each object's label places. */
const ALIAS_BASE: Record<string, string> = {
  'base/kustomization.yaml': 'commonLabels:\n  env: base\nresources:\n- svc.yaml\n- dep.yaml\n',
  'base/svc.yaml':
    'apiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n  selector:\n    app: a\n  ports:\n  - port: 80\n',
  'base/dep.yaml':
    'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  selector:\n    matchLabels:\n      app: a\n  template:\n    metadata:\n      labels:\n        app: a\n    spec:\n      containers:\n      - name: c\n        image: x\n',
};

async function differential(root: string, path: string, what: string, spec: SpecFields = {}) {
  const fast = await buildOverlay(root, path, spec);
  if (fast === undefined) return 'kustomize';
  await expectKustomizesAnswer(fast, root, path, what, spec);
  return 'overlay';
}

describe('components in the overlay build, differential against kustomize', () => {
  it.each<[string, Record<string, string>, 'overlay' | 'kustomize', SpecFields?]>([
    [
      'a component patches what the overlay accumulated, before the overlay’s own namespace and labels',
      {
        'base/kustomization.yaml': k('resources:\n- cm.yaml\n'),
        'base/cm.yaml': cm('a', 'data:\n  k: base\n'),
        'components/extra/kustomization.yaml': comp(
          `resources:\n- more.yaml\npatches:\n${jsonPatch('ConfigMap', '/data', '{comp: added}')}`,
        ),
        'components/extra/more.yaml': cm('more'),
        'ov/kustomization.yaml': k(
          'namespace: prod\nlabels:\n- pairs:\n    env: prod\nresources:\n- ../base\ncomponents:\n- ../components/extra\n',
        ),
      },
      'overlay',
    ],
    [
      'two components in order, the second sees the first’s objects; a nested component',
      {
        'ov/kustomization.yaml': k('resources:\n- a.yaml\ncomponents:\n- ../c1\n- ../c2\n'),
        'ov/a.yaml': cm('a'),
        'c1/kustomization.yaml': comp(`resources:\n- b.yaml\ncomponents:\n- ../c3\n`),
        'c1/b.yaml': cm('b'),
        'c2/kustomization.yaml': comp(`patches:\n${jsonPatch('ConfigMap', '/data', '{from: c2}')}`),
        'c3/kustomization.yaml': comp(`namespace: inner\n`),
      },
      'overlay',
    ],
    [
      'a component with a namespace set under the overlay’s',
      {
        'ov/kustomization.yaml': k('namespace: outer\nresources:\n- a.yaml\ncomponents:\n- ../c\n'),
        'ov/a.yaml': cm('a'),
        'c/kustomization.yaml': comp(
          'namespace: inner\nlabels:\n- pairs:\n    c: "1"\npatches:\n' + jsonPatch('ConfigMap', '/data', '{x: z}'),
        ),
      },
      'overlay',
    ],
    [
      'a component in a base’s kustomization runs on the base only',
      {
        'b/kustomization.yaml': k('resources:\n- a.yaml\ncomponents:\n- ../c\n'),
        'b/a.yaml': cm('a'),
        'c/kustomization.yaml': comp(`patches:\n${jsonPatch('ConfigMap', '/data', '{c: "1"}')}`),
        'ov/kustomization.yaml': k('resources:\n- ../b\n- own.yaml\n'),
        'ov/own.yaml': cm('own'),
      },
      'overlay',
    ],
    [
      'Flux’s spec.components and spec.patches merge into the top kustomization',
      {
        'ov/kustomization.yaml': k('resources:\n- a.yaml\n'),
        'ov/a.yaml': cm('a'),
        'c/kustomization.yaml': comp('resources:\n- b.yaml\n'),
        'c/b.yaml': cm('b'),
      },
      'overlay',
      {
        components: ['../c'],
        patches: [{ patch: '- op: add\n  path: /data\n  value: {spec: patched}\n', target: { kind: 'ConfigMap' } }],
        targetNamespace: 'flux',
      },
    ],
    [
      'after a JSON patch, labels a base’s commonLabels made together are apart again',
      {
        ...ALIAS_BASE,
        'ov/kustomization.yaml': k(
          `resources:\n- ../base\npatches:\n${jsonPatch('Deployment', '/spec/replicas', '2')}labels:\n- pairs:\n    env: over\n`,
        ),
      },
      'overlay',
    ],
    [
      'a strategic merge that leaves the labels alone keeps them together',
      {
        ...ALIAS_BASE,
        'ov/kustomization.yaml': k(
          'resources:\n- ../base\npatches:\n- patch: |-\n    apiVersion: v1\n    kind: Service\n    metadata:\n      name: s\n    spec:\n      type: ClusterIP\nlabels:\n- pairs:\n    env: over\n',
        ),
      },
      'overlay',
    ],
    [
      'a strategic merge that sets one of the labels made together (kustomize sets them all)',
      {
        ...ALIAS_BASE,
        'ov/kustomization.yaml': k(
          'resources:\n- ../base\npatches:\n- patch: |-\n    apiVersion: v1\n    kind: Service\n    metadata:\n      name: s\n    spec:\n      selector:\n        env: patched\n',
        ),
      },
      'kustomize',
    ],
    [
      'a patchesStrategicMerge file of several documents, two of them on one object',
      {
        ...ALIAS_BASE,
        'ov/kustomization.yaml': k('resources:\n- ../base\npatchesStrategicMerge:\n- many.yaml\n'),
        'ov/many.yaml': [
          'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  replicas: 2\n',
          'apiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n  type: NodePort\n',
          'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  replicas: 3\n  template:\n    spec:\n      containers:\n      - name: c\n        image: nginx\n',
        ].join('---\n'),
      },
      'overlay',
    ],
    [
      'a generator file larger than the in-process build reads (kustomize reads it, within the build’s limits)',
      {
        'ov/kustomization.yaml': k('resources:\n- a.yaml\nconfigMapGenerator:\n- name: big\n  files:\n  - big.txt\n'),
        'ov/a.yaml': cm('a'),
        'ov/big.txt': 'x'.repeat(33 * 1024 * 1024),
      },
      'kustomize',
    ],
    [
      'a generator env file that is SOPS-encrypted (the build with kustomize decrypts it first)',
      {
        'ov/kustomization.yaml': k('resources:\n- a.yaml\nsecretGenerator:\n- name: s\n  envs:\n  - secret.env\n'),
        'ov/a.yaml': cm('a'),
        'ov/secret.env': 'PASSWORD=ENC[AES256_GCM,data:abc=,iv:def=,tag:ghi=,type:str]\nsops_version=3.9.0\n',
      },
      'kustomize',
    ],
    [
      'the same generator env file in plain text',
      {
        'ov/kustomization.yaml': k('resources:\n- a.yaml\nsecretGenerator:\n- name: s\n  envs:\n  - secret.env\n'),
        'ov/a.yaml': cm('a'),
        'ov/secret.env': 'PASSWORD=hunter2\n',
      },
      'overlay',
    ],
    [
      'a component listed as a resource (kustomize refuses)',
      {
        'ov/kustomization.yaml': k('resources:\n- a.yaml\n- ../c\n'),
        'ov/a.yaml': cm('a'),
        'c/kustomization.yaml': comp('resources:\n- b.yaml\n'),
        'c/b.yaml': cm('b'),
      },
      'kustomize',
    ],
    [
      'a Kustomization listed as a component (kustomize refuses)',
      {
        'ov/kustomization.yaml': k('resources:\n- a.yaml\ncomponents:\n- ../c\n'),
        'ov/a.yaml': cm('a'),
        'c/kustomization.yaml': k('resources:\n- b.yaml\n'),
        'c/b.yaml': cm('b'),
      },
      'kustomize',
    ],
    [
      'a component that adds an object the overlay has already (kustomize refuses)',
      {
        'ov/kustomization.yaml': k('resources:\n- a.yaml\ncomponents:\n- ../c\n'),
        'ov/a.yaml': cm('a'),
        'c/kustomization.yaml': comp('resources:\n- a.yaml\n'),
        'c/a.yaml': cm('a'),
      },
      'kustomize',
    ],
    [
      'a missing component',
      { 'ov/kustomization.yaml': k('resources:\n- a.yaml\ncomponents:\n- ../nowhere\n'), 'ov/a.yaml': cm('a') },
      'kustomize',
    ],
    [
      'a spec component that is missing',
      { 'ov/kustomization.yaml': k('resources:\n- a.yaml\n'), 'ov/a.yaml': cm('a') },
      'kustomize',
      { components: ['../nowhere'], ignoreMissingComponents: true },
    ],
    [
      'a spec that asks for origin annotations',
      { 'ov/kustomization.yaml': k('resources:\n- a.yaml\n'), 'ov/a.yaml': cm('a') },
      'kustomize',
      { buildMetadata: ['originAnnotations'] },
    ],
  ])('%s', async (what, files, way, spec) => {
    const root = await tree(files);
    expect(await differential(root, 'ov', what, spec)).toBe(way);
  });
});
