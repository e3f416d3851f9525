import { describe, expect, it } from 'vitest';
import { kubeconfigKey, sanitizeKubeconfig } from '../../src/cluster/remote.js';
import { refuseCrossNamespaceRefs } from '../helpers/engine.js';
import { impersonatedUser } from '../../src/flux/support.js';
import { specFromInputs } from '../../src/flux/from-inputs.js';
import type { KustomizationSpec } from '../../src/flux/types.js';

const KC = `apiVersion: v1
kind: Config
current-context: edge
clusters:
- name: other
  cluster: {server: https://other.example}
- name: edge
  cluster:
    server: https://edge.example:6443
    certificate-authority-data: Q0E=
    insecure-skip-tls-verify: true
    certificate-authority: /etc/ca.pem
users:
- name: robot
  user:
    token: t0ken
    exec: {command: aws}
    client-key: /home/key.pem
contexts:
- name: edge
  context: {cluster: edge, user: robot}
`;

describe('sanitizeKubeconfig', () => {
  it('keeps only the server, CA and static credentials of the current context', () => {
    const { config, dropped } = sanitizeKubeconfig(KC, 'Secret x/y');
    expect(config.clusters).toEqual([
      { name: 'remote', cluster: { server: 'https://edge.example:6443', 'certificate-authority-data': 'Q0E=' } },
    ]);
    expect(config.users).toEqual([{ name: 'remote', user: { token: 't0ken' } }]);
    expect(dropped).toEqual([
      'cluster.insecure-skip-tls-verify',
      'cluster.certificate-authority',
      'user.exec',
      'user.client-key',
    ]);
  });
  it.each([
    ['not: [yaml', 'Secret x/y is not valid YAML'],
    ['kind: Config', 'Secret x/y is not a kubeconfig (no clusters list)'],
    ['clusters: []\ncontexts: []', 'Secret x/y: its current context names no cluster'],
    ['clusters: [{name: a, cluster: {}}]', 'Secret x/y: the cluster has no server'],
  ])('refuses %j', (text, message) => {
    expect(() => sanitizeKubeconfig(text, 'Secret x/y')).toThrow(message);
  });
  it('takes the only cluster and user when there is no context', () => {
    const { config } = sanitizeKubeconfig(
      'clusters: [{name: a, cluster: {server: "https://a"}}]\nusers: [{name: u, user: {username: x, password: y}}]',
      's',
    );
    expect(config.clusters[0]?.cluster).toEqual({ server: 'https://a' });
    expect(config.users[0]?.user).toEqual({ username: 'x', password: 'y' });
  });
});

describe('kubeconfigKey', () => {
  it.each([
    [{ value: 'a', 'value.yaml': 'b' }, undefined, 'value'],
    [{ 'value.yaml': 'b' }, undefined, 'value.yaml'],
    [{ other: 'c' }, undefined, undefined],
    [{ value: 'a', custom: 'c' }, 'custom', 'custom'],
    [{ value: 'a' }, 'custom', undefined],
  ])('%j with key %s → %s', (data, key, want) => {
    expect(kubeconfigKey(data, key)).toBe(want);
  });
});

const spec = (over: Partial<KustomizationSpec>): KustomizationSpec => ({
  ...specFromInputs({ path: 'app', source: 'acme/app' }),
  ...over,
});

describe('impersonatedUser', () => {
  it.each([
    [{}, undefined, undefined],
    [{ serviceAccountName: 'deployer' }, undefined, 'system:serviceaccount:team:deployer'],
    [{}, 'fallback', 'system:serviceaccount:team:fallback'],
    [{ serviceAccountName: 'own' }, 'fallback', 'system:serviceaccount:team:own'],
  ])('%j with default %s → %s', (over, defaultServiceAccount, want) => {
    expect(impersonatedUser(spec({ namespace: 'team', ...over }), { defaultServiceAccount })).toBe(want);
  });
});

describe('refuseCrossNamespaceRefs', () => {
  it.each([
    [undefined, false],
    ['team', false],
    ['flux-system', true],
  ])('sourceRef.namespace %s → refused: %s', (namespace, refused) => {
    const s = spec({
      namespace: 'team',
      sourceRef: { kind: 'GitRepository', name: 'repo', ...(namespace ? { namespace } : {}) },
    });
    if (refused)
      expect(() => {
        refuseCrossNamespaceRefs([s]);
      }).toThrow('cross-namespace references are not allowed');
    else
      expect(() => {
        refuseCrossNamespaceRefs([s]);
      }).not.toThrow();
  });
});

describe('prototype-safe ignore paths', () => {
  it.each(['/spec/__proto__/polluted', '/constructor/prototype/polluted', '/__proto__/polluted'])(
    '%s changes no prototype',
    async (pointer) => {
      const { adoptPaths, stripPaths } = await import('../../src/ssa/ignore.js');
      const desired = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, spec: {} };
      const live = JSON.parse('{"spec": {"__proto__": {"polluted": true}}, "__proto__": {"polluted": true}}') as Record<
        string,
        unknown
      >;
      adoptPaths(desired, live, [pointer]);
      stripPaths(desired, [pointer]);
      expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    },
  );
});

describe('remoteKubeConfig', () => {
  it.each(['../../kube-system/secrets/x', 'Name', 'a/b'])(
    'refuses the Secret name %j before any request',
    async (name) => {
      const { remoteKubeConfig } = await import('../../src/cluster/remote.js');
      let requests = 0;
      const client = {
        request: () => {
          requests++;
          return Promise.resolve({});
        },
      };
      await expect(remoteKubeConfig(client as never, 'team', { name }, () => {})).rejects.toThrow(
        'the name is not a Secret name (DNS-1123 subdomain)',
      );
      expect(requests).toBe(0);
    },
  );
});
