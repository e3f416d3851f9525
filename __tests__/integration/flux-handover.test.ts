// Taking a Kustomization over from Flux on the real cluster: Flux's status.inventory is the previous
// inventory, so what Git removed at the switch is pruned (within the usual safety rules), and a Flux
// Kustomization that is not suspended refuses a run that writes.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { FLUX_API_VERSION } from '../../src/objects/flux.js';
import { readFluxKustomization } from '../../src/inventory/flux-object.js';
import { InventoryStore } from '../../src/inventory/store.js';
import type { Report } from '../../src/report/model.js';
import { exitStatusOf } from '../../src/report/exit.js';
import type { OptionValues } from '../../src/options/settings.js';
import { adminClient, exists, freshNamespace, writeTree } from '../helpers/cluster.js';
import {
  createFluxKustomization,
  fluxOwnerLabels,
  installFluxKustomizationCrd,
  type FluxKustomizationFixture,
} from '../helpers/flux-crd.js';
import { configMap, kustomizationYaml } from '../helpers/manifests.js';
import { reconcileTree } from '../helpers/reconcile.js';

const RBAC = 'rbac.authorization.k8s.io';

/** The Kustomization app in `ns` building ./app with prune: true. */
const ksFile = (ns: string) => kustomizationYaml({ namespace: ns, prune: true });

const cmPath = (ns: string, name: string) => `/api/v1/namespaces/${ns}/configmaps/${name}`;
const cmEntry = (ns: string, name: string) => ({ id: `${ns}_${name}__ConfigMap`, v: 'v1' });

describe('hand-over from Flux', () => {
  let client: ClusterClient;
  beforeAll(async () => {
    client = await adminClient();
    await installFluxKustomizationCrd(client);
  }, 180_000);
  /** Flux Kustomizations this file created: deleted at the end, so that a Flux controller later run on
   * the shared cluster finds none of them. */
  const created: string[] = [];
  const fluxKustomization = async (f: FluxKustomizationFixture) => {
    await createFluxKustomization(client, f);
    created.push(`/apis/${FLUX_API_VERSION}/namespaces/${f.namespace}/kustomizations/${f.name}`);
  };
  afterAll(async () => {
    for (const path of created) await client.request('DELETE', path).catch(() => undefined);
    client.close();
  });

  /** A ConfigMap as Flux left it: with Flux's owner labels for ns/app unless `labels` says otherwise. */
  async function fluxConfigMap(
    ns: string,
    name: string,
    labels: Record<string, string> = fluxOwnerLabels(ns, 'app'),
    annotations: Record<string, string> = {},
  ): Promise<void> {
    await client.request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      body: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace: ns, labels, annotations },
        data: { a: 'b' },
      },
    });
  }

  /** Git: the Kustomization file and app/ with a ConfigMap per name. */
  const repo = (ns: string, names: string[]) =>
    writeTree({
      'ks.yaml': ksFile(ns),
      'app/kustomization.yaml': `resources: [${names.map((n) => `${n}.yaml`).join(', ')}]\n`,
      ...Object.fromEntries(names.map((n) => [`app/${n}.yaml`, configMap(ns, n)])),
    });

  function run(root: string, extra: Partial<OptionValues> = {}): Promise<Report> {
    return reconcileTree(root, { lockLeaseMs: 3_000, ...extra });
  }

  const inventoryIds = async (ns: string) =>
    ((await new InventoryStore(client, ns, { name: 'app', namespace: ns }).read()).record?.entries ?? [])
      .map((e) => e.id)
      .sort();
  const prunedOf = (r: Report) =>
    (r.pruned ?? []).map((p) => `${p.subject} ${p.action}${p.reason ? `: ${p.reason}` : ''}`).sort();

  it('prunes what Git removed at the switch, within the owner-label and prune: disabled rules, and says what it imported', async () => {
    const ns = await freshNamespace(client, 'flux-take');
    const role = `handover:${ns}`;
    const stays = `handover:stays:${ns}`;
    const clusterRole = (name: string) => ({
      apiVersion: `${RBAC}/v1`,
      kind: 'ClusterRole',
      metadata: { name, labels: fluxOwnerLabels(ns, 'app') },
      rules: [],
    });
    await fluxConfigMap(ns, 'keep');
    await fluxConfigMap(ns, 'gone');
    // Listed in Flux's inventory, but no longer Flux's object for ns/app: never deleted.
    await fluxConfigMap(ns, 'unlabelled', {});
    await fluxConfigMap(ns, 'other', fluxOwnerLabels(ns, 'other'));
    await fluxConfigMap(ns, 'held', fluxOwnerLabels(ns, 'app'), { 'kustomize.toolkit.fluxcd.io/prune': 'disabled' });
    for (const name of [role, stays])
      await client.request('POST', `/apis/${RBAC}/v1/clusterroles`, { body: clusterRole(name) });
    await fluxKustomization({
      namespace: ns,
      name: 'app',
      suspend: true,
      entries: [
        ...['gone', 'held', 'keep', 'other', 'unlabelled'].map((n) => cmEntry(ns, n)),
        // cli-utils writes an RBAC name's ':' as '__'.
        { id: `_handover__${ns}_${RBAC}_ClusterRole`, v: 'v1' },
        { id: `_handover__stays__${ns}_${RBAC}_ClusterRole`, v: 'v1' },
      ],
    });
    const root = await repo(ns, ['keep']);
    // Still in Git: the same object as Flux's `__` entry, so never pruned.
    await writeFile(join(root, 'app/role.yaml'), JSON.stringify({ ...clusterRole(stays), metadata: { name: stays } }));
    await writeFile(join(root, 'app/kustomization.yaml'), 'resources: [keep.yaml, role.yaml]\n');

    const report = await run(root);

    expect(report.error).toBeUndefined();
    expect(report.notes).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^Imported 7 entries from Flux Kustomization ${ns}/app's status\\.inventory as the previous inventory: `,
        ),
      ),
    );
    expect(prunedOf(report)).toEqual([
      `ClusterRole/${role} deleted`,
      `ConfigMap/${ns}/gone deleted`,
      `ConfigMap/${ns}/held skipped: it is marked kustomize.toolkit.fluxcd.io/prune: disabled`,
      `ConfigMap/${ns}/other skipped: its owner labels name ${ns}/other, not ${ns}/app (taken over or relabelled)`,
      `ConfigMap/${ns}/unlabelled skipped: its owner labels name no Kustomization, not ${ns}/app (taken over or relabelled)`,
    ]);
    expect(await exists(client, cmPath(ns, 'gone'))).toBe(false);
    expect(await exists(client, `/apis/${RBAC}/v1/clusterroles/${role}`)).toBe(false);
    expect(await exists(client, `/apis/${RBAC}/v1/clusterroles/${stays}`)).toBe(true);
    for (const kept of ['keep', 'unlabelled', 'other', 'held'])
      expect(await exists(client, cmPath(ns, kept))).toBe(true);
    expect(await inventoryIds(ns)).toEqual([`_${stays}_${RBAC}_ClusterRole`, cmEntry(ns, 'keep').id]);

    // Imported once: from now on the inventory is this tool's own.
    const again = await run(root);
    expect(again.error).toBeUndefined();
    expect(again.notes.filter((n) => n.includes('status.inventory'))).toEqual([]);
    expect(again.pruned ?? []).toEqual([]);
    // Cluster-scoped: not left behind for the next test run on the shared cluster.
    await client.request('DELETE', `/apis/${RBAC}/v1/clusterroles/${stays}`);
  });

  it('shows the prunes the import implies in a preview, and writes nothing', async () => {
    const ns = await freshNamespace(client, 'flux-peek');
    await fluxConfigMap(ns, 'keep');
    await fluxConfigMap(ns, 'gone');
    await fluxKustomization({
      namespace: ns,
      name: 'app',
      suspend: true,
      entries: [cmEntry(ns, 'keep'), cmEntry(ns, 'gone')],
    });

    const report = await run(await repo(ns, ['keep']), { mode: 'preview' });

    expect(report.error).toBeUndefined();
    expect(report.notes).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^Imported 2 entries from Flux Kustomization ${ns}/app's status\\.inventory as the previous inventory \\(for this preview; an apply records them\\)`,
        ),
      ),
    );
    expect(prunedOf(report)).toEqual([`ConfigMap/${ns}/gone deleted`]);
    // As `kustomize-reconcile diff` answers: the import's prune is a change (exit code 1).
    expect(exitStatusOf('cli', 'preview', report)).toBe(1);
    expect(await exists(client, cmPath(ns, 'gone'))).toBe(true);
    expect(await inventoryIds(ns)).toEqual([]);
  });

  it('refuses to apply while the Flux Kustomization is not suspended, previews with a warning, and takes over once it is', async () => {
    const ns = await freshNamespace(client, 'flux-live');
    await fluxConfigMap(ns, 'keep');
    await fluxConfigMap(ns, 'gone');
    await fluxKustomization({
      namespace: ns,
      name: 'app',
      suspend: false,
      entries: [cmEntry(ns, 'keep'), cmEntry(ns, 'gone')],
    });
    const root = await repo(ns, ['keep', 'added']);

    const refused = await run(root);
    expect(refused.ok).toBe(false);
    expect(refused.error).toBe(
      `Flux Kustomization ${ns}/app exists in the cluster and is not suspended: Flux's kustomize-controller reconciles ` +
        "the same objects, and two owners undo each other's changes. Nothing was applied or pruned. Suspend it first " +
        `(flux suspend kustomization app -n ${ns}, or kubectl -n ${ns} patch kustomizations.kustomize.toolkit.fluxcd.io app ` +
        `--field-manager=flux-client-side-apply --type=merge -p '{"spec":{"suspend":true}}'), then run again; see docs/handover.md`,
    );
    expect(refused.changeset).toEqual([]);
    expect(await exists(client, cmPath(ns, 'added'))).toBe(false);
    expect(await exists(client, cmPath(ns, 'gone'))).toBe(true);
    expect(await inventoryIds(ns)).toEqual([]);

    const preview = await run(root, { mode: 'preview' });
    expect(preview.error).toBeUndefined();
    expect(preview.notes).toContainEqual(
      `Flux Kustomization ${ns}/app exists in the cluster and is not suspended: an apply of this Kustomization is ` +
        `refused until it is (flux suspend kustomization app -n ${ns}); see docs/handover.md`,
    );
    expect(prunedOf(preview)).toEqual([`ConfigMap/${ns}/gone deleted`]);

    await client.request('PATCH', `/apis/${FLUX_API_VERSION}/namespaces/${ns}/kustomizations/app`, {
      body: { spec: { suspend: true } },
      contentType: 'application/merge-patch+json',
    });
    const taken = await run(root);
    expect(taken.error).toBeUndefined();
    expect(prunedOf(taken)).toEqual([`ConfigMap/${ns}/gone deleted`]);
    expect(await exists(client, cmPath(ns, 'added'))).toBe(true);
    expect(await inventoryIds(ns)).toEqual([cmEntry(ns, 'added').id, cmEntry(ns, 'keep').id]);
  });

  it('keeps the objects of a Kustomization removed from the set once Flux reconciles them again, whatever its deletionPolicy', async () => {
    const ns = await freshNamespace(client, 'flux-back');
    await fluxKustomization({ namespace: ns, name: 'app', suspend: true, entries: [] });
    const other = kustomizationYaml({ name: 'other', namespace: ns, prune: true });
    const root = await writeTree({
      'ks.yaml': `${ksFile(ns)}---\n${other}`,
      'app/kustomization.yaml': 'resources: [keep.yaml]\n',
      'app/keep.yaml': configMap(ns, 'keep'),
      'other/kustomization.yaml': 'resources: [o.yaml]\n',
      'other/o.yaml': configMap(ns, 'o'),
    });
    const source = { run: { source: `test/${ns}`, holder: `test ${ns}` } };
    expect((await run(root, source)).error).toBeUndefined();
    expect(await inventoryIds(ns)).toEqual([cmEntry(ns, 'keep').id]);

    // Handed back: Flux resumed, and the Kustomization left this tool's set.
    await client.request('PATCH', `/apis/${FLUX_API_VERSION}/namespaces/${ns}/kustomizations/app`, {
      body: { spec: { suspend: false } },
      contentType: 'application/merge-patch+json',
    });
    await writeFile(join(root, 'ks.yaml'), other);
    const report = await run(root, { ...source, removedKustomizations: 'delete' });

    expect(report.error).toBeUndefined();
    expect(report.removed).toEqual([
      expect.objectContaining({
        kustomization: `${ns}/app`,
        action: 'released',
        reason:
          `Flux Kustomization ${ns}/app is not suspended and reconciles these objects now (handed back to Flux): ` +
          'its objects stay in the cluster',
      }),
    ]);
    expect(report.pruned ?? []).toEqual([]);
    expect(await exists(client, cmPath(ns, 'keep'))).toBe(true);
    expect(await inventoryIds(ns)).toEqual([]);
  });

  it('reads no Flux where its API is not served or there is no such Kustomization, and says when it may not read one', async () => {
    const ns = await freshNamespace(client, 'flux-none');
    // The API server's own 404 for a group it does not serve, as for a cluster without Flux's CRDs.
    expect(await readFluxKustomization(client, { namespace: ns, name: 'app' }, 'absent.handover.example/v1')).toEqual(
      {},
    );
    expect(await readFluxKustomization(client, { namespace: ns, name: 'app' })).toEqual({});
    const nobody = client.impersonating(`system:serviceaccount:${ns}:nobody`);
    const forbidden = await readFluxKustomization(nobody, { namespace: ns, name: 'app' });
    expect(forbidden.object).toBeUndefined();
    expect(forbidden.forbidden).toMatch(
      new RegExp(
        `^Flux Kustomization ${ns}/app could not be read \\(.*forbidden.*\\), so if Flux reconciled this Kustomization, ` +
          `its status\\.inventory was not imported .* grant get on kustomizations\\.kustomize\\.toolkit\\.fluxcd\\.io in namespace ${ns}; see docs/handover\\.md$`,
      ),
    );
  });
});
