import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { isNotFound } from '../../src/cluster/errors.js';
import { runAction } from '../helpers/action.js';
import { adminClient, freshNamespace, kubeconfigPath, writeTree } from '../helpers/cluster.js';

function manifests(ns: string): Record<string, string> {
  return {
    'deploy/app.yaml': `apiVersion: v1
kind: ConfigMap
metadata:
  name: app-settings
  namespace: ${ns}
data:
  color: blue
---
apiVersion: v1
kind: Secret
metadata:
  name: app-credentials
  namespace: ${ns}
stringData:
  password: hunter2-very-secret
`,
    // Not a manifest: the generated kustomization would fail on it (as Flux's does), so it is left out.
    'deploy/values.yaml': 'replicaCount: 3\n',
    '.sourceignore': 'deploy/values.yaml\n',
  };
}

describe('the bundled action, run the way GitHub runs it', () => {
  let client: ClusterClient;
  beforeAll(async () => {
    client = await adminClient();
  });
  afterAll(() => {
    client.close();
  });

  it('applies a plain YAML directory and writes outputs and the job summary', async () => {
    const ns = await freshNamespace(client);
    const workspace = await writeTree(manifests(ns));
    const kubeconfig = await readFile(kubeconfigPath(), 'utf8');

    const res = await runAction(workspace, { kubeconfig, path: 'deploy', mode: 'apply' });
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(JSON.parse(res.outputs['changeset']!)).toEqual([
      expect.objectContaining({ subject: `ConfigMap/${ns}/app-settings`, action: 'created' }),
      expect.objectContaining({ subject: `Secret/${ns}/app-credentials`, action: 'created' }),
    ]);
    expect(res.outputs['created']).toBe('2');
    expect(res.outputs['changed']).toBe('true');
    expect(JSON.parse(res.outputs['report']!)).toMatchObject({ ok: true, mode: 'apply', path: 'deploy' });
    expect(res.summary).toContain(`| \`ConfigMap/${ns}/app-settings\` | created |`);
    expect(res.stdout).toContain(`ConfigMap/${ns}/app-settings created`);
    // The kubeconfig's client key was registered as a secret before anything else was printed.
    const key = /client-key-data: (\S+)/.exec(kubeconfig)![1]!;
    expect(res.stdout).toContain(`::add-mask::${key}`);
    const printed = res.stdout
      .split('\n')
      .filter((l) => !l.startsWith('::add-mask::'))
      .join('\n');
    expect(printed).not.toContain(key);
    expect(res.stdout + res.summary).not.toContain('hunter2-very-secret');

    const cm = await client.request<{ data: Record<string, string> }>(
      'GET',
      `/api/v1/namespaces/${ns}/configmaps/app-settings`,
    );
    expect(cm.data).toEqual({ color: 'blue' });

    const again = await runAction(workspace, { kubeconfig: kubeconfigPath(), path: 'deploy' });
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.outputs['unchanged']).toBe('2');
    expect(again.outputs['changed']).toBe('false');
  });

  it('counts what prune deletes: drift with only a prune pending fails, the summary and outputs count it', async () => {
    const ns = await freshNamespace(client);
    const cm = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${ns}\n`;
    const workspace = await writeTree({ 'deploy/a.yaml': cm('a'), 'deploy/b.yaml': cm('b'), 'deploy/c.yaml': cm('c') });
    const inputs = { kubeconfig: kubeconfigPath(), path: 'deploy', prune: 'true', 'inventory-namespace': ns };
    const first = await runAction(workspace, { ...inputs, mode: 'apply' });
    expect(first.code, first.stdout + first.stderr).toBe(0);
    await writeFile(join(workspace, 'deploy/b.yaml'), '');
    await writeFile(join(workspace, 'deploy/c.yaml'), '');

    const drift = await runAction(workspace, { ...inputs, mode: 'drift' });
    expect(drift.code, drift.stdout + drift.stderr).toBe(1);
    expect(drift.stdout).toContain('::error::drift found: 0 to create, 0 to configure, 2 to delete');
    expect(drift.outputs['drift-detected']).toBe('true');

    const apply = await runAction(workspace, { ...inputs, mode: 'apply' });
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);
    const printed = apply.stdout.split('\n');
    expect(printed.filter((l) => l === `ConfigMap/${ns}/b deleted`)).toHaveLength(1);
    expect(
      printed.some((l) =>
        /^Applied Kustomization \S+ \(\.\/deploy\): 0 created, 0 configured, 2 deleted, 1 unchanged in /.test(l),
      ),
    ).toBe(true);
    expect(apply.summary).toContain('### 🔄 kustomize-reconcile: apply');
    expect(apply.summary).toContain('**0** created · **0** configured · ⚠️ **2** deleted · **1** unchanged');
    expect(apply.outputs['deleted']).toBe('2');
    expect(apply.outputs['changed']).toBe('true');
    expect(JSON.parse(apply.outputs['report']!)).toMatchObject({ counts: { deleted: 2 } });
  });

  it('fails with exit code 2 and a message naming the object when the apply is refused', async () => {
    const workspace = await writeTree({
      'bad/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: no-namespace\ndata:\n  a: b\n',
    });
    const res = await runAction(workspace, { kubeconfig: kubeconfigPath(), path: 'bad' });
    expect(res.code).toBe(2);
    expect(res.stdout).toContain('::error::ConfigMap/no-namespace: namespace not specified');
    expect(res.summary).toContain('**Failed:**');
  });

  it('acts as the default-service-account, whose RBAC then decides', async () => {
    const workspace = await writeTree(manifests('unused'));
    const res = await runAction(workspace, {
      kubeconfig: kubeconfigPath(),
      path: 'deploy',
      'default-service-account': 'nobody',
    });
    expect(res.code).toBe(2);
    expect(res.stdout).toContain('Acting as system:serviceaccount:flux-system:nobody (input default-service-account)');
    expect(res.stdout).toMatch(/User \\?"system:serviceaccount:flux-system:nobody\\?" cannot get resource/);
  });

  it('in preview mode reports what would change and writes nothing', async () => {
    const ns = await freshNamespace(client);
    const workspace = await writeTree(manifests(ns));
    const res = await runAction(workspace, { kubeconfig: kubeconfigPath(), path: 'deploy', mode: 'preview' });
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.outputs['created']).toBe('2');
    await expect(client.request('GET', `/api/v1/namespaces/${ns}/configmaps/app-settings`)).rejects.toSatisfy(
      isNotFound,
    );
  });
});
