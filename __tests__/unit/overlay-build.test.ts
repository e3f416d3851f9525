// The overlay build (src/kustomize/overlay.ts) against the real kustomize: wherever it gives an
// answer, that answer must be the build's with kustomize, object by object (values, key order, order
// of the objects) and origin by origin; wherever kustomize fails, it must give none (the build then
// runs kustomize, which fails). On the benchmark's overlay, named cases of each rule, every
// directory of the parity corpus, and random trees from a seed.
import { symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { build } from '../../src/kustomize/build.js';
import type { SpecFields } from '../../src/kustomize/kustomization.js';
import { buildOverlay, specIsOverlay } from '../../src/kustomize/overlay.js';
import { mapLimit } from '../../src/util/concurrency.js';
import { overlayTree, randomOverlay } from '../helpers/overlay-trees.js';
import { corpusDirs, tempTree } from '../helpers/plain-trees.js';
import { expectKustomizesAnswer } from '../helpers/differential.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

const tree = (files: Record<string, string>) => tempTree('kr-overlay-', files);

/**
 * Builds `path` of `root` both ways; checks that the overlay build, when it answers, gives what the
 * build with kustomize gives. Returns which way the overlay build went.
 */
async function differential(
  root: string,
  path: string,
  what: string,
  spec: SpecFields = {},
): Promise<'overlay' | 'kustomize'> {
  const fast = await buildOverlay(root, path, spec);
  if (fast === undefined) return 'kustomize';
  await expectKustomizesAnswer(fast, root, path, what, spec);
  return 'overlay';
}

const cm = (name: string, extra = '') => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n${extra}`;
const k = (body: string) => `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n${body}`;

describe('overlay build, differential against kustomize', () => {
  it('the benchmark’s overlay (1,000 ConfigMaps) gives kustomize’s objects, order and origins', async () => {
    const root = await tree(overlayTree(1000));
    expect(await differential(root, 'overlay', 'bench overlay')).toBe('overlay');
    // The build takes it: a kustomize that always fails is never run.
    const built = await build({ root, path: 'overlay', kustomizeBin: '/bin/false' });
    expect(built.objects).toHaveLength(1001);
    expect(built.generated).toBe(false);
    expect(built.origins.get('/ConfigMap/kr-overlay/cm-7')).toBe('base/cm-7.yaml');
  });

  it.each<[string, Record<string, string>, string, SpecFields?]>([
    [
      'a Namespace takes the namespace as its name; custom and cluster-scoped kinds',
      {
        'b/kustomization.yaml': 'resources:\n- a.yaml\n',
        'b/a.yaml': [
          'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: other\n',
          'apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n',
          'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: cr\n',
          'apiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: pv\n',
          'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\nspec:\n  group: example.com\n  scope: Namespaced\n',
          cm('c', '  labels:\n    x: "1"\n'),
        ].join('---\n'),
        'ov/kustomization.yaml': k('namespace: ns1\nlabels:\n- pairs:\n    app: x\nresources:\n- ../b\n'),
      },
      'ov',
    ],
    [
      'patches run before the namespace and the labels',
      {
        'b/kustomization.yaml': 'resources:\n- a.yaml\n',
        'b/a.yaml': cm('c', '  labels:\n    app: base\n'),
        'ov/kustomization.yaml': k(
          'namespace: ns1\nlabels:\n- pairs:\n    app: x\nresources:\n- ../b\npatches:\n- target:\n    kind: ConfigMap\n  patch: |-\n    - op: add\n      path: /metadata/labels/app\n      value: patched\n    - op: add\n      path: /metadata/namespace\n      value: patched\n',
        ),
      },
      'ov',
    ],
    [
      'base transformers run before the overlay’s; the overlay’s namespace wins',
      {
        'b/kustomization.yaml': k(
          'namespace: inner\nlabels:\n- pairs:\n    tier: base\nresources:\n- a.yaml\npatches:\n- target:\n    name: c\n  patch: |-\n    - op: add\n      path: /data/k\n      value: base\n',
        ),
        'b/a.yaml': cm('c', 'data:\n  a: "1"\n'),
        'ov/kustomization.yaml': k(
          'namespace: outer\nlabels:\n- pairs:\n    tier: overlay\n    env: prod\nresources:\n- ../b\n- own.yaml\npatches:\n- target:\n    version: v1\n  patch: |-\n    - op: replace\n      path: /data/k\n      value: overlay\n',
        ),
        'ov/own.yaml': cm('own', 'data:\n  k: own\n'),
      },
      'ov',
    ],
    [
      'array operations and empty annotations',
      {
        'b/kustomization.yaml': 'resources:\n- s.yaml\n',
        'b/s.yaml':
          'apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n  annotations:\n    a: b\nspec:\n  ports:\n  - port: 80\n  - port: 81\n',
        'ov/kustomization.yaml': k(
          'resources:\n- ../b\npatches:\n- target:\n    kind: Service\n  patch: |-\n    - op: add\n      path: /spec/ports/-\n      value:\n        port: 82\n    - op: add\n      path: /spec/ports/0\n      value: {port: 79, name: first}\n    - op: remove\n      path: /spec/ports/2\n    - op: remove\n      path: /metadata/annotations/a\n',
        ),
      },
      'ov',
    ],
    [
      'a target names a Namespace by the name in its file or the one a base gave it',
      {
        'b/kustomization.yaml': 'namespace: ns1\nresources:\n- a.yaml\n',
        'b/a.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: other\n',
        'ov/kustomization.yaml': k(
          'resources:\n- ../b\npatches:\n- target:\n    name: other\n  patch: |-\n    - op: add\n      path: /metadata/labels\n      value: {by: file}\n- target:\n    name: ns1\n  patch: |-\n    - op: add\n      path: /metadata/labels/current\n      value: matched\n',
        ),
      },
      'ov',
    ],
    [
      'quoted strings that YAML 1.1 reads otherwise stay strings',
      {
        'ov/kustomization.yaml': k(
          'namespace: "0755"\nlabels:\n- pairs: {a: "yes", b: \'on\', c: "0x1F"}\nresources:\n- a.yaml\n',
        ),
        'ov/a.yaml': cm('a'),
      },
      'ov',
    ],
    [
      'targetNamespace overrides the namespace',
      {
        'ov/kustomization.yaml': k('namespace: mine\nresources:\n- a.yaml\n'),
        'ov/a.yaml': cm('a'),
      },
      'ov',
      { targetNamespace: 'theirs' },
    ],
    [
      'a regular expression in a target: x.y selects xay too',
      {
        'ov/kustomization.yaml': k(
          'resources:\n- a.yaml\npatches:\n- target:\n    name: x.y\n  patch: |-\n    - op: add\n      path: /data\n      value: {hit: "yes"}\n',
        ),
        'ov/a.yaml': [cm('x.y'), cm('xay'), cm('xy')].join('---\n'),
      },
      'ov',
    ],
    [
      'a patch that replaces the annotations (the origin stays the object’s file)',
      {
        'ov/kustomization.yaml':
          'resources:\n- a.yaml\npatches:\n- target:\n    kind: ConfigMap\n  patch: |-\n    - op: add\n      path: /metadata/annotations\n      value: {a: b}\n',
        'ov/a.yaml': cm('a'),
      },
      'ov',
    ],
    [
      'no kustomization file (Flux generates one): namespace folders listing their apps, a file and a plain folder',
      {
        'apps/network/kustomization.yaml': k('namespace: network\nresources:\n- ./namespace.yaml\n- ./echo/ks.yaml\n'),
        'apps/network/namespace.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: network\n',
        'apps/network/echo/ks.yaml':
          'apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: echo\nspec:\n  interval: 1h\n  path: ./apps/network/echo/app\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n    namespace: flux-system\n',
        'apps/network/echo/app/deploy.yaml': cm('never-read'),
        'apps/media/kustomization.yaml': k('namespace: media\nresources:\n- ./plex/ks.yaml\n- ./sonarr/ks.yaml\n'),
        'apps/media/plex/ks.yaml':
          'apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: plex\nspec:\n  interval: 1h\n  path: ./apps/media/plex/app\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n    namespace: flux-system\n',
        'apps/media/sonarr/ks.yaml':
          'apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: sonarr\nspec:\n  interval: 1h\n  path: ./apps/media/sonarr/app\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n    namespace: flux-system\n',
        'apps/cluster-settings.yaml': cm('cluster-settings', 'data:\n  TZ: Europe/Amsterdam\n'),
        'apps/extra/more.yml': cm('more'),
        'apps/README.md': '# not read\n',
      },
      'apps',
      {
        patches: [
          {
            target: { group: 'kustomize.toolkit.fluxcd.io', kind: 'Kustomization' },
            patch: '- op: add\n  path: /spec/prune\n  value: true\n',
          },
        ],
      },
    ],
    [
      'no kustomization file at the root of the tree, with a namePrefix and a targetNamespace',
      {
        'team/kustomization.yaml': k('resources:\n- cm.yaml\n'),
        'team/cm.yaml': cm('team'),
        'top.yaml': cm('top'),
      },
      '.',
      { namePrefix: 'p-', targetNamespace: 'tn' },
    ],
  ])('%s', async (_why, files, path, spec) => {
    const root = await tree(files);
    expect(await differential(root, path, _why, spec)).toBe('overlay');
  });

  it('every kustomization directory of the parity corpus that qualifies', async () => {
    const dirs = await corpusDirs();
    const ways = await mapLimit(dirs, 2, (d) => differential(d.root, d.path, `${d.root} ${d.path}`));
    expect(ways.filter((w) => w === 'overlay').length).toBeGreaterThanOrEqual(1);
  });

  // KR_OVERLAY_FUZZ=<n> runs n times as many seeds (a longer search than CI's, by hand).
  const scale = Math.max(1, Number(process.env['KR_OVERLAY_FUZZ'] ?? 1));
  it(
    'random overlays',
    async () => {
      const cases = Array.from({ length: 150 * scale }, (_, i) => 1 + i);
      const ways = await mapLimit(cases, 2, async (seed) => {
        const root = await tree(randomOverlay(seed));
        return differential(root, 'ov', `seed ${seed}: ${root}`);
      });
      // The fuzzer must reach the overlay build, not only its refusals.
      expect(ways.filter((w) => w === 'overlay').length).toBeGreaterThan(cases.length * 0.15);
    },
    120_000 * scale,
  );
});

describe('overlay build leaves to kustomize', () => {
  it.each<[string, Record<string, string>]>([
    ["no kustomization file and no YAML file (Flux's placeholder)", { 'ov/notes.txt': 'x\n' }],
    ['no kustomization file, and a file kustomize would not take as objects', { 'ov/a.yaml': 'key: value\n' }],
    [
      'a field it does not know',
      { 'ov/kustomization.yaml': 'openapi:\n  path: schema.json\nresources:\n- a.yaml\n', 'ov/a.yaml': cm('a') },
    ],
    ['no resources (Flux adds originAnnotations)', { 'ov/kustomization.yaml': 'namespace: x\n' }],
    ['a file outside its directory', { 'ov/kustomization.yaml': 'resources:\n- ../a.yaml\n', 'a.yaml': cm('a') }],
    ['a remote base', { 'ov/kustomization.yaml': 'resources:\n- https://github.com/x/y//z\n' }],
    [
      'a base listed twice',
      {
        'ov/kustomization.yaml': 'resources:\n- ../b\n- ../b\n',
        'b/kustomization.yaml': 'resources:\n- a.yaml\n',
        'b/a.yaml': cm('a'),
      },
    ],
    ['a cycle', { 'ov/kustomization.yaml': 'resources:\n- ../b\n', 'b/kustomization.yaml': 'resources:\n- ../ov\n' }],
    [
      'two kustomization files',
      {
        'ov/kustomization.yaml': 'resources:\n- a.yaml\n',
        'ov/kustomization.yml': 'resources: []\n',
        'ov/a.yaml': cm('a'),
      },
    ],
    [
      'a RoleBinding under a namespace',
      {
        'ov/kustomization.yaml': 'namespace: x\nresources:\n- a.yaml\n',
        'ov/a.yaml':
          'apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: rb\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: Role\n  name: r\n',
      },
    ],
    [
      'a CRD with a conversion webhook under a namespace',
      {
        'ov/kustomization.yaml': 'namespace: x\nresources:\n- a.yaml\n',
        'ov/a.yaml':
          'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: w.example.com\nspec:\n  conversion:\n    strategy: Webhook\n',
      },
    ],
    [
      'a label value YAML 1.1 reads as a boolean',
      { 'ov/kustomization.yaml': 'labels:\n- pairs:\n    a: yes\nresources:\n- a.yaml\n', 'ov/a.yaml': cm('a') },
    ],
    [
      'a patch that adds below a missing field',
      {
        'ov/kustomization.yaml':
          'resources:\n- a.yaml\npatches:\n- target:\n    kind: ConfigMap\n  patch: |-\n    - op: add\n      path: /data/x/y\n      value: z\n',
        'ov/a.yaml': cm('a'),
      },
    ],
    [
      'a __proto__ key in a label',
      {
        'ov/kustomization.yaml': 'labels:\n- pairs:\n    __proto__: x\nresources:\n- a.yaml\n',
        'ov/a.yaml': cm('a'),
      },
    ],
    [
      'a __proto__ key in a patch value',
      {
        'ov/kustomization.yaml':
          'resources:\n- a.yaml\npatches:\n- target:\n    kind: ConfigMap\n  patch: |-\n    - op: add\n      path: /data\n      value: {__proto__: {polluted: "yes"}}\n',
        'ov/a.yaml': cm('a'),
      },
    ],
    [
      'a chain of bases deeper than 64',
      Object.fromEntries([
        ['ov/kustomization.yaml', 'resources:\n- ../b0\n'],
        ...Array.from({ length: 70 }, (_, i) => [
          `b${i}/kustomization.yaml`,
          `resources:\n- ${i === 69 ? 'a.yaml' : `../b${i + 1}`}\n`,
        ]),
        ['b69/a.yaml', cm('a')],
      ]) as Record<string, string>,
    ],
    [
      'a JSON patch text',
      {
        'ov/kustomization.yaml':
          'resources:\n- a.yaml\npatches:\n- target:\n    kind: ConfigMap\n  patch: \'[{"op": "remove", "path": "/metadata/labels"}]\'\n',
        'ov/a.yaml': cm('a'),
      },
    ],
    [
      'a strategic merge patch',
      {
        'ov/kustomization.yaml':
          'resources:\n- a.yaml\npatches:\n- patch: |-\n    apiVersion: v1\n    kind: ConfigMap\n    metadata:\n      name: a\n    data:\n      x: y\n',
        'ov/a.yaml': cm('a'),
      },
    ],
    [
      'a listed file left out by .sourceignore',
      { 'ov/kustomization.yaml': 'resources:\n- a.yaml\n', 'ov/a.yaml': cm('a'), '.sourceignore': 'ov/a.yaml\n' },
    ],
  ])('%s', async (_why, files) => {
    const root = await tree(files);
    expect(await buildOverlay(root, 'ov', {})).toBeUndefined();
  });

  it('a symlinked resource', async () => {
    const root = await tree({ 'ov/kustomization.yaml': 'resources:\n- a.yaml\n', 'b.yaml': cm('b') });
    await symlink(join(root, 'b.yaml'), join(root, 'ov', 'a.yaml'));
    expect(await buildOverlay(root, 'ov', {})).toBeUndefined();
  });

  it('a spec that sets buildMetadata (Flux keeps the annotations on the objects)', () => {
    expect(specIsOverlay({ targetNamespace: 'x', namePrefix: 'p-', patches: [], images: [], buildMetadata: [] })).toBe(
      true,
    );
    expect(specIsOverlay({ buildMetadata: ['originAnnotations'] })).toBe(false);
  });
});
