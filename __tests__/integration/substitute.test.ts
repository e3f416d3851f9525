// postBuild substitution against the real cluster: substituteFrom sources read from it, values
// applied, and a missing required source failing before anything is written.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { isNotFound } from '../../src/cluster/errors.js';
import { runAction } from '../helpers/action.js';
import { adminClient, freshNamespace, kubeconfigPath, runNode, writeTree } from '../helpers/cluster.js';
import { kustomizationYaml } from '../helpers/manifests.js';
import { KUSTOMIZE } from '../helpers/paths.js';
import { reconcileIn, reconcileTree } from '../helpers/reconcile.js';

/** The Kustomization app in `ns`, substituting greeting: hello and the sources `from` (flow mappings). */
const kustomizationFile = (ns: string, from: string[]) =>
  kustomizationYaml({
    namespace: ns,
    spec: `postBuild:\n  substitute:\n    greeting: hello\n  substituteFrom:\n${from.map((f) => `    - ${f}\n`).join('')}`,
  });

const app = (ns: string) => ({
  'app/config.yaml': `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: ${ns}
data:
  greeting: \${greeting}
  env: \${cluster_env}
  region: \${region:=eu-west-1}
  token: \${api_token}
  literal: $\${not_a_variable}
`,
  'app/deploy.yaml': `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: ${ns}
spec:
  replicas: \${replicas}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "nginx:1.27"}]
`,
});

describe('postBuild substitution on the cluster', () => {
  let client: ClusterClient;
  beforeAll(async () => {
    client = await adminClient();
  });
  afterAll(() => {
    client.close();
  });

  async function seed(ns: string) {
    await client.request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      body: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'cluster-vars' },
        data: { cluster_env: 'staging', replicas: '2', greeting: 'overridden-by-inline' },
      },
    });
    await client.request('POST', `/api/v1/namespaces/${ns}/secrets`, {
      body: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'cluster-secrets' },
        stringData: { api_token: 's3cret-t0ken' },
      },
    });
  }

  it('reads substituteFrom (an optional missing Secret skipped), applies the values, and masks Secret values', async () => {
    const ns = await freshNamespace(client);
    await seed(ns);
    const root = await writeTree({
      'ks.yaml': kustomizationFile(ns, [
        '{kind: ConfigMap, name: cluster-vars}',
        '{kind: Secret, name: cluster-secrets}',
        '{kind: Secret, name: not-there, optional: true}',
      ]),
      ...app(ns),
    });
    const secrets: string[] = [];
    const report = await reconcileTree(root, {}, [], (s) => secrets.push(s));
    expect(report.error).toBeUndefined();
    expect(report.counts.created).toBe(2);
    expect(secrets).toContain('s3cret-t0ken');

    const cm = await client.request<{ data: Record<string, string> }>(
      'GET',
      `/api/v1/namespaces/${ns}/configmaps/settings`,
    );
    expect(cm.data).toEqual({
      greeting: 'hello', // inline postBuild.substitute wins over substituteFrom
      env: 'staging',
      region: 'eu-west-1',
      token: 's3cret-t0ken',
      literal: '${not_a_variable}',
    });
    const d = await client.request<{ spec: { replicas: number } }>(
      'GET',
      `/apis/apps/v1/namespaces/${ns}/deployments/web`,
    );
    expect(d.spec.replicas).toBe(2);
  });

  it('fails on a missing required ConfigMap, naming it, and applies nothing', async () => {
    const { ns, report } = await reconcileIn(client, (ns) => ({
      'ks.yaml': kustomizationFile(ns, ['{kind: ConfigMap, name: cluster-vars}']),
      ...app(ns),
    }));
    expect(report.ok).toBe(false);
    expect(report.error).toBe(
      `spec.postBuild.substituteFrom[0]: ConfigMap ${ns}/cluster-vars not found; create it, or set optional: true to allow it to be missing`,
    );
    expect(report.changeset).toEqual([]);
    await expect(client.request('GET', `/api/v1/namespaces/${ns}/configmaps/settings`)).rejects.toSatisfy(isNotFound);
  });

  it('fails in strict mode on an unset variable, naming object and variable, and applies nothing', async () => {
    const { ns, report } = await reconcileIn(client, (ns) => ({
      'ks.yaml': kustomizationFile(ns, ['{kind: ConfigMap, name: cluster-vars, optional: true}']),
      ...app(ns),
    }));
    expect(report.error).toBe(
      `ConfigMap/${ns}/settings (app/config.yaml): postBuild substitution failed: variable not set (strict mode): "cluster_env"; ` +
        'set it in spec.postBuild.substitute or in a ConfigMap or Secret of spec.postBuild.substituteFrom, or give it a default: ${cluster_env:=value}',
    );
    expect(report.changeset).toEqual([]);
  });

  it('build applies --var and the cluster sources when a kubeconfig is given, and only --var without one', async () => {
    const ns = await freshNamespace(client);
    await seed(ns);
    const root = await writeTree({
      'ks.yaml': kustomizationFile(ns, [
        '{kind: ConfigMap, name: cluster-vars}',
        '{kind: Secret, name: cluster-secrets}',
      ]),
      ...app(ns),
    });
    const args = [
      'build',
      '--kustomizations',
      'ks.yaml',
      '--kustomize-path',
      KUSTOMIZE,
      '--var',
      'region=us-east-2',
      '--show-secrets',
    ];
    const withCluster = await runNode('dist/cli.js', [...args, '--kubeconfig', kubeconfigPath()], { cwd: root });
    expect(withCluster.code, withCluster.stderr).toBe(0);
    expect(withCluster.stdout).toContain('env: staging');
    expect(withCluster.stdout).toContain('region: us-east-2');
    expect(withCluster.stdout).toContain('replicas: 2');

    const offline = await runNode('dist/cli.js', [...args, '--no-strict-substitute', '--var', 'cluster_env=local'], {
      cwd: root,
    });
    expect(offline.code, offline.stderr).toBe(0);
    expect(offline.stderr).toContain('spec.postBuild.substituteFrom skipped: no cluster to read it from');
    expect(offline.stdout).toContain('env: local');
    expect(offline.stdout).toContain('token: null'); // `token: ${api_token}` with an empty value is YAML null, as in Flux
  });

  it('the action substitutes its vars input into a plain path', async () => {
    const ns = await freshNamespace(client);
    const root = await writeTree({
      'deploy/cm.yaml': `apiVersion: v1
kind: ConfigMap
metadata: {name: from-vars, namespace: ${ns}}
data:
  env: \${cluster_env}
  token: \${token}
`,
    });
    const res = await runAction(root, {
      kubeconfig: kubeconfigPath(),
      path: 'deploy',
      vars: 'cluster_env: ci',
      'secret-vars': '{"token": "gh-secret-value"}',
    });
    expect(res.code, res.stdout).toBe(0);
    expect(res.stdout).toContain('::add-mask::gh-secret-value');
    const cm = await client.request<{ data: Record<string, string> }>(
      'GET',
      `/api/v1/namespaces/${ns}/configmaps/from-vars`,
    );
    expect(cm.data).toEqual({ env: 'ci', token: 'gh-secret-value' });
  });
});
