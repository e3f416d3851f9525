// Identity in a shared cluster: two repositories, two folders, or a long path never share an
// inventory, a lock or owner labels; an inventory of another repository is never taken over or
// pruned; one under a path's former name is adopted only when it records this repository.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { derivedName } from '../../src/objects/names.js';
import { InventoryStore } from '../../src/inventory/store.js';
import type { OptionValues } from '../../src/options/settings.js';
import {
  adminClient,
  exists as existsAt,
  freshNamespace,
  kubeconfigPath,
  runNode,
  writeTree,
} from '../helpers/cluster.js';
import { configMap, kustomizationYaml } from '../helpers/manifests.js';
import { KUSTOMIZE } from '../helpers/paths.js';
import { reconcileTree } from '../helpers/reconcile.js';

/** A kustomization directory `dir` with one ConfigMap per name. */
function folder(dir: string, ns: string, names: string[]): Record<string, string> {
  const files: Record<string, string> = {
    [`${dir}/kustomization.yaml`]: `resources: [${names.map((n) => `${n}.yaml`).join(', ')}]\n`,
  };
  for (const n of names) files[`${dir}/${n}.yaml`] = configMap(ns, n);
  return files;
}

describe('Kustomization identity', () => {
  let client: ClusterClient;
  beforeAll(async () => {
    client = await adminClient();
  });
  afterAll(() => {
    client.close();
  });

  const exists = (ns: string, name: string) => existsAt(client, `/api/v1/namespaces/${ns}/configmaps/${name}`);

  function run(root: string, ns: string, source: string, extra: Partial<OptionValues> = {}, log: string[] = []) {
    const settings = {
      path: 'deploy',
      prune: true,
      allowLargePrune: true,
      inventoryNamespace: ns,
      run: { holder: `test ${source}`, source },
      ...extra,
    };
    return reconcileTree(root, settings, log);
  }

  it('two repositories with the same folder name keep their own objects', async () => {
    const ns = await freshNamespace(client);
    const app1 = await writeTree(folder('deploy', ns, ['app1-config']));
    const app2 = await writeTree(folder('deploy', ns, ['app2-config']));
    expect((await run(app1, ns, 'acme/app1')).error).toBeUndefined();
    const second = await run(app2, ns, 'acme/app2');
    expect(second.error).toBeUndefined();
    expect(second.pruned ?? []).toEqual([]);
    expect(await exists(ns, 'app1-config')).toBe(true);
    expect(await exists(ns, 'app2-config')).toBe(true);
    expect(second.kustomization).toBe(`flux-system/${derivedName('acme/app2', 'deploy')}`);
  });

  it.each([
    ['apps/web', 'apps-web'],
    ['team_a', 'team-a'],
    ['Team', 'team'],
    ['crds', 'infra/crds'],
  ])('folders %s and %s of one repository do not prune each other', async (a, b) => {
    const ns = await freshNamespace(client);
    const root = await writeTree({ ...folder(a, ns, ['first-a', 'first-b', 'first-c']), ...folder(b, ns, ['second']) });
    expect((await run(root, ns, 'acme/mono', { path: a })).error).toBeUndefined();
    const other = await run(root, ns, 'acme/mono', { path: b });
    expect(other.error).toBeUndefined();
    expect(other.pruned ?? []).toEqual([]);
    for (const name of ['first-a', 'first-b', 'first-c', 'second']) expect(await exists(ns, name)).toBe(true);
  });

  it('a long path applies: its names fit every limit', async () => {
    const ns = await freshNamespace(client);
    const path = 'clusters/production/infrastructure';
    const root = await writeTree(folder(path, ns, ['infra']));
    const report = await run(root, ns, 'acme/fleet', { path });
    expect(report.error).toBeUndefined();
    expect(report.changeset.map((e) => e.action)).toEqual(['created']);
    // Applied again: the inventory (its part label too) reads back, nothing changes.
    const again = await run(root, ns, 'acme/fleet', { path });
    expect(again.error).toBeUndefined();
    expect(again.changeset.map((e) => e.action)).toEqual(['unchanged']);
  });

  it('refuses, before applying anything, an inventory recorded by another repository', async () => {
    const ns = await freshNamespace(client);
    const app1 = await writeTree(folder('deploy', ns, ['app1-config']));
    const app2 = await writeTree(folder('deploy', ns, ['app2-config']));
    expect((await run(app1, ns, 'acme/app1', { name: 'shared' })).error).toBeUndefined();
    for (const mode of ['apply', 'preview'] as const) {
      const taken = await run(app2, ns, 'acme/app2', { name: 'shared', mode });
      expect(taken.error).toContain(`inventory ${ns}/kustomize-reconcile.flux-system.shared belongs to`);
      expect(taken.error).toContain('repository acme/app1 (path: deploy)');
      expect(taken.error).toContain("this run's repository acme/app2 (path: deploy)");
      expect(await exists(ns, 'app2-config')).toBe(false);
      expect(await exists(ns, 'app1-config')).toBe(true);
    }
    const record = (await new InventoryStore(client, ns, { name: 'shared', namespace: 'flux-system' }).read()).record;
    expect(record?.status.source).toBe('acme/app1');
    expect(record?.entries.map((e) => e.id)).toEqual([`${ns}_app1-config__ConfigMap`]);
  });

  /** An inventory as the previous version wrote it for path `deploy`, and its object. */
  async function legacy(ns: string, source: string | undefined): Promise<void> {
    const owner = {
      'kustomize.toolkit.fluxcd.io/name': 'deploy',
      'kustomize.toolkit.fluxcd.io/namespace': 'flux-system',
    };
    await client.request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'old', namespace: ns, labels: owner }, data: {} },
    });
    const store = new InventoryStore(client, ns, { name: 'deploy', namespace: 'flux-system' });
    await store.update(() => ({
      entries: [{ id: `${ns}_old__ConfigMap`, v: 'v1' }],
      pending: [],
      status: {
        kustomization: 'flux-system/deploy',
        ...(source ? { source } : {}),
        result: 'Succeeded',
        startedAt: new Date().toISOString(),
        prune: true,
        deletionPolicy: 'MirrorPrune',
        timeoutMs: 300_000,
      },
    }));
  }

  it('adopts the inventory under the former name when it records this repository, and prunes from it', async () => {
    const ns = await freshNamespace(client);
    await legacy(ns, 'acme/app1');
    const root = await writeTree(folder('deploy', ns, ['kept']));
    const log: string[] = [];
    const report = await run(root, ns, 'acme/app1', {}, log);
    expect(report.error).toBeUndefined();
    expect(report.notes.join('\n')).toContain(`Adopted inventory ${ns}/kustomize-reconcile.flux-system.deploy`);
    expect(report.pruned).toEqual([{ subject: `ConfigMap/${ns}/old`, action: 'deleted' }]);
    expect(await exists(ns, 'old')).toBe(false);
    expect(await exists(ns, 'kustomize-reconcile.flux-system.deploy')).toBe(false);
  });

  it.each([
    ['another repository', 'acme/other'],
    ['no repository', undefined],
  ])('leaves an inventory under the former name that records %s alone', async (_, source) => {
    const ns = await freshNamespace(client);
    await legacy(ns, source);
    const root = await writeTree(folder('deploy', ns, ['kept']));
    const report = await run(root, ns, 'acme/app1');
    expect(report.error).toBeUndefined();
    expect(report.pruned ?? []).toEqual([]);
    expect(report.notes.join('\n')).toContain('it was not adopted, and its objects are left alone');
    expect(await exists(ns, 'old')).toBe(true);
    expect(await exists(ns, 'kustomize-reconcile.flux-system.deploy')).toBe(true);
  });

  it('the CLI records the git remote: two checkouts with one glob are two sets', async () => {
    const ns = await freshNamespace(client);
    const ks = (name: string) => kustomizationYaml({ name, prune: true, source: 'flux-system' });
    const checkout = async (name: string, remote: string) => {
      const root = await writeTree({
        'clusters/staging/ks.yaml': ks(name),
        ...folder(name, ns, [`${name}-config`]),
      });
      await promisify(execFile)('git', ['init', '-q', root]);
      await promisify(execFile)('git', ['-C', root, 'remote', 'add', 'origin', remote]);
      return root;
    };
    const one = await checkout('one', 'git@github.com:acme/one.git');
    const two = await checkout('two', 'https://github.com/acme/two.git');
    const env = { ...process.env, GITHUB_REPOSITORY: '', GITHUB_ACTIONS: '' };
    const cli = (root: string, ...args: string[]) =>
      runNode(
        'dist/cli.js',
        [
          ...args,
          '--kustomizations',
          'clusters/staging/*.yaml',
          '--inventory-namespace',
          ns,
          '--kubeconfig',
          kubeconfigPath(),
          '--kustomize-path',
          KUSTOMIZE,
        ],
        { cwd: root, env },
      );
    const first = await cli(one, 'apply');
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain('Repository acme/one (from the git remote origin)');
    const second = await cli(two, 'apply', '--removed-kustomizations', 'delete', '--output', 'json');
    expect(second.code, second.stderr).toBe(0);
    const report = JSON.parse(second.stdout) as { removed?: unknown[] };
    expect(report.removed ?? []).toEqual([]);
    expect(await exists(ns, 'one-config')).toBe(true);
    const record = (await new InventoryStore(client, ns, { name: 'one', namespace: 'flux-system' }).read()).record;
    expect(record?.status.source).toBe('acme/one');
    expect(record?.status.set).toBe('acme/one:clusters/staging/*.yaml');
  });
});
