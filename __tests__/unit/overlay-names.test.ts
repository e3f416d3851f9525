// namePrefix/nameSuffix, the ConfigMap and Secret generators, kustomize's hash suffix and name
// references in the overlay build, against the real kustomize: where the build without kustomize
// answers, its answer must be kustomize's (objects, key order, order, origins); where kustomize's
// answer is not certain or it fails, it must leave the build to kustomize.
import { describe, expect, it } from 'vitest';
import type { SpecFields } from '../../src/kustomize/kustomization.js';
import { encodeHash, kustomizeHash } from '../../src/kustomize/overlay-hash.js';
import { buildOverlay } from '../../src/kustomize/overlay.js';
import { mapLimit } from '../../src/util/concurrency.js';
import { expectKustomizesAnswer } from '../helpers/differential.js';
import { heavyFile } from '../helpers/heavy.js';
import { appTree, deployment, randomNamesTree } from '../helpers/overlay-names-trees.js';
import { tempTree } from '../helpers/plain-trees.js';

heavyFile();

const tree = (files: Record<string, string>) => tempTree('kr-names-', files);

async function differential(root: string, path: string, what: string, spec: SpecFields = {}) {
  const fast = await buildOverlay(root, path, spec);
  if (fast === undefined) return 'kustomize' as const;
  await expectKustomizesAnswer(fast, root, path, what, spec);
  return 'overlay' as const;
}

const K = 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n';
const cm = (name: string, extra = '') => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n${extra}`;
const dep = deployment('web', { cm: 'cfg', secret: 'sec', sa: 'sa', pvc: 'data' });

describe('kustomize’s hash', () => {
  it.each<[string, Record<string, unknown>, string | undefined]>([
    // Values kustomize v5.8.1 printed for these objects.
    ['a Secret of one literal', { kind: 'Secret', type: 'Opaque', data: { password: 'czNjcjN0' } }, '25k92892fb'],
    ['a ConfigMap without data', { kind: 'ConfigMap' }, '6ct58987ht'],
    [
      'a ConfigMap of literals and files',
      {
        kind: 'ConfigMap',
        data: { A: '1', B: 'two', 'app.properties': 'x=1\ny=2\n', k2: 'line1\nline2  \n\tindented\n' },
      },
      'k9dg8c5g4g',
    ],
    ['the name does not count', { kind: 'ConfigMap', metadata: { name: 'x' } }, '6ct58987ht'],
    ['a value that is not a string', { kind: 'ConfigMap', data: { a: 1 } }, undefined],
    ['a control character', { kind: 'ConfigMap', data: { a: '\u0001' } }, undefined],
    ['another kind', { kind: 'Service' }, undefined],
  ])('%s', (_why, obj, hash) => {
    expect(kustomizeHash(obj)).toBe(hash);
  });

  it('encodes the first ten hex digits', () => {
    expect(encodeHash('0123456789abcdef')).toBe('gh2k456789');
  });
});

describe('names and generators, differential against kustomize', () => {
  it('the realistic app: prefix, namespace, generators from files, literals and env files, merge', async () => {
    const root = await tree(appTree());
    expect(await differential(root, 'overlays/production', 'app')).toBe('overlay');
    expect(await differential(root, 'base', 'app base')).toBe('overlay');
  });

  it.each<[string, Record<string, string>, string, 'overlay' | 'kustomize', SpecFields?]>([
    [
      'prefix and suffix skip Namespaces and CRDs; references in pod specs follow',
      {
        'b/kustomization.yaml': `${K}namePrefix: b-\nresources:\n- a.yaml\n`,
        'b/a.yaml': [
          dep,
          cm('cfg'),
          'apiVersion: v1\nkind: Secret\nmetadata:\n  name: sec\n',
          'apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa\n',
          'apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data\n',
          'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team\n',
          'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: w.example.com\nspec:\n  group: example.com\n',
        ].join('---\n'),
        'ov/kustomization.yaml': `${K}namePrefix: o-\nnameSuffix: "-s"\nresources:\n- ../b\n`,
      },
      'ov',
      'overlay',
    ],
    [
      'Flux’s namePrefix at the top',
      { 'ov/kustomization.yaml': `${K}resources:\n- a.yaml\n`, 'ov/a.yaml': [dep, cm('cfg')].join('---\n') },
      'ov',
      'overlay',
      { namePrefix: 'flux-', nameSuffix: '-x' },
    ],
    [
      'references to names never renamed stay',
      { 'ov/kustomization.yaml': `${K}namePrefix: p-\nresources:\n- a.yaml\n`, 'ov/a.yaml': dep },
      'ov',
      'overlay',
    ],
    [
      'RoleBinding roleRef, HPA, StatefulSet serviceName and Ingress backends',
      {
        'ov/kustomization.yaml': `${K}namePrefix: p-\nresources:\n- a.yaml\n`,
        'ov/a.yaml': [
          'apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: r\nrules:\n- apiGroups: [""]\n  resources: [configmaps]\n  resourceNames: [cfg, other]\n  verbs: [get]\n',
          'apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: rb\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: Role\n  name: r\n',
          'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: cr\n',
          'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: crb\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: cr\n',
          cm('cfg'),
          'apiVersion: v1\nkind: Service\nmetadata:\n  name: svc\n',
          'apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: st\nspec:\n  serviceName: svc\n',
          'apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: h\nspec:\n  scaleTargetRef:\n    kind: StatefulSet\n    name: st\n',
          'apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: ing\nspec:\n  defaultBackend:\n    service:\n      name: svc\n  rules:\n  - http:\n      paths:\n      - path: /\n        pathType: Prefix\n        backend:\n          service:\n            name: svc\n            port:\n              number: 80\n',
        ].join('---\n'),
      },
      'ov',
      'overlay',
    ],
    [
      'a generator merged into a base’s, with options and generatorOptions',
      {
        'b/kustomization.yaml': `${K}resources:\n- d.yaml\nconfigMapGenerator:\n- name: cfg\n  literals:\n  - A=1\n  - B=2\nsecretGenerator:\n- name: sec\n  literals:\n  - password=x\n  type: kubernetes.io/basic-auth\n`,
        'b/d.yaml': dep,
        'ov/kustomization.yaml': `${K}namePrefix: p-\nresources:\n- ../b\ngeneratorOptions:\n  labels:\n    g: "1"\n  annotations:\n    note: x\nconfigMapGenerator:\n- name: cfg\n  behavior: merge\n  literals:\n  - B=3\n  options:\n    labels:\n      g: local\n    immutable: true\nsecretGenerator:\n- name: sec\n  behavior: replace\n  literals:\n  - token=t\n`,
      },
      'ov',
      'overlay',
    ],
    [
      'disableNameSuffixHash and a generator namespace',
      {
        'ov/kustomization.yaml': `${K}resources:\n- d.yaml\nconfigMapGenerator:\n- name: cfg\n  namespace: other\n  options:\n    disableNameSuffixHash: true\n  literals:\n  - A=1\n- name: sec2\n  literals:\n  - "multi=a b"\n`,
        'ov/d.yaml': dep,
      },
      'ov',
      'overlay',
    ],
    [
      'a RoleBinding whose ServiceAccount subject was renamed (kustomize sets its namespace too)',
      {
        'ov/kustomization.yaml': `${K}namePrefix: p-\nresources:\n- a.yaml\n`,
        'ov/a.yaml':
          'apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: rb\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: view\nsubjects:\n- kind: ServiceAccount\n  name: sa\n',
      },
      'ov',
      'kustomize',
    ],
    [
      'two ConfigMaps of the name in two namespaces',
      {
        'ov/kustomization.yaml': `${K}namePrefix: p-\nresources:\n- a.yaml\n`,
        'ov/a.yaml': [cm('cfg', '  namespace: a\n'), cm('cfg', '  namespace: b\n'), dep].join('---\n'),
      },
      'ov',
      'overlay',
    ],
  ])('%s', async (why, files, path, way, spec) => {
    const root = await tree(files);
    expect(await differential(root, path, why, spec)).toBe(way);
  });
});

describe('names and generators leave to kustomize', () => {
  it.each<[string, Record<string, string>]>([
    [
      'a generator file that is missing',
      {
        'ov/kustomization.yaml': `${K}resources:\n- a.yaml\nconfigMapGenerator:\n- name: c\n  files:\n  - nope.txt\n`,
        'ov/a.yaml': cm('a'),
      },
    ],
    [
      'a key repeated',
      {
        'ov/kustomization.yaml': `${K}resources:\n- a.yaml\nconfigMapGenerator:\n- name: c\n  literals:\n  - A=1\n  - A=2\n`,
        'ov/a.yaml': cm('a'),
      },
    ],
    [
      'merge with nothing to merge into',
      {
        'ov/kustomization.yaml': `${K}resources:\n- a.yaml\nconfigMapGenerator:\n- name: c\n  behavior: merge\n  literals:\n  - A=1\n`,
        'ov/a.yaml': cm('a'),
      },
    ],
    [
      'create over an existing name',
      {
        'ov/kustomization.yaml': `${K}resources:\n- a.yaml\nconfigMapGenerator:\n- name: a\n  literals:\n  - A=1\n`,
        'ov/a.yaml': cm('a'),
      },
    ],
    [
      'a literal without =',
      {
        'ov/kustomization.yaml': `${K}resources:\n- a.yaml\nconfigMapGenerator:\n- name: c\n  literals:\n  - A\n`,
        'ov/a.yaml': cm('a'),
      },
    ],
    [
      'an env file with export',
      {
        'ov/kustomization.yaml': `${K}resources:\n- a.yaml\nconfigMapGenerator:\n- name: c\n  envs:\n  - x.env\n`,
        'ov/a.yaml': cm('a'),
        'ov/x.env': 'export A=1\n',
      },
    ],
    [
      'a file that is not ASCII',
      {
        'ov/kustomization.yaml': `${K}resources:\n- a.yaml\nconfigMapGenerator:\n- name: c\n  files:\n  - x.txt\n`,
        'ov/a.yaml': cm('a'),
        'ov/x.txt': 'caf\u00e9\n',
      },
    ],
    [
      'an unknown behavior',
      {
        'ov/kustomization.yaml': `${K}resources:\n- a.yaml\nconfigMapGenerator:\n- name: c\n  behavior: upsert\n`,
        'ov/a.yaml': cm('a'),
      },
    ],
    [
      'an empty namePrefix',
      { 'ov/kustomization.yaml': `${K}namePrefix: ""\nresources:\n- a.yaml\n`, 'ov/a.yaml': cm('a') },
    ],
  ])('%s', async (why, files) => {
    const root = await tree(files);
    expect(await differential(root, 'ov', why)).toBe('kustomize');
  });
});

describe('random trees of names and generators', () => {
  const scale = Math.max(1, Number(process.env['KR_OVERLAY_FUZZ'] ?? 1));
  it(
    'every tree either falls back or equals kustomize',
    async () => {
      const seeds = Array.from({ length: 160 * scale }, (_, i) => 1 + i);
      const ways = await mapLimit(seeds, 2, async (seed) => {
        const root = await tree(randomNamesTree(seed));
        return differential(root, 'ov', `seed ${seed}: ${root}`);
      });
      const inProcess = ways.filter((w) => w === 'overlay').length;
      console.log(`names trees in process: ${inProcess}/${seeds.length}`);
      expect(inProcess).toBeGreaterThan(seeds.length * 0.25);
    },
    240_000 * scale,
  );
});
