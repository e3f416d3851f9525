// Inventory, prune and the lock on the real cluster: Git deletions become cluster deletions, and nothing else.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { ClusterClient } from '../../src/cluster/client.js';
import { InventoryStore } from '../../src/inventory/store.js';
import type { OptionValues } from '../../src/options/settings.js';
import {
  adminClient,
  exists as existsAt,
  eventually,
  freshNamespace,
  kubeconfigPath,
  writeTree,
} from '../helpers/cluster.js';
import { configMap, deployment } from '../helpers/manifests.js';
import { reconcileTree } from '../helpers/reconcile.js';

/** The Kustomization of path `app` is flux-system/app; its inventory lives in the test's namespace. */
const KS = { name: 'app', namespace: 'flux-system' };
const OWNER = { 'kustomize.toolkit.fluxcd.io/name': 'app', 'kustomize.toolkit.fluxcd.io/namespace': 'flux-system' };

describe('inventory and prune', () => {
  let client: ClusterClient;
  beforeAll(async () => {
    client = await adminClient();
  });
  afterAll(() => {
    client.close();
  });

  function run(root: string, ns: string, extra: Partial<OptionValues> = {}, log: string[] = []) {
    const settings = { path: 'app', name: 'app', prune: true, inventoryNamespace: ns, lockLeaseMs: 3_000, ...extra };
    return reconcileTree(root, settings, log);
  }

  const exists = (path: string) => existsAt(client, path);
  const cmPath = (ns: string, name: string) => `/api/v1/namespaces/${ns}/configmaps/${name}`;
  const inventoryIds = async (ns: string) =>
    ((await new InventoryStore(client, ns, KS).read()).record?.entries ?? []).map((e) => e.id).sort();

  /** Writes app/ with `files` and a kustomization.yaml listing them. */
  async function tree(root: string | undefined, files: Record<string, string>): Promise<string> {
    const dir = root ?? (await writeTree({}));
    await rm(join(dir, 'app'), { recursive: true, force: true });
    const all = {
      ...files,
      'app/kustomization.yaml': `resources: [${Object.keys(files)
        .map((f) => f.slice(4))
        .join(', ')}]\n`,
    };
    for (const [rel, text] of Object.entries(all)) {
      await mkdir(dirname(join(dir, rel)), { recursive: true });
      await writeFile(join(dir, rel), text);
    }
    return dir;
  }

  it('prunes what left Git, keeps prune-disabled objects and never touches objects outside the inventory', async () => {
    const ns = await freshNamespace(client);
    const root = await tree(undefined, {
      'app/a.yaml': configMap(ns, 'a'),
      'app/b.yaml': configMap(ns, 'b'),
      'app/keep.yaml': configMap(ns, 'keep', ', annotations: {kustomize.toolkit.fluxcd.io/prune: disabled}'),
    });
    const first = await run(root, ns);
    expect(first.error).toBeUndefined();
    expect(await inventoryIds(ns)).toEqual([`${ns}_a__ConfigMap`, `${ns}_b__ConfigMap`, `${ns}_keep__ConfigMap`]);
    // Same owner labels, never applied by this Kustomization: not in the inventory, so never a candidate.
    await client.request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'foreign', namespace: ns, labels: OWNER } },
    });

    await tree(root, { 'app/a.yaml': configMap(ns, 'a') });
    const log: string[] = [];
    const second = await run(root, ns, {}, log);
    expect(second.error).toBeUndefined();
    expect(second.pruned).toEqual([
      {
        subject: `ConfigMap/${ns}/keep`,
        action: 'skipped',
        reason: 'it is marked kustomize.toolkit.fluxcd.io/prune: disabled',
      },
      { subject: `ConfigMap/${ns}/b`, action: 'deleted' },
    ]);
    expect(log).toContain(`ConfigMap/${ns}/b deleted`);
    expect(await exists(cmPath(ns, 'b'))).toBe(false);
    expect(await exists(cmPath(ns, 'keep'))).toBe(true);
    expect(await exists(cmPath(ns, 'foreign'))).toBe(true);
    expect(await inventoryIds(ns)).toEqual([`${ns}_a__ConfigMap`]);

    const status = (await new InventoryStore(client, ns, KS).read()).record?.status;
    expect(status).toMatchObject({ kustomization: 'flux-system/app', result: 'Succeeded', prune: true });
  });

  it('shows the prune set in a preview and deletes nothing', async () => {
    const ns = await freshNamespace(client);
    const root = await tree(undefined, { 'app/a.yaml': configMap(ns, 'a'), 'app/b.yaml': configMap(ns, 'b') });
    expect((await run(root, ns)).error).toBeUndefined();
    await tree(root, { 'app/a.yaml': configMap(ns, 'a') });
    const preview = await run(root, ns, { mode: 'preview' });
    expect(preview.error).toBeUndefined();
    expect(preview.pruned).toEqual([{ subject: `ConfigMap/${ns}/b`, action: 'deleted' }]);
    expect(await exists(cmPath(ns, 'b'))).toBe(true);
    expect(await inventoryIds(ns)).toEqual([`${ns}_a__ConfigMap`, `${ns}_b__ConfigMap`]);
  });

  it('deletes a renamed Deployment only after the new one was applied', async () => {
    const ns = await freshNamespace(client);
    const root = await tree(undefined, { 'app/web.yaml': deployment(ns, 'web-v1') });
    expect((await run(root, ns)).error).toBeUndefined();
    await tree(root, { 'app/web.yaml': deployment(ns, 'web-v2') });
    const log: string[] = [];
    const report = await run(root, ns, {}, log);
    expect(report.error).toBeUndefined();
    const created = log.indexOf(`Deployment/${ns}/web-v2 created`);
    const deleted = log.indexOf(`Deployment/${ns}/web-v1 deleted`);
    expect(created).toBeGreaterThanOrEqual(0);
    expect(deleted).toBeGreaterThan(created);
    await eventually('web-v1 gone', 20_000, async () =>
      (await exists(`/apis/apps/v1/namespaces/${ns}/deployments/web-v1`)) ? undefined : true,
    );
    expect(await inventoryIds(ns)).toEqual([`${ns}_web-v2_apps_Deployment`]);
  });

  it('never prunes after a failed apply, and the inventory holds old ∪ applied', async () => {
    const ns = await freshNamespace(client);
    const extra = `${ns}-extra`;
    const root = await tree(undefined, { 'app/a.yaml': configMap(ns, 'a'), 'app/b.yaml': configMap(ns, 'b') });
    expect((await run(root, ns)).error).toBeUndefined();
    // The Namespace (first stage) applies; the invalid ConfigMap fails the last stage.
    await tree(root, {
      'app/ns.yaml': `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${extra}}\n`,
      // A data key only the server checks: the run gets past prevalidation to the last stage.
      'app/c.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: ${ns}}\ndata: {"bad key!": x}\n`,
    });
    const report = await run(root, ns);
    expect(report.ok).toBe(false);
    expect(report.error).toContain(`ConfigMap/${ns}/c dry-run failed`);
    expect(report.pruned).toBeUndefined();
    expect(await exists(cmPath(ns, 'a'))).toBe(true);
    expect(await exists(cmPath(ns, 'b'))).toBe(true);
    expect(await inventoryIds(ns)).toEqual([`_${extra}__Namespace`, `${ns}_a__ConfigMap`, `${ns}_b__ConfigMap`]);
    const record = (await new InventoryStore(client, ns, KS).read()).record;
    expect(record?.pending).toEqual([]);
    expect(record?.status).toMatchObject({ result: 'Failed' });
    // The whole message, its details included, not just its first line.
    expect(record?.status.message).toBe(report.error);
    expect(record?.status.message).toContain('\n');
    await client.request('DELETE', `/api/v1/namespaces/${extra}`);
  });

  it('refuses to prune when the build suddenly renders nothing, unless allowed', async () => {
    const ns = await freshNamespace(client);
    const root = await tree(undefined, { 'app/a.yaml': configMap(ns, 'a') });
    expect((await run(root, ns)).error).toBeUndefined();
    await tree(root, {});
    const refused = await run(root, ns);
    expect(refused.error).toBe(
      'prune refused: the build rendered no objects, so pruning would delete all 1 object(s) of the inventory; ' +
        'nothing was deleted. If that is intended, set the input allow-large-prune: true for one run',
    );
    expect(await exists(cmPath(ns, 'a'))).toBe(true);
    expect(await inventoryIds(ns)).toEqual([`${ns}_a__ConfigMap`]);
    const allowed = await run(root, ns, { allowLargePrune: true });
    expect(allowed.error).toBeUndefined();
    expect(await exists(cmPath(ns, 'a'))).toBe(false);
    expect(await inventoryIds(ns)).toEqual([]);
  });

  it('makes a second run wait for the first one’s lock, then both succeed', async () => {
    const ns = await freshNamespace(client);
    const root = await tree(undefined, { 'app/web.yaml': deployment(ns, 'web') });
    const logA: string[] = [];
    const logB: string[] = [];
    const a = run(root, ns, { wait: true, run: { holder: 'run-A', source: 'local:test' } }, logA);
    const lease = `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/kustomize-reconcile.flux-system.app`;
    await eventually('run-A holds the lock', 20_000, async () => {
      const l = await client.request<{ spec?: { holderIdentity?: string } }>('GET', lease).catch(() => undefined);
      return l?.spec?.holderIdentity === 'run-A' ? true : undefined;
    });
    const b = run(root, ns, { wait: true, run: { holder: 'run-B', source: 'local:test' } }, logB);
    const [ra, rb] = await Promise.all([a, b]);
    expect(ra.error).toBeUndefined();
    expect(rb.error).toBeUndefined();
    expect(logB).toContain(`Waiting for the lock ${ns}/kustomize-reconcile.flux-system.app, held by run-A`);
    const after = await client.request<{ spec?: { holderIdentity?: string | null } }>('GET', lease);
    expect(after.spec?.holderIdentity ?? null).toBeNull();
  });

  it('fails naming the holder when a live lock outlasts lock-timeout, and takes over an expired one', async () => {
    const ns = await freshNamespace(client);
    const root = await tree(undefined, { 'app/a.yaml': configMap(ns, 'a') });
    const name = 'kustomize-reconcile.flux-system.app';
    const now = new Date().toISOString().replace(/Z$/, '000Z');
    const lease = (holder: string, seconds: number) => ({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name, namespace: ns },
      spec: { holderIdentity: holder, leaseDurationSeconds: seconds, acquireTime: now, renewTime: now },
    });
    await client.request('POST', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`, {
      body: lease('https://github.com/org/repo/actions/runs/1 job deploy', 600),
    });
    const blocked = await run(root, ns, { lockTimeout: '1s' });
    expect(blocked.error).toMatch(
      /^another run holds the lock t-[0-9a-f]+\/kustomize-reconcile\.flux-system\.app: https:\/\/github\.com\/org\/repo\/actions\/runs\/1 job deploy \(last renewed .*\); gave up after waiting 1s \(input lock-timeout\)$/,
    );
    expect(blocked.changeset).toEqual([]);
    expect(await exists(cmPath(ns, 'a'))).toBe(false);

    // A killed run: its lease is not renewed, so it expires and is taken over.
    const current = await client.request<{ metadata: object }>(
      'GET',
      `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/${name}`,
    );
    await client.request('PUT', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/${name}`, {
      body: { ...lease('killed-run', 2), metadata: current.metadata },
    });
    const log: string[] = [];
    const report = await run(root, ns, { lockTimeout: '1m' }, log);
    expect(report.error).toBeUndefined();
    expect(log).toContain(`Waiting for the lock ${ns}/${name}, held by killed-run`);
    expect(log).toContain(`Taking over the expired lock ${ns}/${name} from killed-run`);
    expect(await exists(cmPath(ns, 'a'))).toBe(true);
  }, 30_000);

  it('keeps a Namespace that holds another Kustomization’s and no one’s objects, unless allow-large-prune', async () => {
    const ns = await freshNamespace(client);
    const team = `${ns}-team`;
    const root = await tree(undefined, {
      'app/anchor.yaml': configMap(ns, 'anchor'),
      'app/ns.yaml': `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${team}}\n`,
      'app/own.yaml': configMap(team, 'own'),
    });
    expect((await run(root, ns)).error).toBeUndefined();
    // Kustomization flux-system/b put a ConfigMap into A's Namespace; someone added one by hand.
    const other = { 'kustomize.toolkit.fluxcd.io/name': 'b', 'kustomize.toolkit.fluxcd.io/namespace': 'flux-system' };
    for (const [name, labels] of [
      ['b-config', other],
      ['by-hand', {}],
    ] as const) {
      await client.request('POST', `/api/v1/namespaces/${team}/configmaps`, {
        body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: team, labels } },
      });
    }

    await tree(root, { 'app/anchor.yaml': configMap(ns, 'anchor') });
    const refused = await run(root, ns);
    expect(refused.ok).toBe(false);
    expect(refused.error).toBe(
      `prune refused: pruning Namespace/${team} would also delete the 2 object(s) in it that this run does not ` +
        'prune; nothing was deleted. Move or delete those objects first, or set allow-large-prune: true for one ' +
        `run to delete them with the Namespace:\n  in Namespace/${team}: 1 ConfigMap (b-config) of Kustomization ` +
        'flux-system/b; 1 ConfigMap (by-hand) of no Kustomization (no owner labels)',
    );
    expect(refused.pruned).toBeUndefined();
    expect(await exists(`/api/v1/namespaces/${team}`)).toBe(true);
    expect(await exists(cmPath(team, 'b-config'))).toBe(true);
    expect(await exists(cmPath(team, 'own'))).toBe(true);
    expect(await inventoryIds(ns)).toEqual(
      [`${ns}_anchor__ConfigMap`, `${team}_own__ConfigMap`, `_${team}__Namespace`].sort(),
    );

    const allowed = await run(root, ns, { allowLargePrune: true });
    expect(allowed.error).toBeUndefined();
    expect(allowed.pruned).toEqual([
      { subject: `ConfigMap/${team}/own`, action: 'deleted' },
      { subject: `Namespace/${team}`, action: 'deleted' },
    ]);
    await eventually(`Namespace ${team} gone`, 60_000, async () =>
      (await exists(`/api/v1/namespaces/${team}`)) ? undefined : true,
    );
    expect(await inventoryIds(ns)).toEqual([`${ns}_anchor__ConfigMap`]);
  }, 90_000);

  it('prunes a Namespace that holds only its own pruned objects, their dependents and the defaults', async () => {
    const ns = await freshNamespace(client);
    const team = `${ns}-team`;
    const root = await tree(undefined, {
      'app/anchor.yaml': configMap(ns, 'anchor'),
      'app/ns.yaml': `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${team}}\n`,
      'app/own.yaml': configMap(team, 'own'),
      'app/web.yaml': deployment(team, 'web'),
    });
    expect((await run(root, ns)).error).toBeUndefined();
    // What the control plane adds: the root CA ConfigMap, the default ServiceAccount, a ReplicaSet.
    await eventually('the control plane fills the Namespace', 30_000, async () => {
      const found = await Promise.all([
        exists(cmPath(team, 'kube-root-ca.crt')),
        exists(`/api/v1/namespaces/${team}/serviceaccounts/default`),
        client
          .request<{ items: unknown[] }>('GET', `/apis/apps/v1/namespaces/${team}/replicasets`)
          .then((l) => l.items.length > 0),
      ]);
      return found.every(Boolean) ? true : undefined;
    });

    await tree(root, { 'app/anchor.yaml': configMap(ns, 'anchor') });
    const log: string[] = [];
    const pruned = await run(root, ns, {}, log);
    expect(pruned.error, log.join('\n')).toBeUndefined();
    expect(pruned.pruned?.map((p) => `${p.subject} ${p.action}`)).toEqual([
      `Deployment/${team}/web deleted`,
      `ConfigMap/${team}/own deleted`,
      `Namespace/${team} deleted`,
    ]);
    await eventually(`Namespace ${team} gone`, 60_000, async () =>
      (await exists(`/api/v1/namespaces/${team}`)) ? undefined : true,
    );
  }, 120_000);

  it('says which kinds it could not look for when the credentials may not list them', async () => {
    const ns = await freshNamespace(client);
    const team = `${ns}-team`;
    // Credentials that may do the run's work but list nothing but ConfigMaps and Namespaces.
    const role = `kr-prune-guard-${ns}`;
    await client.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, {
      body: { metadata: { name: 'runner' } },
    });
    await client.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      body: {
        metadata: { name: role },
        rules: [
          { apiGroups: [''], resources: ['configmaps', 'namespaces'], verbs: ['*'] },
          { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['*'] },
        ],
      },
    });
    await client.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      body: {
        metadata: { name: role },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
        subjects: [{ kind: 'ServiceAccount', name: 'runner', namespace: ns }],
      },
    });
    try {
      const { status } = await client.request<{ status: { token: string } }>(
        'POST',
        `/api/v1/namespaces/${ns}/serviceaccounts/runner/token`,
        { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 600 } } },
      );
      const admin = parse(await readFile(kubeconfigPath(), 'utf8')) as { clusters: { cluster: unknown }[] };
      const root = await tree(undefined, {
        'app/anchor.yaml': configMap(ns, 'anchor'),
        'app/ns.yaml': `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${team}}\n`,
        'app/own.yaml': configMap(team, 'own'),
      });
      const kubeconfig = join(root, 'runner.kubeconfig');
      await writeFile(
        kubeconfig,
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Config',
          'current-context': 'ctx',
          clusters: [{ name: 'c', cluster: admin.clusters[0]!.cluster }],
          contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u' } }],
          users: [{ name: 'u', user: { token: status.token } }],
        }),
      );
      const as = { kubeconfig: { kind: 'path' as const, path: kubeconfig } };
      expect((await run(root, ns, as)).error).toBeUndefined();

      await tree(root, { 'app/anchor.yaml': configMap(ns, 'anchor') });
      const pruned = await run(root, ns, as);
      expect(pruned.error).toBeUndefined();
      const note = pruned.notes.find((n) => n.startsWith(`Namespace ${team} is being pruned, but the credentials`));
      expect(note).toMatch(/may not list .*\bsecrets\b.* in it, so objects of those kinds were not looked for/);
      expect(note).not.toMatch(/\bconfigmaps\b/);
      expect(pruned.pruned?.map((p) => `${p.subject} ${p.action}`)).toEqual([
        `ConfigMap/${team}/own deleted`,
        `Namespace/${team} deleted`,
      ]);
    } finally {
      await client.request('DELETE', `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${role}`);
      await client.request('DELETE', `/apis/rbac.authorization.k8s.io/v1/clusterroles/${role}`);
    }
  });

  it('round-trips a 20,000-entry inventory, split into parts below the 1 MiB limit', async () => {
    const ns = await freshNamespace(client);
    const store = new InventoryStore(client, ns, { name: 'big', namespace: ns });
    const entries = Array.from({ length: 20_000 }, () => ({
      id: `${ns}_${randomBytes(45).toString('hex')}_apps_Deployment`,
      v: 'v1',
    }));
    const status = {
      kustomization: `${ns}/big`,
      result: 'Succeeded' as const,
      startedAt: new Date().toISOString(),
      prune: true,
      deletionPolicy: 'MirrorPrune' as const,
      timeoutMs: 300_000,
    };
    await store.update(() => ({ entries, pending: [], status }));
    const back = await store.read();
    expect(back.record?.entries.length).toBe(20_000);
    expect(new Set(back.record?.entries.map((e) => e.id))).toEqual(new Set(entries.map((e) => e.id)));
    const list = await client.request<{ items: { metadata: { name: string } }[] }>(
      'GET',
      `/api/v1/namespaces/${ns}/configmaps`,
    );
    const names = list.items.map((i) => i.metadata.name).filter((n) => n.startsWith('kustomize-reconcile.'));
    const parts = names.filter((n) => /\.g1-\d+$/.test(n));
    expect(parts.length).toBeGreaterThanOrEqual(2);
    for (const n of names) {
      const obj = await client.request<object>('GET', `/api/v1/namespaces/${ns}/configmaps/${n}`);
      expect(JSON.stringify(obj).length).toBeLessThan(1024 * 1024);
    }
    // A smaller inventory replaces the parts of the older generation.
    await store.update((latest) => ({ ...latest!, entries: entries.slice(0, 10) }));
    expect((await store.read()).record?.entries.length).toBe(10);
    const left = await client.request<{ items: { metadata: { name: string } }[] }>(
      'GET',
      `/api/v1/namespaces/${ns}/configmaps`,
      { query: { labelSelector: 'kustomize-reconcile/inventory-part' } },
    );
    expect(left.items).toEqual([]);
  }, 60_000);
});
