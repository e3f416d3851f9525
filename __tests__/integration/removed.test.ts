// A Kustomization whose file left the repository while its inventory stayed in the cluster: reported
// as orphaned by default; with removed-kustomizations: delete, its deletionPolicy decides.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ClusterClient } from '../../src/cluster/client.js';
import { InventoryStore } from '../../src/inventory/store.js';
import { closingLines } from '../../src/report/render.js';
import type { OptionValues } from '../../src/options/settings.js';
import { adminClient, exists as existsAt, eventually, freshNamespace, writeTree } from '../helpers/cluster.js';
import { configMap, kustomizationYaml } from '../helpers/manifests.js';
import { reconcileTree } from '../helpers/reconcile.js';

/** The Kustomization `name` in `ns` building ./<name> with prune: true, and `spec`'s lines. */
const ks = (ns: string, name: string, spec = '') => kustomizationYaml({ name, namespace: ns, prune: true, spec });

describe('removed Kustomizations', () => {
  let client: ClusterClient;
  beforeAll(async () => {
    client = await adminClient();
  });
  afterAll(() => {
    client.close();
  });

  const exists = (path: string) => existsAt(client, path);
  const cmPath = (ns: string, name: string) => `/api/v1/namespaces/${ns}/configmaps/${name}`;
  const leasePath = (ns: string, name: string) =>
    `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/kustomize-reconcile.${ns}.${name}`;

  /** A run over ks.yaml; each test is its own repository, so no test sees another's Kustomizations. */
  function run(root: string, ns: string, extra: Partial<OptionValues> = {}, log: string[] = []) {
    return reconcileTree(
      root,
      { lockLeaseMs: 3_000, run: { source: `test/${ns}`, holder: `test ${ns}` }, ...extra },
      log,
    );
  }

  it('does nothing to an inventory of the set that records no repository (written by hand, or forged)', async () => {
    const ns = await freshNamespace(client);
    const root = await writeTree({
      'ks.yaml': [ks(ns, 'keep'), ks(ns, 'gone')].join('---\n'),
      'keep/cm.yaml': configMap(ns, 'keep-1'),
      'gone/cm.yaml': configMap(ns, 'gone-1'),
    });
    expect((await run(root, ns)).ok).toBe(true);
    // Someone rewrites gone's inventory without its repository (its set, which names it, stays).
    const store = new InventoryStore(client, ns, { name: 'gone', namespace: ns });
    await store.update((latest) => {
      const { source: _source, ...status } = latest!.status;
      return { ...latest!, status };
    });
    expect((await store.read()).record?.status.source).toBeUndefined();

    await writeFile(join(root, 'ks.yaml'), ks(ns, 'keep'));
    const applied = await run(root, ns, { removedKustomizations: 'delete' });
    expect(applied.ok).toBe(true);
    expect(applied.removed?.map((r) => `${r.kustomization} ${r.action}`)).toEqual([`${ns}/gone orphaned`]);
    expect(applied.removed?.[0]?.reason).toContain(
      'its inventory does not record this repository, so nothing is done to it',
    );
    expect(await exists(cmPath(ns, 'gone-1'))).toBe(true);
    expect(await exists(cmPath(ns, `kustomize-reconcile.${ns}.gone`))).toBe(true);
  });

  it('reports a removed Kustomization as orphaned, previews and then applies its deletion', async () => {
    const ns = await freshNamespace(client);
    const root = await writeTree({
      'ks.yaml': [ks(ns, 'keep'), ks(ns, 'gone')].join('---\n'),
      'keep/cm.yaml': configMap(ns, 'keep-1'),
      'gone/cm.yaml': [configMap(ns, 'gone-1'), configMap(ns, 'gone-2')].join('---\n'),
    });
    expect((await run(root, ns)).ok).toBe(true);
    expect(await exists(cmPath(ns, 'gone-1'))).toBe(true);

    // The file no longer names `gone`.
    await writeFile(join(root, 'ks.yaml'), ks(ns, 'keep'));
    const log: string[] = [];
    const reported = await run(root, ns, {}, log);
    expect(reported.ok).toBe(true);
    expect(reported.removed).toEqual([
      {
        kustomization: `${ns}/gone`,
        inventory: `${ns}/kustomize-reconcile.${ns}.gone`,
        objects: 2,
        deletionPolicy: 'MirrorPrune',
        action: 'orphaned',
        reason:
          'its file is gone from the repository; its 2 object(s) stay in the cluster (set removed-kustomizations: delete to apply its deletionPolicy)',
      },
    ]);
    // Said once, in the closing lines, not also in the progress log.
    expect(closingLines(reported).filter((l) => l.startsWith(`Kustomization ${ns}/gone (removed from`))).toHaveLength(
      1,
    );
    expect(log.filter((l) => l.includes(`${ns}/gone`))).toEqual([]);
    expect(await exists(cmPath(ns, 'gone-1'))).toBe(true);
    expect(await exists(cmPath(ns, `kustomize-reconcile.${ns}.gone`))).toBe(true);

    // A preview with delete shows what would go, and deletes nothing.
    const preview = await run(root, ns, { mode: 'preview', removedKustomizations: 'delete' });
    expect(preview.ok).toBe(true);
    expect(preview.removed?.map((r) => r.action)).toEqual(['deleted']);
    expect(preview.pruned?.map((p) => `${p.subject} ${p.action}`).sort()).toEqual([
      `ConfigMap/${ns}/gone-1 deleted`,
      `ConfigMap/${ns}/gone-2 deleted`,
    ]);
    expect(await exists(cmPath(ns, 'gone-1'))).toBe(true);
    expect(await exists(cmPath(ns, `kustomize-reconcile.${ns}.gone`))).toBe(true);

    // Applied: MirrorPrune with prune: true deletes the objects, then the inventory and its lease.
    const applied = await run(root, ns, { removedKustomizations: 'delete' });
    expect(applied.ok).toBe(true);
    expect(applied.removed).toMatchObject([
      { kustomization: `${ns}/gone`, action: 'deleted', reason: 'deletionPolicy: MirrorPrune with prune: true' },
    ]);
    expect(await exists(cmPath(ns, 'gone-1'))).toBe(false);
    expect(await exists(cmPath(ns, 'gone-2'))).toBe(false);
    expect(await exists(cmPath(ns, `kustomize-reconcile.${ns}.gone`))).toBe(false);
    expect(await exists(leasePath(ns, 'gone'))).toBe(false);
    // The Kustomization that stayed is untouched.
    expect(await exists(cmPath(ns, 'keep-1'))).toBe(true);
    expect(await exists(cmPath(ns, `kustomize-reconcile.${ns}.keep`))).toBe(true);
    // Nothing is left to report.
    expect((await run(root, ns, { removedKustomizations: 'delete' })).removed).toBeUndefined();
  });

  it('leaves the objects of Orphan and of MirrorPrune without prune, and removes only their inventories', async () => {
    const ns = await freshNamespace(client);
    const root = await writeTree({
      'ks.yaml': [
        ks(ns, 'keep'),
        ks(ns, 'orphan', 'deletionPolicy: Orphan'),
        kustomizationYaml({ name: 'noprune', namespace: ns }),
      ].join('---\n'),
      'keep/cm.yaml': configMap(ns, 'keep-1'),
      'orphan/cm.yaml': configMap(ns, 'orphan-1'),
      'noprune/cm.yaml': configMap(ns, 'noprune-1'),
    });
    expect((await run(root, ns)).ok).toBe(true);
    await writeFile(join(root, 'ks.yaml'), ks(ns, 'keep'));
    const report = await run(root, ns, { removedKustomizations: 'delete' });
    expect(report.ok).toBe(true);
    expect(report.removed?.map((r) => `${r.kustomization} ${r.action}: ${r.reason}`)).toEqual([
      `${ns}/noprune released: deletionPolicy: MirrorPrune with prune: false: its objects stay in the cluster`,
      `${ns}/orphan released: deletionPolicy: Orphan: its objects stay in the cluster`,
    ]);
    expect(await exists(cmPath(ns, 'orphan-1'))).toBe(true);
    expect(await exists(cmPath(ns, 'noprune-1'))).toBe(true);
    expect(await exists(cmPath(ns, `kustomize-reconcile.${ns}.orphan`))).toBe(false);
    expect(await exists(cmPath(ns, `kustomize-reconcile.${ns}.noprune`))).toBe(false);
  });

  it('deletes nothing when the run failed, and waits for termination under WaitForTermination', async () => {
    const ns = await freshNamespace(client);
    const held = `, finalizers: [example.com/hold]`;
    const root = await writeTree({
      'ks.yaml': [ks(ns, 'keep'), ks(ns, 'gone', 'deletionPolicy: WaitForTermination')].join('---\n'),
      'keep/cm.yaml': configMap(ns, 'keep-1'),
      'gone/cm.yaml': [configMap(ns, 'gone-held', held), configMap(ns, 'gone-free')].join('---\n'),
    });
    expect((await run(root, ns)).ok).toBe(true);

    // `keep` now fails to apply: the run fails, and `gone` is only reported.
    await writeFile(join(root, 'ks.yaml'), ks(ns, 'keep'));
    await writeFile(
      join(root, 'keep/cm.yaml'),
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad, namespace: ${ns}}\ndata: {"bad key!": x}\n`,
    );
    const failed = await run(root, ns, { removedKustomizations: 'delete' });
    expect(failed.ok).toBe(false);
    expect(failed.removed?.map((r) => r.action)).toEqual(['orphaned']);
    expect(failed.removed?.[0]?.reason).toContain('not deleted because this run failed');
    expect(await exists(cmPath(ns, 'gone-free'))).toBe(true);

    await writeFile(join(root, 'keep/cm.yaml'), configMap(ns, 'keep-1'));
    // The finalizer keeps gone-held terminating; the run must wait until it is released, and say so.
    const log: string[] = [];
    const pending = run(root, ns, { removedKustomizations: 'delete' }, log);
    const terminating = await eventually('gone-held terminating', 20_000, async () => {
      const o = await client.request<{ metadata: { deletionTimestamp?: string } }>('GET', cmPath(ns, 'gone-held'));
      return o.metadata.deletionTimestamp;
    });
    expect(terminating).toBeDefined();
    await new Promise((r) => setTimeout(r, 2_500));
    // Still waiting: the inventory is there until the objects are gone.
    expect(await exists(cmPath(ns, `kustomize-reconcile.${ns}.gone`))).toBe(true);
    await client.request('PATCH', cmPath(ns, 'gone-held'), {
      body: { metadata: { finalizers: null } },
      contentType: 'application/merge-patch+json',
    });
    const report = await pending;
    expect(report.ok).toBe(true);
    expect(report.removed?.[0]).toMatchObject({
      action: 'deleted',
      deletionPolicy: 'WaitForTermination',
      reason: 'deletionPolicy: WaitForTermination; all objects terminated',
    });
    expect(await exists(cmPath(ns, 'gone-free'))).toBe(false);
    expect(await exists(cmPath(ns, 'gone-held'))).toBe(false);
    expect(await exists(cmPath(ns, `kustomize-reconcile.${ns}.gone`))).toBe(false);
  });

  it('keeps the Namespace of a removed Kustomization while another’s objects live in it, unless allowed', async () => {
    const ns = await freshNamespace(client);
    const team = `${ns}-team`;
    const root = await writeTree({
      'ks.yaml': [ks(ns, 'keep'), ks(ns, 'gone')].join('---\n'),
      'keep/cm.yaml': configMap(ns, 'keep-1'),
      'gone/all.yaml': [`apiVersion: v1\nkind: Namespace\nmetadata: {name: ${team}}\n`, configMap(team, 'gone-1')].join(
        '---\n',
      ),
    });
    expect((await run(root, ns)).ok).toBe(true);
    const labels = { 'kustomize.toolkit.fluxcd.io/name': 'b', 'kustomize.toolkit.fluxcd.io/namespace': 'flux-system' };
    await client.request('POST', `/api/v1/namespaces/${team}/configmaps`, {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'b-config', namespace: team, labels } },
    });

    await writeFile(join(root, 'ks.yaml'), ks(ns, 'keep'));
    const refused = await run(root, ns, { removedKustomizations: 'delete' });
    expect(refused.ok).toBe(false);
    expect(refused.removed?.map((r) => r.action)).toEqual(['refused']);
    expect(refused.error).toContain(
      `removed Kustomizations were not deleted:\n  ${ns}/gone: pruning Namespace/${team} would also delete the 1 ` +
        'object(s) in it that this run does not prune',
    );
    expect(refused.error).toContain(`in Namespace/${team}: 1 ConfigMap (b-config) of Kustomization flux-system/b`);
    expect(await exists(cmPath(team, 'b-config'))).toBe(true);
    expect(await exists(cmPath(team, 'gone-1'))).toBe(true);
    expect(await exists(cmPath(ns, `kustomize-reconcile.${ns}.gone`))).toBe(true);

    const allowed = await run(root, ns, { removedKustomizations: 'delete', allowLargePrune: true });
    expect(allowed.ok, allowed.error).toBe(true);
    expect(allowed.removed?.map((r) => r.action)).toEqual(['deleted']);
    await eventually(`Namespace ${team} gone`, 60_000, async () =>
      (await exists(`/api/v1/namespaces/${team}`)) ? undefined : true,
    );
    expect(await exists(cmPath(ns, `kustomize-reconcile.${ns}.gone`))).toBe(false);
  }, 90_000);

  it('never treats another set’s inventories as removed', async () => {
    const ns = await freshNamespace(client);
    const root = await writeTree({
      'ks.yaml': [ks(ns, 'one'), ks(ns, 'two')].join('---\n'),
      'one/cm.yaml': configMap(ns, 'one-1'),
      'two/cm.yaml': configMap(ns, 'two-1'),
    });
    expect((await run(root, ns)).ok).toBe(true);
    // A second workflow of the same repository with other patterns names only `one`.
    await writeFile(join(root, 'one-only.yaml'), ks(ns, 'one'));
    const other = await run(root, ns, { kustomizations: ['one-only.yaml'], removedKustomizations: 'delete' });
    expect(other.ok).toBe(true);
    expect(other.removed).toBeUndefined();
    expect(await exists(cmPath(ns, 'two-1'))).toBe(true);
    const store = new InventoryStore(client, ns, { name: 'two', namespace: ns });
    expect((await store.read()).record?.entries.map((e) => e.id)).toEqual([`${ns}_two-1__ConfigMap`]);
  });
});
