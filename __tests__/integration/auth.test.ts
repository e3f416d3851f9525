// The cluster client's credentials on the real apiserver: a bearer token, an exec credential plugin
// (what cloud auth helpers use), and impersonation; RBAC decides, as it will for a real runner.
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { ClusterClient } from '../../src/cluster/client.js';
import { ApiError } from '../../src/cluster/errors.js';
import { adminClient, freshNamespace, kubeconfigPath, writeTree } from '../helpers/cluster.js';
import { reconcileTree } from '../helpers/reconcile.js';

interface Kubeconfig {
  clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
}

describe('credentials and impersonation', () => {
  let client: ClusterClient;
  let ns: string;
  let other: string;
  let token: string;
  let dir: string;
  let cluster: Kubeconfig['clusters'][number]['cluster'];

  beforeAll(async () => {
    client = await adminClient();
    ns = await freshNamespace(client, 'auth');
    other = await freshNamespace(client, 'auth-other');
    await client.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, {
      body: { metadata: { name: 'deployer' } },
    });
    await client.request('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`, {
      body: {
        metadata: { name: 'deployer' },
        rules: [
          { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'create', 'patch', 'update'] },
          // The inventory and its lock, kept in the same namespace (input inventory-namespace).
          { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
        ],
      },
    });
    await client.request('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
      body: {
        metadata: { name: 'deployer' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'deployer' },
        subjects: [{ kind: 'ServiceAccount', name: 'deployer', namespace: ns }],
      },
    });
    const tr = await client.request<{ status: { token: string } }>(
      'POST',
      `/api/v1/namespaces/${ns}/serviceaccounts/deployer/token`,
      {
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 600 } },
      },
    );
    token = tr.status.token;
    cluster = (parse(await readFile(kubeconfigPath(), 'utf8')) as Kubeconfig).clusters[0]!.cluster;
    dir = await writeTree({});
  });
  afterAll(() => {
    client.close();
  });

  async function kubeconfigWith(name: string, user: Record<string, unknown>): Promise<string> {
    const path = join(dir, `${name}.kubeconfig`);
    const doc = {
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'ctx',
      clusters: [{ name: 'c', cluster }],
      contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u' } }],
      users: [{ name: 'u', user }],
    };
    await writeFile(path, JSON.stringify(doc));
    return path;
  }

  async function apply(kubeconfig: string, namespace: string, inventoryNs = ns) {
    const root = await writeTree({
      'app/cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-sa, namespace: ${namespace}}\ndata: {a: b}\n`,
    });
    return reconcileTree(root, {
      kubeconfig: { kind: 'path', path: kubeconfig },
      path: 'app',
      name: 'app',
      inventoryNamespace: inventoryNs,
    });
  }

  it('authenticates with a bearer token; RBAC allows its namespace and forbids another', async () => {
    const kc = await kubeconfigWith('token', { token });
    const ok = await apply(kc, ns);
    expect(ok.error).toBeUndefined();
    expect(ok.changeset.map((e) => e.action)).toEqual(['created']);
    const denied = await apply(kc, other);
    expect(denied.ok).toBe(false);
    expect(denied.error).toMatch(
      new RegExp(
        `^ConfigMap/${other}/from-sa get failed: .*forbidden: User "system:serviceaccount:${ns}:deployer" cannot get resource "configmaps"`,
      ),
    );
    // An inventory where these credentials may not write: refused before anything is applied, saying what is needed.
    const noInventory = await apply(kc, ns, other);
    expect(noInventory.changeset).toEqual([]);
    expect(noInventory.error).toMatch(
      new RegExp(
        `^inventory ${other}/kustomize-reconcile\\.flux-system\\.app: .*forbidden.*\\. The action's credentials need get, create and update on configmaps and coordination\\.k8s\\.io leases in namespace ${other}; or set inventory-namespace`,
      ),
    );
  });

  it('runs an exec credential plugin for its token, as cloud auth helpers work', async () => {
    const plugin = join(dir, 'credential-plugin.sh');
    await writeFile(
      plugin,
      `#!/bin/sh\nprintf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}' "$KR_TEST_TOKEN"\n`,
    );
    await chmod(plugin, 0o755);
    const kc = await kubeconfigWith('exec', {
      exec: {
        apiVersion: 'client.authentication.k8s.io/v1',
        command: plugin,
        env: [{ name: 'KR_TEST_TOKEN', value: token }],
        interactiveMode: 'Never',
      },
    });
    const report = await apply(kc, ns);
    expect(report.error).toBeUndefined();
    expect(report.changeset.map((e) => `${e.subject} ${e.action}`)).toEqual([`ConfigMap/${ns}/from-sa unchanged`]);
  });

  it('impersonates a service account with the admin credentials, and RBAC applies to it', async () => {
    const as = client.impersonating(`system:serviceaccount:${ns}:deployer`);
    try {
      const cm = await as.request<{ data: Record<string, string> }>(
        'GET',
        `/api/v1/namespaces/${ns}/configmaps/from-sa`,
      );
      expect(cm.data).toEqual({ a: 'b' });
      const err = await as.request('GET', `/api/v1/namespaces/${other}/configmaps`).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).status).toBe(403);
    } finally {
      as.close();
    }
  });
});
