// Multi-tenancy on the real cluster (RBAC on): a Kustomization with spec.serviceAccountName, or run
// with the default-service-account input, can do no more than that ServiceAccount's RBAC allows.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { adminClient, exists as existsAt, freshNamespace, writeTree } from '../helpers/cluster.js';
import { configMap, kustomizationYaml } from '../helpers/manifests.js';
import { reconcileTree } from '../helpers/reconcile.js';

/** The Kustomization tenant-app in `ns` building ./app, as the ServiceAccount `sa` when given. */
const ks = (ns: string, sa?: string) =>
  kustomizationYaml({
    name: 'tenant-app',
    namespace: ns,
    path: './app',
    prune: true,
    spec: sa ? `serviceAccountName: ${sa}` : '',
  });

describe('impersonation of a tenant ServiceAccount', () => {
  let client: ClusterClient;
  beforeAll(async () => {
    client = await adminClient();
  });
  afterAll(() => {
    client.close();
  });

  /** A tenant namespace whose ServiceAccount `deployer` may manage ConfigMaps there (`verbs`), and nothing else. */
  async function tenant(verbs: string[] = ['*']): Promise<string> {
    const ns = await freshNamespace(client, 'tenant');
    await client.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, {
      body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'deployer' } },
    });
    await client.request('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`, {
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'deployer' },
        rules: [{ apiGroups: [''], resources: ['configmaps'], verbs }],
      },
    });
    await client.request('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'deployer' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'deployer' },
        subjects: [{ kind: 'ServiceAccount', name: 'deployer', namespace: ns }],
      },
    });
    return ns;
  }

  const exists = (path: string) => existsAt(client, path);

  it('applies what the ServiceAccount may, and prunes as it', async () => {
    const ns = await tenant();
    const root = await writeTree({
      'ks.yaml': ks(ns, 'deployer'),
      'app/kustomization.yaml': 'resources: [a.yaml, b.yaml]\n',
      'app/a.yaml': configMap(ns, 'a'),
      'app/b.yaml': configMap(ns, 'b'),
    });
    const log: string[] = [];
    const report = await reconcileTree(root, {}, log);
    expect(report.error).toBeUndefined();
    expect(report.changeset.map((e) => `${e.subject} ${e.action}`)).toEqual([
      `ConfigMap/${ns}/a created`,
      `ConfigMap/${ns}/b created`,
    ]);
    expect(log).toContain(`Acting as system:serviceaccount:${ns}:deployer`);
    // The objects' managers show who applied them: the impersonated user made the request.
    const live = await client.request<{ metadata: { managedFields: { manager: string }[] } }>(
      'GET',
      `/api/v1/namespaces/${ns}/configmaps/a`,
    );
    expect(live.metadata.managedFields.map((f) => f.manager)).toContain('kustomize-controller');

    await writeFile(join(root, 'app/kustomization.yaml'), 'resources: [a.yaml]\n');
    const pruned = await reconcileTree(root);
    expect(pruned.ok).toBe(true);
    expect(pruned.pruned?.map((p) => `${p.subject} ${p.action}`)).toEqual([`ConfigMap/${ns}/b deleted`]);
    expect(await exists(`/api/v1/namespaces/${ns}/configmaps/b`)).toBe(false);
  });

  it.each([
    [
      'a ClusterRole',
      (ns: string) =>
        `apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: ${ns}-escalate}\nrules: []\n`,
      (ns: string) =>
        `clusterroles.rbac.authorization.k8s.io "${ns}-escalate" is forbidden: User "system:serviceaccount:${ns}:deployer" cannot get resource "clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope`,
    ],
    [
      'another namespace',
      () => configMap('default', 'not-yours'),
      (ns: string) =>
        `configmaps "not-yours" is forbidden: User "system:serviceaccount:${ns}:deployer" cannot get resource "configmaps" in API group "" in the namespace "default"`,
    ],
  ])('refuses %s with the verb, resource and identity, and applies nothing of the stage', async (_, extra, message) => {
    for (const viaInput of [false, true]) {
      const ns = await tenant();
      const root = await writeTree({
        'ks.yaml': ks(ns, viaInput ? undefined : 'deployer'),
        'app/kustomization.yaml': 'resources: [mine.yaml, extra.yaml]\n',
        'app/mine.yaml': configMap(ns, 'mine'),
        'app/extra.yaml': extra(ns),
      });
      const report = await reconcileTree(root, viaInput ? { defaultServiceAccount: 'deployer' } : {});
      expect(report.ok).toBe(false);
      expect(report.error).toContain(message(ns));
      // The stage failed as a whole: the ConfigMap the tenant may create was not created either
      // (a ClusterRole is applied in an earlier stage, and the run stops there).
      expect(await exists(`/api/v1/namespaces/${ns}/configmaps/mine`)).toBe(false);
      expect(await exists('/api/v1/namespaces/default/configmaps/not-yours')).toBe(false);
      expect(await exists(`/apis/rbac.authorization.k8s.io/v1/clusterroles/${ns}-escalate`)).toBe(false);
    }
  });

  it('deletes the objects of a removed Kustomization as default-service-account when its inventory names no one', async () => {
    // deployer may apply ConfigMaps but not delete them.
    const ns = await tenant(['get', 'list', 'watch', 'create', 'update', 'patch']);
    const other = (name: string) => kustomizationYaml({ name, namespace: ns, prune: true });
    const root = await writeTree({
      'ks.yaml': [other('keep'), other('gone')].join('---\n'),
      'keep/a.yaml': configMap(ns, 'keep-a'),
      'gone/a.yaml': configMap(ns, 'gone-a'),
    });
    const settings = { run: { source: `test/${ns}`, holder: `test ${ns}` } };
    // Applied as the action itself: the inventories record no impersonation.
    expect((await reconcileTree(root, settings)).ok).toBe(true);

    await writeFile(join(root, 'ks.yaml'), other('keep'));
    const report = await reconcileTree(root, {
      ...settings,
      removedKustomizations: 'delete',
      defaultServiceAccount: 'deployer',
    });
    // keep is applied as deployer; gone's object may not be deleted by deployer, so it stays.
    expect(report.changeset.map((e) => `${e.subject} ${e.action}`)).toEqual([`ConfigMap/${ns}/keep-a unchanged`]);
    expect(report.pruned).toMatchObject([{ subject: `ConfigMap/${ns}/gone-a`, action: 'failed' }]);
    expect(report.pruned?.[0]?.reason).toContain('forbidden');
    expect(await exists(`/api/v1/namespaces/${ns}/configmaps/gone-a`)).toBe(true);
  });

  it('refuses a cross-namespace sourceRef with no-cross-namespace-refs', async () => {
    const ns = await tenant();
    const root = await writeTree({
      'ks.yaml': ks(ns).replace(
        'sourceRef: {kind: GitRepository, name: repo}',
        'sourceRef: {kind: GitRepository, name: repo, namespace: flux-system}',
      ),
      'app/a.yaml': configMap(ns, 'a'),
    });
    const report = await reconcileTree(root, { noCrossNamespaceRefs: 'true' });
    expect(report.error).toBe(
      `Kustomization ${ns}/tenant-app (ks.yaml, document 1): spec.sourceRef.namespace: cross-namespace references are not allowed (input no-cross-namespace-refs): 'flux-system' is not the Kustomization's namespace '${ns}'`,
    );
    expect(await exists(`/api/v1/namespaces/${ns}/configmaps/a`)).toBe(false);
    // Without the input, the same Kustomization is fine.
    expect((await reconcileTree(root)).ok).toBe(true);
  });
});
