// spec.kubeConfig.secretRef on two real clusters: the shared test cluster is the management cluster
// holding the kubeconfig Secret; a second apiserver (tier a, started here) is the remote target.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { adminClient, exists, freshNamespace, writeTree } from '../helpers/cluster.js';
import { kustomizationYaml } from '../helpers/manifests.js';
import { startSecondCluster, type SecondCluster } from '../helpers/second-cluster.js';
import { reconcileTree } from '../helpers/reconcile.js';

/** The Kustomization edge in `ns` building ./app on the cluster of the kubeconfig Secret `secret`. */
const ks = (ns: string, secret: string) =>
  kustomizationYaml({
    name: 'edge',
    namespace: ns,
    path: './app',
    prune: true,
    spec: `kubeConfig:\n  secretRef: {name: ${secret}}`,
  });

describe('a remote cluster from spec.kubeConfig.secretRef', () => {
  let management: ClusterClient;
  let remote: ClusterClient;
  let remoteKubeconfig: string;
  let second: SecondCluster;

  beforeAll(async () => {
    management = await adminClient();
    second = await startSecondCluster('remote');
    remote = second.client;
    remoteKubeconfig = await readFile(second.kubeconfig, 'utf8');
  }, 120_000);
  afterAll(async () => {
    management.close();
    await second.stop();
  });

  async function kubeconfigSecret(ns: string, name: string, key: string, text: string) {
    await management.request('POST', `/api/v1/namespaces/${ns}/secrets`, {
      body: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name },
        data: { [key]: Buffer.from(text).toString('base64') },
      },
    });
  }

  it('applies objects and keeps the inventory and lock in the remote cluster, none in the management one', async () => {
    const ns = await freshNamespace(management);
    // The remote cluster needs the namespace too: its objects and inventory live there.
    await remote.request('POST', '/api/v1/namespaces', {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
    });
    // An exec plugin in the kubeconfig is dropped, as Flux drops it; the client certificate is used.
    const withExec = remoteKubeconfig.replace(
      /(- name: admin\n {2}user:\n)/,
      '$1    exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/false}\n',
    );
    expect(withExec).not.toBe(remoteKubeconfig);
    await kubeconfigSecret(ns, 'edge-kubeconfig', 'value', withExec);
    const root = await writeTree({
      'ks.yaml': ks(ns, 'edge-kubeconfig'),
      'app/cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: on-the-edge, namespace: ${ns}}\ndata: {a: b}\n`,
    });
    const log: string[] = [];
    const report = await reconcileTree(root, {}, log);
    expect(report.error).toBeUndefined();
    expect(report.server).toBe(remote.server);
    expect(report.notes).toContain(
      `Ignored in the kubeconfig of spec.kubeConfig.secretRef: Secret ${ns}/edge-kubeconfig: user.exec (only static credentials are used, as in Flux)`,
    );
    const cmPath = `/api/v1/namespaces/${ns}/configmaps/on-the-edge`;
    const inventory = `/api/v1/namespaces/${ns}/configmaps/kustomize-reconcile.${ns}.edge`;
    const lease = `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/kustomize-reconcile.${ns}.edge`;
    expect(await exists(remote, cmPath)).toBe(true);
    expect(await exists(remote, inventory)).toBe(true);
    expect(await exists(remote, lease)).toBe(true);
    expect(await exists(management, cmPath)).toBe(false);
    expect(await exists(management, inventory)).toBe(false);
    expect(await exists(management, lease)).toBe(false);

    // Prune happens in the remote cluster too.
    await writeFile(
      join(root, 'app/cm.yaml'),
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: renamed, namespace: ${ns}}\ndata: {a: b}\n`,
    );
    const second = await reconcileTree(root);
    expect(second.pruned?.map((p) => `${p.subject} ${p.action}`)).toEqual([`ConfigMap/${ns}/on-the-edge deleted`]);
    expect(await exists(remote, cmPath)).toBe(false);
    expect(await exists(remote, `/api/v1/namespaces/${ns}/configmaps/renamed`)).toBe(true);
  });

  it.each([
    [
      'a missing Secret',
      undefined,
      (ns: string) => `spec.kubeConfig.secretRef: Secret ${ns}/edge-kubeconfig not found`,
    ],
    [
      'a Secret without the key',
      'other',
      (ns: string) =>
        `spec.kubeConfig.secretRef: Secret ${ns}/edge-kubeconfig has no key 'value' or 'value.yaml' (has: other)`,
    ],
  ])('names %s', async (_, key, message) => {
    const ns = await freshNamespace(management);
    if (key) await kubeconfigSecret(ns, 'edge-kubeconfig', key, remoteKubeconfig);
    const root = await writeTree({
      'ks.yaml': ks(ns, 'edge-kubeconfig'),
      'app/cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: ${ns}}\n`,
    });
    const report = await reconcileTree(root);
    expect(report.ok).toBe(false);
    expect(report.error).toBe(`Kustomization ${ns}/edge (ks.yaml, document 1): ${message(ns)}`);
  });
});
