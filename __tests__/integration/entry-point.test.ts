// Issue 50, item 4: Flux's entry point decides what runs. `flux bootstrap`'s layout: the root
// Kustomization (clusters/prod/flux-system/gotk-sync.yaml) builds ./clusters/prod, its own file among
// what it applies; named alone, the run follows every Kustomization file that it and its children apply.
// A child commented out of its folder's kustomization.yaml is reached by nothing and never applied. With
// a glob, a matched file nothing applies and that cannot stand alone is left out with one note; `exclude`
// leaves a file out. Each test has a namespace of its own, where the "flux-system" objects live.
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import type { Report } from '../../src/report/model.js';
import { adminClient, exists, freshNamespace, writeTree } from '../helpers/cluster.js';
import { installFluxKustomizationCrd } from '../helpers/flux-crd.js';
import { reconcileTree } from '../helpers/reconcile.js';

/** A top-level Kustomization of the cluster's directory, in `ns` (flux bootstrap's flux-system). */
const top = (ns: string, name: string, path: string, extra = '') => `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: ${name}, namespace: ${ns}}
spec:
  interval: 10m
  path: ${path}
  prune: true
  sourceRef: {kind: GitRepository, name: flux-system}
${extra}`;

/** A child's ks.yaml as cluster-template writes it: no namespace (its folder's kustomization.yaml sets it). */
const child = (ns: string, name: string, extra = '') => `---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: &app ${name}
spec:
  targetNamespace: ${ns}
  path: ./apps/team/${name}/app
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
    namespace: ${ns}
  wait: false
${extra}`;

const configMap = (name: string, ns?: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}${ns ? `, namespace: ${ns}` : ''}}\ndata: {from: ${name}}\n`;

/**
 * flux bootstrap's layout in namespace `ns`. gotk-components.yaml is a stand-in (a ConfigMap, not
 * Flux's controllers); gotk-sync.yaml holds the GitRepository (Flux's source CRD is installed by
 * installFluxKustomizationCrd) and the root Kustomization, whose path is the cluster's directory.
 */
function bootstrap(ns: string): Record<string, string> {
  return {
    'clusters/prod/flux-system/kustomization.yaml': 'resources: [gotk-components.yaml, gotk-sync.yaml]\n',
    'clusters/prod/flux-system/gotk-components.yaml': configMap('gotk-components', ns),
    'clusters/prod/flux-system/gotk-sync.yaml': `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: flux-system, namespace: ${ns}}
spec: {interval: 1m, url: 'https://github.com/acme/fleet', ref: {branch: main}}
---
${top(ns, 'flux-system', './clusters/prod')}`,
    'clusters/prod/infrastructure.yaml': top(ns, 'infra', './infrastructure'),
    'clusters/prod/apps.yaml': top(ns, 'apps', './apps', '  dependsOn: [{name: infra}]\n'),
    'infrastructure/cm.yaml': configMap('infra', ns),
    // The apps folder lists two apps; a third is commented out of it (its files are still there), and
    // its ks.yaml leaves spec.interval to the parent (cluster-template's children do): it cannot stand alone.
    'apps/kustomization.yaml': 'resources:\n  - ./team\n',
    'apps/team/kustomization.yaml': `namespace: ${ns}\nresources:\n  - ./echo/ks.yaml\n  - ./ingress/ks.yaml\n  # - ./old/ks.yaml\n`,
    'apps/team/echo/ks.yaml': child(ns, 'echo', '  interval: 1h\n'),
    'apps/team/echo/app/cm.yaml': configMap('echo'),
    'apps/team/ingress/ks.yaml': child(ns, 'ingress', '  interval: 1h\n'),
    'apps/team/ingress/app/cm.yaml': configMap('ingress'),
    'apps/team/old/ks.yaml': child(ns, 'old'),
    'apps/team/old/app/cm.yaml': configMap('old'),
  };
}

const names = (report: Report) => (report.kustomizations ?? []).map((k) => k.kustomization).sort();
const failures = (report: Report) =>
  [report.error, ...(report.kustomizations ?? []).map((k) => k.error && `${k.kustomization}: ${k.error}`)].filter(
    (e) => e !== undefined,
  );

describe("Flux's entry point decides what runs", () => {
  let client: ClusterClient;
  beforeAll(async () => {
    client = await adminClient();
    await installFluxKustomizationCrd(client);
  });
  afterAll(() => {
    client.close();
  });

  const configMapExists = (ns: string, name: string) => exists(client, `/api/v1/namespaces/${ns}/configmaps/${name}`);
  const run = (ns: string, root: string, kustomizations: string[], exclude: string[] = [], log: string[] = []) =>
    reconcileTree(
      root,
      { kustomizations, exclude, run: { holder: `entry-point ${ns}`, source: 'acme/fleet', branch: 'main' } },
      log,
    );

  it('follows what the root named alone applies, through its children, and not the child commented out', async () => {
    const ns = await freshNamespace(client);
    const root = await writeTree(bootstrap(ns));
    try {
      const log: string[] = [];
      const report = await run(ns, root, ['clusters/prod/flux-system/gotk-sync.yaml'], [], log);
      expect(failures(report), log.join('\n')).toEqual([]);
      expect(names(report)).toEqual(
        ['apps', 'echo', 'flux-system', 'infra', 'ingress'].map((n) => `${ns}/${n}`).sort(),
      );
      // Every reached Kustomization's objects, and the root's own (the components stand-in).
      for (const cm of ['gotk-components', 'infra', 'echo', 'ingress'])
        expect(await configMapExists(ns, cm)).toBe(true);
      expect(
        await exists(client, `/apis/source.toolkit.fluxcd.io/v1/namespaces/${ns}/gitrepositories/flux-system`),
      ).toBe(true);
      // The child commented out of apps/team/kustomization.yaml: nothing reaches it, nothing of it applied.
      expect(await configMapExists(ns, 'old')).toBe(false);
      expect(JSON.stringify(report)).not.toContain('apps/team/old');
      // The entry point's note, once, naming every file it followed (a note of the files' loading: the
      // run's log says it).
      const entry = log.filter((n) => n.includes("Flux's entry point"));
      expect(entry, log.join('\n')).toEqual([
        `clusters/prod/flux-system/gotk-sync.yaml: Kustomization ${ns}/flux-system builds its own file, Flux's entry point: ` +
          'the run follows what it applies (4 more Kustomization files: apps/team/echo/ks.yaml, apps/team/ingress/ks.yaml, ' +
          'clusters/prod/apps.yaml, clusters/prod/infrastructure.yaml)',
      ]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  }, 180_000);

  it('with a glob, leaves out with one note a matched child nothing applies that cannot stand alone', async () => {
    const ns = await freshNamespace(client);
    const root = await writeTree(bootstrap(ns));
    try {
      const log: string[] = [];
      const report = await run(ns, root, ['clusters/prod/*.yaml', 'apps/**/ks.yaml'], [], log);
      expect(failures(report), log.join('\n')).toEqual([]);
      expect(names(report)).toEqual(['apps', 'echo', 'infra', 'ingress'].map((n) => `${ns}/${n}`).sort());
      for (const cm of ['infra', 'echo', 'ingress']) expect(await configMapExists(ns, cm)).toBe(true);
      expect(await configMapExists(ns, 'old')).toBe(false);
      const left = log.filter((n) => n.includes('left out'));
      expect(left, log.join('\n')).toHaveLength(1);
      expect(left[0]).toContain('1 Kustomization file matched by a glob left out');
      expect(left[0]).toContain('(apps/team/old/ks.yaml)');
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  }, 180_000);

  it('exclude leaves a child out: neither loaded nor followed, its objects not applied', async () => {
    const ns = await freshNamespace(client);
    const root = await writeTree(bootstrap(ns));
    try {
      const log: string[] = [];
      // From the entry point, and with a glob: the excluded child is in neither run.
      const report = await run(ns, root, ['clusters/prod/flux-system/gotk-sync.yaml'], ['apps/team/ingress/**'], log);
      expect(failures(report), log.join('\n')).toEqual([]);
      expect(names(report)).toEqual(['apps', 'echo', 'flux-system', 'infra'].map((n) => `${ns}/${n}`).sort());
      const globbed = await run(
        ns,
        root,
        ['clusters/prod/*.yaml', 'apps/**/ks.yaml'],
        ['apps/team/ingress/ks.yaml'],
        log,
      );
      expect(failures(globbed), log.join('\n')).toEqual([]);
      expect(names(globbed)).toEqual(['apps', 'echo', 'infra'].map((n) => `${ns}/${n}`).sort());
      expect(await configMapExists(ns, 'echo')).toBe(true);
      expect(await configMapExists(ns, 'ingress')).toBe(false);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  }, 180_000);
});
