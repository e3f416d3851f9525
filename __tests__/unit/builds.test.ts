// The run's build service (reconcile/builds.ts): one render per spec a run, whoever asks; one test
// for "built from this checkout".
import { rm } from 'node:fs/promises';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { SourceVerdict } from '../../src/flux/checkout.js';
import type { KustomizationSpec } from '../../src/flux/types.js';
import { settingsOf } from '../../src/options/settings.js';
import { Builds } from '../../src/reconcile/builds.js';
import { renderSpec } from '../../src/reconcile/render-spec.js';
import { resolveSpecs } from '../../src/reconcile/resolve.js';
import { writeTree } from '../helpers/cluster.js';
import { kustomizationYaml } from '../helpers/manifests.js';
import { KUSTOMIZE } from '../helpers/paths.js';
import { defaultSpec } from '../helpers/spec.js';

// Every render the service starts, counted.
vi.mock('../../src/reconcile/render-spec.js', async (original) => {
  const real = await original<typeof import('../../src/reconcile/render-spec.js')>();
  return { ...real, renderSpec: vi.fn(real.renderSpec) };
});
const renders = vi.mocked(renderSpec);

const roots: string[] = [];
afterAll(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))));
beforeEach(() => {
  renders.mockClear();
});

/** A parent (infra, whose build is the child's Kustomization file) and its child (app, a ConfigMap). */
async function parentAndChild() {
  const root = await writeTree({
    'clusters/infra.yaml': kustomizationYaml({ name: 'infra', path: './children' }),
    // The child reads substituteFrom: without a cluster, its render notes that it skipped it.
    'children/app.yaml': kustomizationYaml({
      name: 'app',
      path: './app',
      spec: 'postBuild:\n  substituteFrom:\n  - {kind: ConfigMap, name: vars}',
    }),
    'app/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: default}\ndata: {a: b}\n',
  });
  roots.push(root);
  const settings = settingsOf({
    kubeconfig: { kind: 'default' },
    root,
    kustomizations: ['clusters/infra.yaml', 'children/app.yaml'],
    kustomizeBin: KUSTOMIZE,
    mode: 'preview',
  });
  const all = await resolveSpecs(settings);
  const secrets: string[] = [];
  const builds = await Builds.open({
    settings,
    all,
    sources: new Map(),
    secret: (v) => secrets.push(v),
    log: () => undefined,
  });
  const [infra, app] = [all.find((s) => s.name === 'infra')!, all.find((s) => s.name === 'app')!];
  return { builds, infra, app };
}

describe('Builds.objects', () => {
  it('renders a parent once a run, for its children and for any other caller', async () => {
    const { builds, infra, app } = await parentAndChild();
    try {
      const built = await builds.asBuilt(app);
      expect(built.parent).toBe('flux-system/infra');
      expect(renders).toHaveBeenCalledTimes(1);
      // Claims, a preview's foresight and `build` ask for the same render: none is made again.
      const [a, b] = await Promise.all([
        builds.objects(infra, { decrypt: false }),
        builds.objects({ ...infra }, { decrypt: false }),
      ]);
      expect(a).toBe(b);
      expect(a.objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(['Kustomization/app']);
      expect(renders).toHaveBeenCalledTimes(1);
      // Decrypted or not are two renders.
      await builds.objects(infra, { decrypt: true });
      expect(renders).toHaveBeenCalledTimes(2);
    } finally {
      await builds.close();
    }
  });

  it('gives every caller the notes of the one render, the first as they come', async () => {
    const { builds, app } = await parentAndChild();
    try {
      const spec = (await builds.prepared(app)).spec;
      const first: string[] = [];
      const second: string[] = [];
      await builds.objects(spec, { decrypt: false }, { note: (l) => first.push(l) });
      await builds.objects(spec, { decrypt: false }, { note: (l) => second.push(l) });
      expect(first).toEqual([expect.stringContaining('spec.postBuild.substituteFrom skipped')]);
      expect(second).toEqual(first);
      // The parent's render (asBuilt) and the child's.
      expect(renders).toHaveBeenCalledTimes(2);
    } finally {
      await builds.close();
    }
  });

  it('a render that fails fails for every caller, once', async () => {
    const { builds, app } = await parentAndChild();
    try {
      const broken: KustomizationSpec = { ...app, path: './missing' };
      await expect(builds.objects(broken, { decrypt: false })).rejects.toThrow(/spec.path "\.\/missing"/);
      await expect(builds.objects(broken, { decrypt: false })).rejects.toThrow(/spec.path "\.\/missing"/);
      expect(renders).toHaveBeenCalledTimes(1);
    } finally {
      await builds.close();
    }
  });
});

describe('Builds.buildsHere', () => {
  const spec = (name: string, sourceRef?: KustomizationSpec['sourceRef']) =>
    defaultSpec({ name, ...(sourceRef ? { sourceRef } : { sourceRef: undefined }) });
  const git = (name: string) => ({ kind: 'GitRepository' as const, name, namespace: 'flux-system' });
  const fetch = { kind: 'fetch', source: {} } as unknown as SourceVerdict;
  const settings = settingsOf({ kubeconfig: { kind: 'default' }, root: '/nowhere', mode: 'preview' });

  it.each<
    [
      string,
      KustomizationSpec,
      ReadonlyMap<string, SourceVerdict>,
      (() => Promise<Map<string, SourceVerdict>>) | undefined,
      boolean,
    ]
  >([
    [
      'the run says this checkout',
      spec('a', git('repo')),
      new Map([['flux-system/a', { kind: 'checkout' }]]),
      undefined,
      true,
    ],
    ['the run fetches its source', spec('a', git('other')), new Map([['flux-system/a', fetch]]), undefined, false],
    [
      'the run cannot have its source',
      spec('a', git('gone')),
      new Map([['flux-system/a', { kind: 'other', problem: 'no' }]]),
      undefined,
      false,
    ],
    ['no sourceRef (the inputs)', spec('a'), new Map(), undefined, true],
    [
      "another job's, judged: another source",
      spec('a', git('other')),
      new Map(),
      () => Promise.resolve(new Map([['flux-system/a', fetch]])),
      false,
    ],
    [
      "another job's, judged: this checkout",
      spec('a', git('repo')),
      new Map(),
      () => Promise.resolve(new Map([['flux-system/a', { kind: 'checkout' }]])),
      true,
    ],
    ["another job's, not judged", spec('a', git('other')), new Map(), undefined, true],
    [
      "another job's, the judging failed",
      spec('a', git('other')),
      new Map(),
      () => Promise.reject(new Error('unreadable')),
      true,
    ],
  ])('%s', async (_, s, sources, judge, here) => {
    const builds = await Builds.open({
      settings,
      all: [s],
      sources,
      secret: () => undefined,
      log: () => undefined,
      ...(judge ? { judge } : {}),
    });
    expect(builds.buildsHere(s)).toBe(here);
    // Where it is built from agrees (one built here is never fetched).
    if (here) expect((await builds.source(s)).kind).toBe('checkout');
    await builds.close();
  });
});
