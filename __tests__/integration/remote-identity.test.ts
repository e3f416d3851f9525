// Issue 51: spec.kubeConfig.configMapRef with Flux's generic provider, on two real clusters started
// here. Cluster "home" is the action's cluster: it publishes its service-account issuer and holds the
// Kustomization's ConfigMap and ServiceAccount. Cluster "edge" trusts home's issuer through a
// structured AuthenticationConfiguration (a JWT authenticator: audience kr-edge, the token's subject
// becomes the user `home:<sub>`), and RBAC there gives that user its namespace only. The run asks
// home's TokenRequest API for the ServiceAccount's token and applies into edge with it.
import { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterClient } from '../../src/cluster/client.js';
import { exists, eventually, writeTree } from '../helpers/cluster.js';
import { startCluster, trustIssuerConfig, type TestCluster } from '../helpers/issuer-clusters.js';
import { kustomizationYaml } from '../helpers/manifests.js';
import { reconcileTree } from '../helpers/reconcile.js';

const AUDIENCE = 'kr-edge';
const PREFIX = 'home:';

const ks = (ns: string, configMap: string, extra = '') =>
  kustomizationYaml({
    name: 'edge',
    namespace: ns,
    path: './app',
    prune: true,
    spec: `kubeConfig:\n  configMapRef: {name: ${configMap}}${extra}`,
  });

const post = (client: ClusterClient, path: string, body: Record<string, unknown>) =>
  client.request('POST', path, { body });

describe('a remote cluster from spec.kubeConfig.configMapRef (provider generic)', () => {
  let home: TestCluster;
  let edge: TestCluster;
  let n = 0;

  beforeAll(async () => {
    home = await startCluster('home', ['--publish-issuer']);
    edge = await startCluster('edge', ['--authentication-config', await trustIssuerConfig(home, AUDIENCE, PREFIX)]);
    // The edge's authenticator fetches home's discovery document and keys after it starts: wait
    // until a token of home is accepted there.
    await post(home.client, '/api/v1/namespaces/default/serviceaccounts', {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'probe' },
    });
    await eventually('edge trusts the tokens of home', 60_000, async () => {
      const token = await tokenOf(home, 'default', 'probe', [AUDIENCE]);
      const client = bearerClient(edge, token);
      try {
        const review = await post(client, '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'SelfSubjectReview',
        });
        return (review as { status: { userInfo: { username: string } } }).status.userInfo.username;
      } catch {
        return undefined;
      } finally {
        client.close();
      }
    });
  }, 240_000);
  afterAll(async () => {
    await edge.stop();
    await home.stop();
  });

  /** A namespace on both clusters; on edge, `home:system:serviceaccount:<ns>:<sa>` may do anything in it. */
  async function namespaceFor(sa: string): Promise<string> {
    const ns = `identity-${++n}`;
    for (const c of [home, edge]) {
      await post(c.client, '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    }
    await post(home.client, `/api/v1/namespaces/${ns}/serviceaccounts`, {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: sa },
    });
    await post(edge.client, `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'home-deployer' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [
        { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: `${PREFIX}system:serviceaccount:${ns}:${sa}` },
      ],
    });
    return ns;
  }

  async function identityConfigMap(ns: string, name: string, data: Record<string, string>) {
    await post(home.client, `/api/v1/namespaces/${ns}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name },
      data,
    });
  }

  it('applies into edge with a token of the ConfigMap’s ServiceAccount; objects, inventory and lock are there', async () => {
    const ns = await namespaceFor('deployer');
    await identityConfigMap(ns, 'edge-identity', {
      provider: 'generic',
      address: edge.server,
      'ca.crt': edge.ca,
      audiences: AUDIENCE,
      serviceAccountName: 'deployer',
    });
    const root = await writeTree({
      'ks.yaml': ks(ns, 'edge-identity'),
      'app/cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: on-the-edge, namespace: ${ns}}\ndata: {a: b}\n`,
    });
    const log: string[] = [];
    const secrets: string[] = [];
    const report = await reconcileTree(root, { kubeconfig: { kind: 'path', path: home.kubeconfig } }, log, (s) =>
      secrets.push(s),
    );
    expect(report.error).toBeUndefined();
    expect(report.server).toBe(edge.server);
    expect(report.notes).toContain(
      `spec.kubeConfig.configMapRef: ConfigMap ${ns}/edge-identity: provider generic, a token of ServiceAccount ` +
        `${ns}/deployer for audience ${AUDIENCE} presented to ${edge.server}`,
    );
    // The token is registered as a secret (masked), and is a JWT of home's issuer.
    const token = secrets.find((s) => s.split('.').length === 3);
    expect(token).toBeDefined();
    const claims = JSON.parse(Buffer.from(token!.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    expect(claims['iss']).toBe(home.server);
    expect(claims['aud']).toEqual([AUDIENCE]);
    expect(claims['sub']).toBe(`system:serviceaccount:${ns}:deployer`);
    expect(log.join('\n')).not.toContain(token!);

    const cmPath = `/api/v1/namespaces/${ns}/configmaps/on-the-edge`;
    const inventory = `/api/v1/namespaces/${ns}/configmaps/kustomize-reconcile.${ns}.edge`;
    const lease = `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/kustomize-reconcile.${ns}.edge`;
    expect(await exists(edge.client, cmPath)).toBe(true);
    expect(await exists(edge.client, inventory)).toBe(true);
    expect(await exists(edge.client, lease)).toBe(true);
    expect(await exists(home.client, cmPath)).toBe(false);
    expect(await exists(home.client, inventory)).toBe(false);
    expect(await exists(home.client, lease)).toBe(false);
    // The objects were written by the token's user, as edge's authenticator maps it.
    const live = await edge.client.request<{ metadata: { managedFields: { manager: string }[] } }>('GET', cmPath);
    expect(live.metadata.managedFields.map((f) => f.manager)).toContain('kustomize-controller');
  });

  it('a ServiceAccount that opts in by annotation (Flux v1.10 object identity) chooses the audiences', async () => {
    const ns = await namespaceFor('annotated');
    await home.client.request('PATCH', `/api/v1/namespaces/${ns}/serviceaccounts/annotated`, {
      body: {
        metadata: {
          annotations: {
            'credential.auth.fluxcd.io/provider': 'kubernetes',
            'credential.auth.fluxcd.io/audiences': AUDIENCE,
          },
        },
      },
      contentType: 'application/merge-patch+json',
    });
    // The legacy key names an audience edge does not trust: it is not read once the annotation is there.
    await identityConfigMap(ns, 'edge-identity', {
      provider: 'generic',
      address: edge.server,
      'ca.crt': edge.ca,
      audiences: 'not-trusted-by-edge',
      serviceAccountName: 'annotated',
    });
    const root = await writeTree({
      'ks.yaml': ks(ns, 'edge-identity'),
      'app/cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: by-annotation, namespace: ${ns}}\n`,
    });
    const report = await reconcileTree(root, { kubeconfig: { kind: 'path', path: home.kubeconfig } });
    expect(report.error).toBeUndefined();
    const notes = report.notes.join('\n');
    expect(notes).toContain(`a token of ServiceAccount ${ns}/annotated for audience ${AUDIENCE}`);
    expect(notes).toContain("key 'audiences' is not read");
    expect(await exists(edge.client, `/api/v1/namespaces/${ns}/configmaps/by-annotation`)).toBe(true);
  });

  it('without serviceAccountName, uses the action’s own ServiceAccount (Flux: the controller’s)', async () => {
    const ns = await namespaceFor('runner');
    // The action runs as ServiceAccount runner of home, allowed everything there.
    await post(home.client, '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: `runner-${ns}` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'ServiceAccount', name: 'runner', namespace: ns }],
    });
    const runnerKubeconfig = kubeconfigText(home, await tokenOf(home, ns, 'runner', []));
    await identityConfigMap(ns, 'edge-identity', {
      provider: 'generic',
      address: edge.server,
      'ca.crt': edge.ca,
      audiences: AUDIENCE,
    });
    const root = await writeTree({
      'ks.yaml': ks(ns, 'edge-identity'),
      'app/cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: by-the-runner, namespace: ${ns}}\n`,
    });
    const report = await reconcileTree(root, { kubeconfig: { kind: 'content', content: runnerKubeconfig } });
    expect(report.error).toBeUndefined();
    expect(report.notes.join('\n')).toContain(`a token of ServiceAccount ${ns}/runner for audience ${AUDIENCE}`);
    expect(await exists(edge.client, `/api/v1/namespaces/${ns}/configmaps/by-the-runner`)).toBe(true);

    // The same ConfigMap with an action that is not a ServiceAccount (home's admin): refused by name.
    const admin = await reconcileTree(root, { kubeconfig: { kind: 'path', path: home.kubeconfig } });
    expect(admin.error).toBe(
      `Kustomization ${ns}/edge (ks.yaml, document 1): spec.kubeConfig.configMapRef: ConfigMap ${ns}/edge-identity ` +
        "has no key 'serviceAccountName', and the action's identity (admin) is not a ServiceAccount whose token " +
        "could be requested (Flux uses the controller's own ServiceAccount): name the ServiceAccount in the ConfigMap",
    );
  });

  it.each([
    ['a missing ConfigMap', undefined, (ns: string) => `ConfigMap ${ns}/edge-identity not found`],
    [
      'provider aws',
      { provider: 'aws', cluster: 'arn:aws:eks:eu-central-1:123456789012:cluster/prod' },
      (ns: string) => `ConfigMap ${ns}/edge-identity: provider aws is not supported here: it needs EKS`,
    ],
    [
      'a ServiceAccount that does not exist',
      { serviceAccountName: 'nobody' },
      (ns: string) => `ConfigMap ${ns}/edge-identity: ServiceAccount ${ns}/nobody not found`,
    ],
    ['an audience edge does not accept', { audiences: 'someone-else' }, () => `Unauthorized`],
  ])('names %s', async (_, data, message) => {
    const ns = await namespaceFor('deployer');
    if (data) {
      await identityConfigMap(ns, 'edge-identity', {
        provider: 'generic',
        address: edge.server,
        'ca.crt': edge.ca,
        audiences: AUDIENCE,
        serviceAccountName: 'deployer',
        ...data,
      });
    }
    const root = await writeTree({
      'ks.yaml': ks(ns, 'edge-identity'),
      'app/cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: ${ns}}\n`,
    });
    const report = await reconcileTree(root, { kubeconfig: { kind: 'path', path: home.kubeconfig } });
    expect(report.ok).toBe(false);
    expect(report.error).toContain(message(ns));
    expect(await exists(edge.client, `/api/v1/namespaces/${ns}/configmaps/x`)).toBe(false);
  });
});

async function tokenOf(c: TestCluster, ns: string, sa: string, audiences: string[]): Promise<string> {
  const answer = await c.client.request<{ status: { token: string } }>(
    'POST',
    `/api/v1/namespaces/${ns}/serviceaccounts/${sa}/token`,
    { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences } } },
  );
  return answer.status.token;
}

function kubeconfigText(c: TestCluster, token: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'sa',
    clusters: [
      { name: 'c', cluster: { server: c.server, 'certificate-authority-data': Buffer.from(c.ca).toString('base64') } },
    ],
    users: [{ name: 'sa', user: { token } }],
    contexts: [{ name: 'sa', context: { cluster: 'c', user: 'sa' } }],
  });
}

function bearerClient(c: TestCluster, token: string): ClusterClient {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfigText(c, token));
  return new ClusterClient(kc);
}
