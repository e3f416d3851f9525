import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { decideNamespaces, type NamespaceCandidate, type Transform } from '../../src/flux/applied-by.js';
import { loadClusters, loadKustomizations } from '../../src/flux/load.js';
import { SpecError, deferredProblems } from '../../src/flux/parse.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

type Candidate = Omit<NamespaceCandidate, 'builds' | 'name'> & {
  name?: string;
  /** A file's transform, or only the namespace a kustomization.yaml sets (no prefix or suffix). */
  builds: Record<string, Partial<Transform> | string | undefined>;
};

const candidate = (c: Partial<Candidate> & Pick<Candidate, 'key' | 'file'>): NamespaceCandidate => ({
  ownNamespace: undefined,
  targetNamespace: undefined,
  ...c,
  name: c.name ?? c.key.split('/').pop()!,
  builds: new Map(
    Object.entries(c.builds ?? {}).map(([file, t]) => [
      file,
      typeof t === 'object'
        ? { namespace: undefined, prefix: '', suffix: '', ...t }
        : { namespace: t, prefix: '', suffix: '' },
    ]),
  ),
});

describe('decideNamespaces', () => {
  it.each<{ why: string; candidates: NamespaceCandidate[]; want: (string | undefined)[] }>([
    {
      why: 'a Kustomization built by none keeps its own namespace, else flux-system',
      candidates: [
        candidate({ key: 'a', file: 'a.yaml', ownNamespace: 'team' }),
        candidate({ key: 'b', file: 'b.yaml' }),
      ],
      want: ['team', 'flux-system'],
    },
    {
      why: "the parent's targetNamespace wins over the child's own namespace",
      candidates: [
        candidate({ key: 'p', file: 'p.yaml', targetNamespace: 'tenant', builds: { 'apps/c.yaml': undefined } }),
        candidate({ key: 'c', file: 'apps/c.yaml', ownNamespace: 'own' }),
      ],
      want: ['flux-system', 'tenant'],
    },
    {
      why: 'a kustomization.yaml namespace on the way counts when the parent has no targetNamespace',
      candidates: [
        candidate({ key: 'p', file: 'p.yaml', builds: { 'apps/c.yaml': 'from-kustomization' } }),
        candidate({ key: 'c', file: 'apps/c.yaml', ownNamespace: 'own' }),
      ],
      want: ['flux-system', 'from-kustomization'],
    },
    {
      why: "the parent's targetNamespace wins over a kustomization.yaml namespace",
      candidates: [
        candidate({ key: 'p', file: 'p.yaml', targetNamespace: 't', builds: { 'apps/c.yaml': 'k' } }),
        candidate({ key: 'c', file: 'apps/c.yaml' }),
      ],
      want: ['flux-system', 't'],
    },
    {
      why: 'a parent without a namespace to give leaves the child its own',
      candidates: [
        candidate({ key: 'p', file: 'p.yaml', builds: { 'apps/c.yaml': undefined, 'apps/d.yaml': undefined } }),
        candidate({ key: 'c', file: 'apps/c.yaml', ownNamespace: 'own' }),
        candidate({ key: 'd', file: 'apps/d.yaml' }),
      ],
      want: ['flux-system', 'own', 'flux-system'],
    },
    {
      why: "nested: the grandchild takes its own parent's targetNamespace, not the grandparent's",
      candidates: [
        candidate({ key: 'g', file: 'g.yaml', targetNamespace: 'g-ns', builds: { 'clusters/p.yaml': undefined } }),
        candidate({ key: 'p', file: 'clusters/p.yaml', targetNamespace: 'p-ns', builds: { 'apps/c.yaml': undefined } }),
        candidate({ key: 'c', file: 'apps/c.yaml', ownNamespace: 'own' }),
      ],
      want: ['flux-system', 'g-ns', 'p-ns'],
    },
    {
      why: 'a Kustomization is not its own parent',
      candidates: [candidate({ key: 'self', file: 'k.yaml', targetNamespace: 'x', builds: { 'k.yaml': undefined } })],
      want: ['flux-system'],
    },
    {
      why: 'two parents that agree',
      candidates: [
        candidate({ key: 'p', file: 'p.yaml', targetNamespace: 't', builds: { 'c.yaml': undefined } }),
        candidate({ key: 'q', file: 'q.yaml', builds: { 'c.yaml': 't' } }),
        candidate({ key: 'c', file: 'c.yaml' }),
      ],
      want: ['flux-system', 'flux-system', 't'],
    },
  ])('$why', ({ candidates, want }) => {
    expect(decideNamespaces(candidates).map((d) => d.namespace)).toEqual(want);
  });

  it.each<{ why: string; transform: Partial<Transform>; want: string }>([
    { why: 'no prefix or suffix', transform: {}, want: 'apps' },
    { why: 'a prefix and a suffix', transform: { prefix: 'dev-', suffix: '-eu' }, want: 'dev-apps-eu' },
  ])('names: $why', ({ transform, want }) => {
    const decisions = decideNamespaces([
      candidate({ key: 'p', file: 'p.yaml', builds: { 'apps.yaml': transform } }),
      candidate({ key: 'apps', file: 'apps.yaml', ownNamespace: 'team' }),
    ]);
    expect(decisions[1]).toEqual({ namespace: 'team', name: want, appliedBy: 'p' });
  });

  it('reports a Kustomization that two parents put in different namespaces', () => {
    const decisions = decideNamespaces([
      candidate({ key: 'flux-system/p', file: 'p.yaml', targetNamespace: 'a', builds: { 'c.yaml': undefined } }),
      candidate({ key: 'flux-system/q', file: 'q.yaml', targetNamespace: 'b', builds: { 'c.yaml': undefined } }),
      candidate({ key: 'flux-system/c', file: 'c.yaml' }),
    ]);
    expect(decisions[2]).toEqual({
      problem:
        'c.yaml: Kustomization flux-system/c is built by several Kustomizations that give it different namespaces ' +
        'or names (flux-system/p makes it a/c, flux-system/q makes it b/c); Flux would create one copy each. ' +
        'Keep the file in the path of one of them',
    });
  });
});

describe('loadKustomizations: the namespace a parent gives', () => {
  let root: string;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'spec-applied-by-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  async function tree(files: Record<string, string>): Promise<void> {
    for (const [path, text] of Object.entries(files)) {
      await mkdir(dirname(join(root, path)), { recursive: true });
      await writeFile(join(root, path), text);
    }
  }

  /** A Kustomization file: `name`, building `path`, with `namespace` (omitted when undefined) and more spec. */
  const ks = (name: string, namespace: string | undefined, spec: Record<string, unknown> = {}): string =>
    stringify({
      apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
      kind: 'Kustomization',
      metadata: namespace === undefined ? { name } : { name, namespace },
      spec: { interval: '10m', prune: true, sourceRef: { kind: 'GitRepository', name: 'repo' }, ...spec },
    });
  const CM = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n';

  it.each<{ why: string; files: Record<string, string>; want: string[] }>([
    {
      why: 'a child in the generated build of a parent with targetNamespace takes it',
      files: {
        'clusters/tenants.yaml': ks('tenants', 'flux-system', { path: './tenants', targetNamespace: 'tenant-a' }),
        'tenants/apps.yaml': ks('apps', undefined, { path: './apps' }),
        'tenants/sub/explicit.yaml': ks('explicit', 'own', { path: './apps' }),
        'apps/cm.yaml': CM,
      },
      want: ['flux-system/tenants', 'tenant-a/apps', 'tenant-a/explicit'],
    },
    {
      why: 'a child outside every parent path keeps its own namespace, else flux-system',
      files: {
        'clusters/tenants.yaml': ks('tenants', 'flux-system', { path: './tenants', targetNamespace: 'tenant-a' }),
        'tenants/cm.yaml': CM,
        'elsewhere/apps.yaml': ks('apps', undefined, { path: './tenants' }),
        'elsewhere/own.yaml': ks('own', 'team', { path: './tenants' }),
      },
      want: ['flux-system/tenants', 'flux-system/apps', 'team/own'],
    },
    {
      why: 'nested two levels: each takes the targetNamespace of the Kustomization that builds it',
      files: {
        'clusters/root.yaml': ks('root', 'flux-system', { path: './layer1', targetNamespace: 'ns1' }),
        'layer1/middle.yaml': ks('middle', 'flux-system', { path: './layer2', targetNamespace: 'ns2' }),
        'layer2/leaf.yaml': ks('leaf', 'flux-system', { path: './apps' }),
        'apps/cm.yaml': CM,
      },
      want: ['flux-system/root', 'ns1/middle', 'ns2/leaf'],
    },
    {
      why: 'nested, middle without targetNamespace: the leaf keeps its own namespace',
      files: {
        'clusters/root.yaml': ks('root', 'flux-system', { path: './layer1', targetNamespace: 'ns1' }),
        'layer1/middle.yaml': ks('middle', undefined, { path: './layer2' }),
        'layer2/leaf.yaml': ks('leaf', 'own', { path: './apps' }),
        'apps/cm.yaml': CM,
      },
      want: ['flux-system/root', 'ns1/middle', 'own/leaf'],
    },
    {
      why: 'a kustomization.yaml decides which files a parent builds, and its namespace counts',
      files: {
        'clusters/tenants.yaml': ks('tenants', 'flux-system', { path: './tenants' }),
        'tenants/kustomization.yaml': 'namespace: from-kustomization\nresources: [listed.yaml, sub]\n',
        'tenants/listed.yaml': ks('listed', 'own', { path: './apps' }),
        'tenants/unlisted.yaml': ks('unlisted', 'own', { path: './apps' }),
        'tenants/sub/kustomization.yaml': 'namespace: inner\nresources: [deep.yaml]\n',
        'tenants/sub/deep.yaml': ks('deep', undefined, { path: './apps' }),
        'apps/cm.yaml': CM,
      },
      want: ['flux-system/tenants', 'from-kustomization/listed', 'own/unlisted', 'from-kustomization/deep'],
    },
    {
      why: 'a generated build takes a subdirectory with a kustomization.yaml whole, through it',
      files: {
        'clusters/tenants.yaml': ks('tenants', 'flux-system', { path: './tenants' }),
        'tenants/a/kustomization.yaml': 'namespace: team-a\nresources: [apps.yaml]\n',
        'tenants/a/apps.yaml': ks('apps', undefined, { path: './apps' }),
        'tenants/a/not-listed.yaml': ks('not-listed', 'own', { path: './apps' }),
        'apps/cm.yaml': CM,
      },
      want: ['flux-system/tenants', 'team-a/apps', 'own/not-listed'],
    },
    {
      why: 'spec.components are part of the build',
      files: {
        'clusters/tenants.yaml': ks('tenants', 'flux-system', {
          path: './tenants',
          targetNamespace: 't',
          components: ['../components/extra'],
        }),
        'tenants/cm.yaml': CM,
        'components/extra/kustomization.yaml':
          'apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources: [extra.yaml]\n',
        'components/extra/extra.yaml': ks('extra', undefined, { path: './tenants' }),
      },
      want: ['flux-system/tenants', 't/extra'],
    },
    {
      why: "spec.namePrefix/nameSuffix replace the top kustomization's; inner ones add to them",
      files: {
        'clusters/tenants.yaml': ks('tenants', 'flux-system', {
          path: './tenants',
          namePrefix: 'dev-',
          nameSuffix: '-eu',
        }),
        'tenants/kustomization.yaml': 'namePrefix: replaced-\nresources: [apps.yaml, sub]\n',
        'tenants/apps.yaml': ks('apps', 'flux-system', { path: './apps' }),
        'tenants/sub/kustomization.yaml': 'namePrefix: inner-\nnameSuffix: -in\nresources: [db.yaml]\n',
        'tenants/sub/db.yaml': ks('db', 'flux-system', { path: './apps' }),
        'apps/cm.yaml': CM,
      },
      want: ['flux-system/tenants', 'flux-system/dev-apps-eu', 'flux-system/dev-inner-db-in-eu'],
    },
    {
      why: 'a generated build: spec.namePrefix renames the files it takes directly',
      files: {
        'clusters/tenants.yaml': ks('tenants', 'flux-system', { path: './tenants', namePrefix: 'dev-' }),
        'tenants/apps.yaml': ks('apps', 'flux-system', { path: './apps' }),
        'apps/cm.yaml': CM,
      },
      want: ['flux-system/tenants', 'flux-system/dev-apps'],
    },
  ])('$why', async ({ files, want }) => {
    await tree(files);
    const specs = await loadKustomizations(['**/*.yaml'], root);
    expect(specs.map((s) => `${s.namespace}/${s.name}`).sort()).toEqual([...want].sort());
  });

  it('stops at kustomizations that reference each other, even with a prefix that grows each time round', async () => {
    await tree({
      'clusters/tenants.yaml': ks('tenants', 'flux-system', { path: './a' }),
      'a/kustomization.yaml': 'namePrefix: a-\nresources: [../b, apps.yaml]\n',
      'b/kustomization.yaml': 'namePrefix: b-\nresources: [../a]\n',
      'a/apps.yaml': ks('apps', 'flux-system', { path: './a' }),
    });
    const specs = await loadKustomizations(['clusters/tenants.yaml', 'a/apps.yaml'], root);
    expect(specs.map((s) => `${s.namespace}/${s.name}`)).toEqual(['flux-system/tenants', 'flux-system/a-apps']);
  });

  it('does not read a kustomization file that a symlink puts outside the root', async () => {
    const outside = await mkdtemp(join(tmpdir(), 'spec-applied-by-outside-'));
    try {
      await writeFile(join(outside, 'kustomization.yaml'), 'namespace: leaked\nresources: [apps.yaml]\n');
      await tree({
        'clusters/tenants.yaml': ks('tenants', 'flux-system', { path: './tenants' }),
        'tenants/apps.yaml': ks('apps', 'own', { path: './tenants' }),
      });
      await symlink(join(outside, 'kustomization.yaml'), join(root, 'tenants/kustomization.yaml'));
      const specs = await loadKustomizations(['clusters/tenants.yaml', 'tenants/apps.yaml'], root);
      expect(specs.map((s) => `${s.namespace}/${s.name}`)).toEqual(['flux-system/tenants', 'own/apps']);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it('moves the defaults that follow the namespace (sourceRef, dependsOn) along', async () => {
    await tree({
      'clusters/tenants.yaml': ks('tenants', 'flux-system', { path: './tenants', targetNamespace: 'tenant-a' }),
      'tenants/apps.yaml': ks('apps', 'flux-system', {
        path: './apps',
        dependsOn: [{ name: 'infra' }, { name: 'crds', namespace: 'platform' }],
      }),
      'apps/cm.yaml': CM,
    });
    const [, apps] = await loadKustomizations(['clusters/tenants.yaml', 'tenants/apps.yaml'], root);
    expect(apps?.namespace).toBe('tenant-a');
    expect(apps?.sourceRef).toEqual({ kind: 'GitRepository', name: 'repo', namespace: 'tenant-a' });
    expect(apps?.dependsOn).toEqual([
      { name: 'infra', namespace: 'tenant-a' },
      { name: 'crds', namespace: 'platform' },
    ]);
  });

  it('finds two Kustomizations with one namespace/name once their namespace is known', async () => {
    await tree({
      'clusters/tenants.yaml': ks('tenants', 'flux-system', { path: './tenants', targetNamespace: 'tenant-a' }),
      'tenants/apps.yaml': ks('apps', 'flux-system', { path: './apps' }),
      'other/apps.yaml': ks('apps', 'tenant-a', { path: './apps' }),
      'apps/cm.yaml': CM,
    });
    const error = await loadKustomizations(['**/*.yaml'], root).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SpecError);
    expect((error as SpecError).problems).toEqual([
      'Kustomization tenant-a/apps is defined twice: in other/apps.yaml, document 1 and in tenants/apps.yaml, document 1',
    ]);
  });

  describe('a child file that leaves fields to its parent', () => {
    /** A child's file: `spec` as written, nothing added. */
    const bare = (spec: Record<string, unknown>) =>
      stringify({
        apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
        kind: 'Kustomization',
        metadata: { name: 'app' },
        spec,
      });
    const parent = ks('apps', 'flux-system', { path: './apps' });

    it.each<{ why: string; child: Record<string, unknown>; deferred: boolean; problem?: RegExp }>([
      {
        why: 'spec.prune and spec.interval left out (a parent patch sets them)',
        child: { path: './app', sourceRef: { kind: 'GitRepository', name: 'repo' } },
        deferred: true,
      },
      { why: 'spec.sourceRef left out', child: { path: './app', prune: true, interval: '1h' }, deferred: true },
      {
        why: 'a duration to substitute',
        child: {
          path: './app',
          prune: true,
          interval: '${INTERVAL}',
          sourceRef: { kind: 'GitRepository', name: 'repo' },
        },
        deferred: true,
      },
      {
        why: 'a namespace to substitute',
        child: {
          path: './app',
          prune: true,
          interval: '1h',
          targetNamespace: '${NS}',
          sourceRef: { kind: 'GitRepository', name: 'repo' },
        },
        deferred: true,
      },
      {
        why: 'a field of the wrong type, which no parent fixes',
        child: { path: './app', prune: 'yes', interval: '1h', sourceRef: { kind: 'GitRepository', name: 'repo' } },
        deferred: false,
        problem: /spec\.prune: must be a YAML boolean/,
      },
      {
        why: 'a field left out beside a field of the wrong type',
        child: { path: './app', wait: 'yes', sourceRef: { kind: 'GitRepository', name: 'repo' } },
        deferred: false,
        problem: /spec\.wait/,
      },
    ])('$why: loaded with its parent when a parent may fix it', async ({ child, deferred, problem }) => {
      await tree({ 'clusters/apps.yaml': parent, 'apps/app.yaml': bare(child), 'app/cm.yaml': CM });
      const loaded = loadKustomizations(['clusters/apps.yaml', 'apps/app.yaml'], root);
      if (deferred) {
        const specs = await loaded;
        expect(specs.map((s) => `${s.namespace}/${s.name}`)).toEqual(['flux-system/apps', 'flux-system/app']);
        expect(deferredProblems(specs[1]!)).toBeInstanceOf(SpecError);
        expect(deferredProblems(specs[0]!)).toBeUndefined();
      } else {
        const error = await loaded.catch((e: unknown) => e);
        expect(error).toBeInstanceOf(SpecError);
        expect((error as SpecError).problems.join('\n')).toMatch(problem!);
      }
    });

    it('is refused, naming what to do, when no Kustomization builds it', async () => {
      await tree({
        'clusters/apps.yaml': parent,
        'apps/app.yaml': bare({ path: './app', sourceRef: { kind: 'GitRepository', name: 'repo' } }),
      });
      const none = () => Promise.resolve(new Set<string>());
      const error = await loadKustomizations(['apps/app.yaml'], root, { builtElsewhere: none }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(SpecError);
      expect((error as SpecError).problems).toEqual([
        expect.stringMatching(
          /^apps\/app\.yaml, document 1, Kustomization flux-system\/app: spec\.interval: is required; no Kustomization builds this file \(a parent whose spec\.patches or postBuild would set it: add the field, or pass the parent's file\)$/,
        ),
        expect.stringMatching(/spec\.prune: is required; no Kustomization builds this file/),
      ]);
    });

    it("is kept, passed alone, when a Kustomization of the repository's other files builds it", async () => {
      await tree({
        'clusters/apps.yaml': parent,
        'apps/app.yaml': bare({ path: './app', sourceRef: { kind: 'GitRepository', name: 'repo' } }),
      });
      const asked: string[][] = [];
      const specs = await loadKustomizations(['apps/app.yaml'], root, {
        builtElsewhere: (files) => {
          asked.push([...files]);
          return Promise.resolve(new Set(files));
        },
      });
      expect(asked).toEqual([['apps/app.yaml']]);
      expect(specs.map((s) => `${s.namespace}/${s.name}`)).toEqual(['flux-system/app']);
      expect(deferredProblems(specs[0]!)).toBeInstanceOf(SpecError);
    });

    it("is judged the same way by the plan's load, cluster by cluster", async () => {
      await tree({
        'clusters/apps.yaml': parent,
        'apps/app.yaml': bare({ path: './app', sourceRef: { kind: 'GitRepository', name: 'repo' } }),
      });
      const kept = await loadClusters(['apps/app.yaml'], root, [''], {
        builtElsewhere: (files) => Promise.resolve(new Set(files)),
      });
      expect([...(kept.get('') ?? [])].map((s) => `${s.namespace}/${s.name}`)).toEqual(['flux-system/app']);
      const refused = await loadClusters(['apps/app.yaml'], root, [''], {
        builtElsewhere: () => Promise.resolve(new Set<string>()),
      }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(SpecError);
      expect((refused as SpecError).problems[0]).toMatch(
        /spec\.interval: is required; no Kustomization builds this file/,
      );
    });
  });
});
