// Flux's entry point decides what runs (src/flux/entry.ts, load.ts): a root named alone is followed
// through what it and its children apply; a file a glob matched that no Kustomization applies and that
// cannot stand alone is left out with one note; `exclude` leaves files out. Real files, no cluster.
import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { loadKustomizations } from '../../src/flux/load.js';
import { SpecError } from '../../src/flux/parse.js';
import { writeTree } from '../helpers/cluster.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

/** A child's ks.yaml as cluster-template writes it: no namespace (its folder's kustomization sets it). */
const child = (name: string, path: string, extra = '') => `---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: &app ${name}
spec:
  targetNamespace: default
  path: ${path}
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
    namespace: flux-system
  wait: false
${extra}`;

const top = (name: string, path: string, extra = '') => `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: ${name}, namespace: flux-system}
spec:
  interval: 10m
  path: ${path}
  prune: true
  sourceRef: {kind: GitRepository, name: flux-system}
${extra}`;

/** `flux bootstrap`'s layout: clusters/prod/flux-system is the root, which builds clusters/prod itself. */
function bootstrap(): Record<string, string> {
  return {
    'clusters/prod/flux-system/kustomization.yaml': 'resources: [gotk-components.yaml, gotk-sync.yaml]\n',
    'clusters/prod/flux-system/gotk-components.yaml':
      'apiVersion: v1\nkind: Namespace\nmetadata: {name: flux-system}\n',
    'clusters/prod/flux-system/gotk-sync.yaml': `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: flux-system, namespace: flux-system}
spec: {interval: 1m, url: 'ssh://git@github.com/acme/fleet', ref: {branch: main}, secretRef: {name: flux-system}}
---
${top('flux-system', './clusters/prod')}`,
    'clusters/prod/infrastructure.yaml': top('infra', './infrastructure'),
    'clusters/prod/apps.yaml': top('apps', './apps', '  dependsOn: [{name: infra}]\n'),
    'infrastructure/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: infra, namespace: default}\n',
    // The apps folder lists two apps; a third is commented out of it (its file is still there), and
    // its ks.yaml leaves spec.interval to the parent (cluster-template's children do): it cannot stand alone.
    'apps/kustomization.yaml': 'resources:\n  - ./network\n',
    'apps/network/kustomization.yaml':
      'namespace: network\nresources:\n  - ./namespace.yaml\n  - ./echo/ks.yaml\n  - ./ingress/ks.yaml\n  # - ./old/ks.yaml\n',
    'apps/network/namespace.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata: {name: network}\n',
    'apps/network/echo/ks.yaml': child('echo', './apps/network/echo/app', '  interval: 1h\n'),
    'apps/network/echo/app/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: echo}\n',
    'apps/network/ingress/ks.yaml': child('ingress', './apps/network/ingress/app', '  interval: 1h\n'),
    'apps/network/ingress/app/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ingress}\n',
    'apps/network/old/ks.yaml': child('old', './apps/network/old/app'),
    'apps/network/old/app/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: old}\n',
  };
}

let root: string | undefined;
afterEach(async () => {
  if (root) await rm(root, { recursive: true, force: true });
  root = undefined;
});

async function load(files: Record<string, string>, patterns: string[], exclude: string[] = []) {
  root = await writeTree(files);
  const notes: string[] = [];
  const specs = await loadKustomizations(patterns, root, { note: (l) => notes.push(l), exclude });
  return { names: specs.map((s) => `${s.namespace}/${s.name}`).sort(), notes };
}

describe('an entry point named alone', () => {
  it.each<[string, string[], string[], string[]]>([
    [
      'the root is followed through its children, and theirs (namespaced by their folder)',
      ['clusters/prod/flux-system/gotk-sync.yaml'],
      [],
      ['flux-system/apps', 'flux-system/flux-system', 'flux-system/infra', 'network/echo', 'network/ingress'],
    ],
    [
      'an excluded child is neither loaded nor followed',
      ['clusters/prod/flux-system/gotk-sync.yaml'],
      ['apps/network/ingress/**', 'clusters/prod/infrastructure.yaml'],
      ['flux-system/apps', 'flux-system/flux-system', 'network/echo'],
    ],
    [
      'an excluded parent cuts what only it reaches',
      ['clusters/prod/flux-system/gotk-sync.yaml'],
      ['clusters/prod/apps.yaml'],
      ['flux-system/flux-system', 'flux-system/infra'],
    ],
    [
      'a parent that does not build its own file is not an entry point: its children are not loaded',
      ['clusters/prod/apps.yaml'],
      [],
      ['flux-system/apps'],
    ],
    [
      'a glob over the root is no entry point either (each file as matched)',
      ['clusters/prod/*.yaml'],
      [],
      ['flux-system/apps', 'flux-system/infra'],
    ],
  ])('%s', async (_, patterns, exclude, names) => {
    const got = await load(bootstrap(), patterns, exclude);
    expect(got.names).toEqual(names);
  });

  it('says once what it followed, naming the files', async () => {
    const { notes } = await load(bootstrap(), ['clusters/prod/flux-system/gotk-sync.yaml']);
    const entry = notes.filter((n) => n.includes("Flux's entry point"));
    expect(entry).toEqual([
      "clusters/prod/flux-system/gotk-sync.yaml: Kustomization flux-system/flux-system builds its own file, Flux's entry point: the run follows what it applies (4 more Kustomization files: apps/network/echo/ks.yaml, apps/network/ingress/ks.yaml, clusters/prod/apps.yaml, clusters/prod/infrastructure.yaml)",
    ]);
    // The commented-out child is never mentioned: nothing reached it.
    expect(notes.join('\n')).not.toContain('old');
  });

  it('does not follow a child built from another source', async () => {
    const files = bootstrap();
    files['clusters/prod/apps.yaml'] = top('apps', './apps').replace(
      'sourceRef: {kind: GitRepository, name: flux-system}',
      'sourceRef: {kind: OCIRepository, name: apps}',
    );
    const got = await load(files, ['clusters/prod/flux-system/gotk-sync.yaml']);
    expect(got.names).toEqual(['flux-system/apps', 'flux-system/flux-system', 'flux-system/infra']);
  });
});

describe('files a glob matched that no Kustomization applies', () => {
  it('are left out with one note when they cannot stand alone', async () => {
    const { names, notes } = await load(bootstrap(), ['clusters/prod/*.yaml', 'apps/**/ks.yaml']);
    expect(names).toEqual(['flux-system/apps', 'flux-system/infra', 'network/echo', 'network/ingress']);
    const left = notes.filter((n) => n.includes('left out'));
    expect(left).toHaveLength(1);
    expect(left[0]).toContain('1 Kustomization file matched by a glob left out');
    expect(left[0]).toContain('(apps/network/old/ks.yaml)');
  });

  it('are refused when named', async () => {
    await expect(load(bootstrap(), ['clusters/prod/*.yaml', 'apps/network/old/ks.yaml'])).rejects.toThrow(SpecError);
    await expect(load(bootstrap(), ['clusters/prod/*.yaml', 'apps/network/old/ks.yaml'])).rejects.toThrow(
      /apps\/network\/old\/ks\.yaml.*no Kustomization builds this file/s,
    );
  });

  it('are kept when they stand alone', async () => {
    const files = bootstrap();
    files['apps/network/old/ks.yaml'] = child('old', './apps/network/old/app', '  interval: 1h\n');
    const { names } = await load(files, ['clusters/prod/*.yaml', 'apps/**/ks.yaml']);
    expect(names).toContain('flux-system/old');
  });

  it('fifty of them: one note, never a refused run', async () => {
    const files = bootstrap();
    for (let i = 0; i < 50; i++) files[`apps/retired/app${i}/ks.yaml`] = child(`app${i}`, `./apps/retired/app${i}`);
    const { names, notes } = await load(files, ['clusters/prod/*.yaml', 'apps/**/ks.yaml']);
    expect(names).toHaveLength(4);
    const left = notes.filter((n) => n.includes('left out'));
    expect(left).toHaveLength(1);
    expect(left[0]).toMatch(/^51 Kustomization files matched by a glob left out: .* and 41 more\)/);
  });

  it('exclude leaves files out before anything is judged', async () => {
    const { names, notes } = await load(
      bootstrap(),
      ['clusters/prod/*.yaml', 'apps/**/ks.yaml'],
      ['apps/network/old/*'],
    );
    expect(names).toEqual(['flux-system/apps', 'flux-system/infra', 'network/echo', 'network/ingress']);
    expect(notes.join('\n')).not.toContain('left out');
  });
});
