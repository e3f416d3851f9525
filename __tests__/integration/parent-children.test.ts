// Parents and children as Flux has them (issue 34): a parent Kustomization whose build is its
// children's Kustomization files, patched by the parent. With both in the run, each child is
// reconciled from the object its parent's build produces (the parent's patches reach it), the
// parent does not write the child objects to the cluster (so no child is refused as an unsuspended
// Flux Kustomization that this very run created), and a child object an earlier run applied is left
// in the cluster, never deleted (Flux's finalizer would delete the child's objects).
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import type { Report } from '../../src/report/model.js';
import { adminClient, exists, freshNamespace, writeTree } from '../helpers/cluster.js';
import { installFluxKustomizationCrd } from '../helpers/flux-crd.js';
import { reconcileTree } from '../helpers/reconcile.js';

/** The monorepo layout: clusters/prod/apps.yaml (the parent) builds apps/, every app's ks.yaml. */
function monorepo(ns: string, apps: readonly string[]): Record<string, string> {
  const files: Record<string, string> = {
    'clusters/prod/apps.yaml': `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: ${ns}}
spec:
  interval: 10m
  prune: true
  path: ./apps
  sourceRef: {kind: GitRepository, name: flux-system, namespace: flux-system}
  targetNamespace: ${ns}
  patches:
    - target: {group: kustomize.toolkit.fluxcd.io, kind: Kustomization}
      patch: |
        - op: add
          path: /spec/postBuild
          value: {substitute: {TIER: gold}}
`,
    'apps/kustomization.yaml': `resources: [${apps.map((a) => `${a}/ks.yaml`).join(', ')}]\n`,
  };
  for (const app of apps) {
    files[`apps/${app}/ks.yaml`] = `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: ${app}}
spec:
  interval: 10m
  prune: true
  path: ./apps/${app}/app
  sourceRef: {kind: GitRepository, name: flux-system, namespace: flux-system}
`;
    files[`apps/${app}/app/cm.yaml`] =
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${app}-settings, namespace: ${ns}}\ndata: {tier: "\${TIER:=none}"}\n`;
  }
  return files;
}

const byKey = (report: Report) => new Map((report.kustomizations ?? []).map((k) => [k.kustomization, k]));

describe('a parent that applies its patched children', () => {
  let client: ClusterClient;
  beforeAll(async () => {
    client = await adminClient();
    await installFluxKustomizationCrd(client);
  });
  afterAll(() => {
    client.close();
  });

  const tier = async (ns: string, name: string) =>
    (await client.request<{ data?: Record<string, string> }>('GET', `/api/v1/namespaces/${ns}/configmaps/${name}`))
      .data?.['tier'];
  const fluxObject = (ns: string, name: string) =>
    exists(client, `/apis/kustomize.toolkit.fluxcd.io/v1/namespaces/${ns}/kustomizations/${name}`);

  it('reconciles each child as the parent builds it, and writes no child object', async () => {
    const ns = await freshNamespace(client);
    const apps = ['atuin', 'bazarr', 'cleanrr'];
    const root = await writeTree(monorepo(ns, apps));
    const log: string[] = [];
    const settings = {
      kustomizations: ['clusters/prod/*.yaml', 'apps/*/ks.yaml'],
      run: { holder: `test ${ns}`, source: `test/${ns}` },
    };
    const report = await reconcileTree(root, settings, log);
    expect(report.error).toBeUndefined();
    const reports = byKey(report);
    expect([...reports.keys()].sort()).toEqual([`${ns}/apps`, ...apps.map((a) => `${ns}/${a}`)].sort());
    for (const app of apps) {
      // The parent's patch (postBuild.substitute TIER: gold) reached the child's build.
      expect(await tier(ns, `${app}-settings`)).toBe('gold');
      expect(reports.get(`${ns}/${app}`)?.notes).toContain(
        `Built as its parent Kustomization ${ns}/apps produces it, which changes spec.postBuild of the file; ` +
          'not written to the cluster by the parent (this run reconciles it)',
      );
      // Not written to the cluster: no Flux object, so no "exists and is not suspended" refusal.
      expect(await fluxObject(ns, app)).toBe(false);
    }
    expect(reports.get(`${ns}/apps`)?.notes.join('\n')).toContain(
      `3 child Kustomization(s) of this build are reconciled by this run from this build's objects, not written to the cluster`,
    );
    expect(log.join('\n')).not.toContain('is not suspended');

    // A no-op run: nothing changes, nothing is refused.
    const again = await reconcileTree(root, settings, []);
    expect(again.error).toBeUndefined();
    expect(again.changeset.filter((e) => e.action !== 'unchanged')).toEqual([]);
  }, 120_000);

  it("starts each child after its parent, which creates the child's Namespace", async () => {
    const ns = await freshNamespace(client);
    const apps = ['a1', 'a2', 'a3', 'a4', 'a5', 'a6'];
    const files = monorepo(ns, apps);
    // The parent's build creates the Namespace its children's objects go to (no dependsOn anywhere);
    // without targetNamespace here (kustomize would rename the Namespace to it), so each child names
    // its own namespace.
    const target = `${ns}-apps`;
    files['clusters/prod/apps.yaml'] = files['clusters/prod/apps.yaml']!.replace(`  targetNamespace: ${ns}\n`, '');
    for (const app of apps)
      files[`apps/${app}/ks.yaml`] = files[`apps/${app}/ks.yaml`]!.replace(
        `metadata: {name: ${app}}`,
        `metadata: {name: ${app}, namespace: ${ns}}`,
      );
    files['apps/namespace.yaml'] = `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${target}}\n`;
    files['apps/kustomization.yaml'] = `resources: [namespace.yaml, ${apps.map((a) => `${a}/ks.yaml`).join(', ')}]\n`;
    for (const app of apps)
      files[`apps/${app}/app/cm.yaml`] =
        `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${app}-settings, namespace: ${target}}\ndata: {tier: "\${TIER:=none}"}\n`;
    const root = await writeTree(files);
    try {
      const report = await reconcileTree(root, {
        kustomizations: ['clusters/prod/*.yaml', 'apps/*/ks.yaml'],
        run: { holder: `test ${ns}`, source: `test/${ns}` },
      });
      expect(report.error).toBeUndefined();
      for (const app of apps) expect(await tier(target, `${app}-settings`)).toBe('gold');
    } finally {
      await client.request('DELETE', `/api/v1/namespaces/${target}`).catch(() => undefined);
    }
  }, 120_000);

  it('gives a child passed alone the identity and patches of its parent in the repository', async () => {
    const ns = await freshNamespace(client);
    const root = await writeTree(monorepo(ns, ['atuin', 'bazarr']));
    const source = { holder: `test ${ns}`, source: `test/${ns}` };
    // Only one child's file: its parent is found among the repository's other files.
    const alone = await reconcileTree(root, { kustomizations: ['apps/atuin/ks.yaml'], run: source });
    expect(alone.error).toBeUndefined();
    expect(alone.kustomization).toBe(`${ns}/atuin`);
    expect(alone.inventory).toBe(`${ns}/kustomize-reconcile.${ns}.atuin`);
    expect(await tier(ns, 'atuin-settings')).toBe('gold');
    // The same identity with every file: one inventory, nothing relabelled or changed.
    const all = await reconcileTree(root, { kustomizations: ['clusters/prod/*.yaml', 'apps/*/ks.yaml'], run: source });
    expect(all.error).toBeUndefined();
    const atuin = byKey(all).get(`${ns}/atuin`);
    expect(atuin?.inventory).toBe(`${ns}/kustomize-reconcile.${ns}.atuin`);
    expect(atuin?.changeset.map((e) => `${e.subject} ${e.action}`)).toEqual([
      `ConfigMap/${ns}/atuin-settings unchanged`,
    ]);
  }, 120_000);

  it('leaves a child object that an earlier parent run applied in the cluster, and reconciles the child', async () => {
    const ns = await freshNamespace(client);
    const root = await writeTree(monorepo(ns, ['atuin']));
    const source = { holder: `test ${ns}`, source: `test/${ns}` };
    // The parent alone: its build's child object is applied, as under Flux (suspended here, as a
    // hand-over from Flux leaves it).
    const parentOnly = await reconcileTree(root, {
      kustomizations: ['clusters/prod/*.yaml'],
      run: source,
    });
    expect(parentOnly.error).toBeUndefined();
    expect(await fluxObject(ns, 'atuin')).toBe(true);
    await client.request('PATCH', `/apis/kustomize.toolkit.fluxcd.io/v1/namespaces/${ns}/kustomizations/atuin`, {
      body: { spec: { suspend: true } },
      contentType: 'application/merge-patch+json',
    });

    // Now with its child: the child object leaves the parent's apply but is not deleted.
    const both = await reconcileTree(root, { kustomizations: ['clusters/prod/*.yaml', 'apps/*/ks.yaml'], run: source });
    expect(both.error).toBeUndefined();
    expect(await fluxObject(ns, 'atuin')).toBe(true);
    expect(byKey(both).get(`${ns}/apps`)?.notes.join('\n')).toContain(
      `1 child Kustomization object(s) left this build's apply because this run reconciles them; they stay in the cluster`,
    );
    expect(await tier(ns, 'atuin-settings')).toBe('gold');
  }, 120_000);

  it('takes the fields a child file leaves out from its parent, and prunes as the parent says', async () => {
    const ns = await freshNamespace(client);
    const files = monorepo(ns, ['atuin', 'bazarr']);
    // The parent sets prune and interval on every child (home-ops style); the child files leave them out.
    files['clusters/prod/apps.yaml'] = files['clusters/prod/apps.yaml']!.replace(
      '          value: {substitute: {TIER: gold}}\n',
      '          value: {substitute: {TIER: gold}}\n        - op: add\n          path: /spec/prune\n          value: true\n        - op: add\n          path: /spec/interval\n          value: 1h\n',
    );
    for (const app of ['atuin', 'bazarr']) {
      files[`apps/${app}/ks.yaml`] = files[`apps/${app}/ks.yaml`]!.replace('  interval: 10m\n  prune: true\n', '');
      files[`apps/${app}/app/extra.yaml`] =
        `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${app}-extra, namespace: ${ns}}\ndata: {x: "1"}\n`;
    }
    const root = await writeTree(files);
    const settings = {
      kustomizations: ['clusters/prod/*.yaml', 'apps/*/ks.yaml'],
      run: { holder: `test ${ns}`, source: `test/${ns}` },
    };
    const first = await reconcileTree(root, settings);
    expect(first.error).toBeUndefined();
    expect(await tier(ns, 'atuin-settings')).toBe('gold');
    expect(await exists(client, `/api/v1/namespaces/${ns}/configmaps/atuin-extra`)).toBe(true);

    // Removed from Git: pruned, as the prune: true the parent gave the child says.
    await rm(join(root, 'apps/atuin/app/extra.yaml'));
    const second = await reconcileTree(root, settings);
    expect(second.error).toBeUndefined();
    expect(
      byKey(second)
        .get(`${ns}/atuin`)
        ?.pruned?.map((e) => `${e.subject} ${e.action}`),
    ).toEqual([`ConfigMap/${ns}/atuin-extra deleted`]);
    expect(await exists(client, `/api/v1/namespaces/${ns}/configmaps/atuin-extra`)).toBe(false);

    // The child file alone: its parent is found among the repository's other files, which gives it
    // prune and interval.
    const alone = await reconcileTree(root, { ...settings, kustomizations: ['apps/bazarr/ks.yaml'] });
    expect(alone.error).toBeUndefined();
    expect(alone.kustomization).toBe(`${ns}/bazarr`);
    expect(alone.changeset.map((e) => `${e.subject} ${e.action}`).sort()).toEqual([
      `ConfigMap/${ns}/bazarr-extra unchanged`,
      `ConfigMap/${ns}/bazarr-settings unchanged`,
    ]);

    // Without the parent in the repository, it says what it lacks and what to do.
    await rm(join(root, 'clusters/prod/apps.yaml'));
    const orphan = await reconcileTree(root, { ...settings, kustomizations: ['apps/bazarr/ks.yaml'] }).then(
      (r) => r.error,
      (e: unknown) => (e as Error).message,
    );
    expect(orphan).toMatch(
      /apps\/bazarr\/ks\.yaml, document 1, Kustomization .*: spec\.interval: is required; no Kustomization builds this file \(a parent whose spec\.patches or postBuild would set it: add the field, or pass the parent's file\)/,
    );
  }, 120_000);
});
