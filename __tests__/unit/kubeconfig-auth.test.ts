// The ways a kubeconfig authenticates, as client-go checks them: each refusal names the field and
// the cluster or user; the environment's proxy as Go reads it; impersonation headers; an oidc id-token.
import { describe, expect, it } from 'vitest';
import { impersonationHeaders, oidcIdToken, proxyUrlProblem } from '../../src/cluster/kubeconfig-auth.js';
import { kubeconfigProblem, type FileReader } from '../../src/cluster/kubeconfig-check.js';
import { proxyFromEnvironment } from '../../src/cluster/proxy-env.js';
import { CERT, KEY } from '../helpers/test-cert.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const SECRET = 'tok-abcdef0123456789';
const NOW = Date.parse('2030-01-01T00:00:00Z');
const jwt = (claims: object) => `eyJhbGciOiJub25lIn0.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.sig`;

type Fields = Record<string, unknown>;

/** A kubeconfig with context ctx → cluster k (a CA, the given fields) and user u (the given fields). */
function doc(cluster: Fields, user: Fields): Fields {
  return {
    'current-context': 'ctx',
    clusters: [{ name: 'k', cluster: { server: 'https://127.0.0.1:6443', ...cluster } }],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'ctx', context: { cluster: 'k', user: 'u' } }],
  };
}
const files: Record<string, string> = { '/k/ca.crt': CERT, '/k/token': `${SECRET}\n`, '/k/empty': '\n' };
const read: FileReader = (path) => {
  const text = files[path];
  if (text === undefined) throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
  return Buffer.from(text);
};
const AT_CLUSTER = 'kubeconfig /k/config: cluster "k" (of context "ctx"): ';
const AT_USER = 'kubeconfig /k/config: user "u" (of context "ctx"): ';
const CA = { 'certificate-authority-data': b64(CERT) };

describe('kubeconfigProblem: each way to authenticate', () => {
  it.each<[string, Fields, Fields, string | undefined]>([
    ['a token', CA, { token: SECRET }, undefined],
    ['tokenFile (client-go)', CA, { tokenFile: '/k/token' }, undefined],
    [
      'tokenFile and token (the file first, the token its fallback)',
      CA,
      { tokenFile: '/k/token', token: SECRET },
      undefined,
    ],
    [
      'a tokenFile that cannot be read',
      CA,
      { tokenFile: '/k/nothing' },
      `${AT_USER}users[].user.tokenFile /k/nothing cannot be read (ENOENT): fix the path (relative paths are relative to the kubeconfig file)`,
    ],
    [
      'an empty tokenFile',
      CA,
      { tokenFile: '/k/empty' },
      `${AT_USER}users[].user.tokenFile /k/empty is empty: it should hold the bearer token`,
    ],
    [
      'client certificate files',
      { 'certificate-authority': '/k/ca.crt' },
      { 'client-certificate': '/k/ca.crt', 'client-key-data': b64(KEY) },
      undefined,
    ],
    [
      'client-certificate and client-certificate-data both',
      CA,
      { 'client-certificate': '/k/ca.crt', 'client-certificate-data': b64(CERT), 'client-key-data': b64(KEY) },
      `${AT_USER}users[].user.client-certificate-data and client-certificate are both set, which client-go refuses: keep one`,
    ],
    [
      'certificate-authority and certificate-authority-data both',
      { ...CA, 'certificate-authority': '/k/ca.crt' },
      { token: SECRET },
      `${AT_CLUSTER}clusters[].cluster.certificate-authority-data and certificate-authority are both set, which client-go refuses: keep one`,
    ],
    ['insecure-skip-tls-verify alone', { 'insecure-skip-tls-verify': true }, { token: SECRET }, undefined],
    [
      'insecure-skip-tls-verify with a CA',
      { 'certificate-authority': '/k/ca.crt', 'insecure-skip-tls-verify': true },
      { token: SECRET },
      `${AT_CLUSTER}clusters[].cluster.insecure-skip-tls-verify is true and certificate-authority is set too, which client-go refuses (a root certificate with the insecure flag): remove one of them`,
    ],
    ['tls-server-name', { ...CA, 'tls-server-name': 'kubernetes' }, { token: SECRET }, undefined],
    [
      'tls-server-name that is not a string',
      { ...CA, 'tls-server-name': 7 },
      { token: SECRET },
      `${AT_CLUSTER}clusters[].cluster.tls-server-name is not a string: set it to the host name the server certificate is for`,
    ],
    ['an http proxy-url', { ...CA, 'proxy-url': 'http://proxy:3128' }, { token: SECRET }, undefined],
    [
      'a socks5 proxy-url with a password',
      { ...CA, 'proxy-url': 'socks5://u:pw-secret@proxy:1080' },
      { token: SECRET },
      undefined,
    ],
    [
      'a proxy-url that is not a URL',
      { ...CA, 'proxy-url': 'pw-secret garbage' },
      { token: SECRET },
      `${AT_CLUSTER}clusters[].cluster.proxy-url is not a URL: set it to the proxy's URL, such as http://proxy.example:3128 (http://, https:// or socks5://)`,
    ],
    [
      'a socks4 proxy-url',
      { ...CA, 'proxy-url': 'socks4://proxy:1080' },
      { token: SECRET },
      `${AT_CLUSTER}clusters[].cluster.proxy-url has the scheme "socks4:", which client-go does not support: use http://, https:// or socks5://`,
    ],
    ['basic auth', CA, { username: 'admin', password: 'pw-secret' }, undefined],
    [
      'basic auth and a token',
      CA,
      { username: 'admin', password: 'pw-secret', token: SECRET },
      `${AT_USER}users[].user.username/password and token are both set, which client-go refuses (basic auth or a bearer token, not both): keep one`,
    ],
    [
      'impersonation with groups, uid and extra',
      CA,
      { token: SECRET, as: 'jane', 'as-groups': ['dev'], 'as-uid': '42', 'as-user-extra': { scopes: ['a'] } },
      undefined,
    ],
    [
      'as-groups without as',
      CA,
      { token: SECRET, 'as-groups': ['dev'] },
      `${AT_USER}users[].user.as-groups is set without users[].user.as, which client-go refuses (groups, uid or extra are requested for an impersonated user): set as too`,
    ],
    [
      'as-groups that is not a list',
      CA,
      { token: SECRET, as: 'jane', 'as-groups': 'dev' },
      `${AT_USER}users[].user.as-groups is not a list of group names`,
    ],
    [
      'an exec plugin (v1beta1, no interactiveMode)',
      CA,
      { exec: { apiVersion: 'client.authentication.k8s.io/v1beta1', command: 'aws' } },
      undefined,
    ],
    [
      'an exec plugin without apiVersion',
      CA,
      { exec: { command: 'aws' } },
      `${AT_USER}users[].user.exec.apiVersion is not set, which client-go requires: set it to the version the plugin speaks (client.authentication.k8s.io/v1 or client.authentication.k8s.io/v1beta1)`,
    ],
    [
      'an exec plugin of v1alpha1',
      CA,
      { exec: { apiVersion: 'client.authentication.k8s.io/v1alpha1', command: 'aws' } },
      `${AT_USER}users[].user.exec.apiVersion "client.authentication.k8s.io/v1alpha1" is not one client-go speaks (removed in Kubernetes 1.24): use client.authentication.k8s.io/v1 or client.authentication.k8s.io/v1beta1, with a plugin that prints it`,
    ],
    [
      'an exec interactiveMode that does not exist',
      CA,
      { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'aws', interactiveMode: 'Sometimes' } },
      `${AT_USER}users[].user.exec.interactiveMode "Sometimes" is not Never, IfAvailable or Always`,
    ],
    [
      'an exec env entry without name',
      CA,
      { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'aws', env: [{ value: 'x' }] } },
      `${AT_USER}users[].user.exec.env has an entry without name, which client-go refuses: give each entry a name`,
    ],
    [
      'the gcp auth-provider',
      CA,
      { 'auth-provider': { name: 'gcp', config: { 'access-token': SECRET } } },
      `${AT_USER}users[].user.auth-provider "gcp" was removed from client-go and kubectl (Kubernetes 1.26): use the exec plugin gke-gcloud-auth-plugin instead (\`gcloud container clusters get-credentials\` writes it; in a workflow, google-github-actions/get-gke-credentials)`,
    ],
    [
      'the azure auth-provider',
      CA,
      { 'auth-provider': { name: 'azure', config: { 'access-token': SECRET } } },
      `${AT_USER}users[].user.auth-provider "azure" was removed from client-go and kubectl (Kubernetes 1.26): use the exec plugin kubelogin instead (https://github.com/Azure/kubelogin: \`kubelogin convert-kubeconfig -l azurecli\` or \`-l workloadidentity\` writes it; in a workflow, azure/aks-set-context)`,
    ],
    [
      'an unknown auth-provider',
      CA,
      { 'auth-provider': { name: 'acme' } },
      `${AT_USER}users[].user.auth-provider "acme" is not an auth provider client-go knows (only oidc remains; gcp and azure were removed): use an exec plugin (users[].user.exec)`,
    ],
    [
      'oidc with a valid id-token',
      CA,
      { 'auth-provider': { name: 'oidc', config: { 'id-token': jwt({ exp: NOW / 1000 + 3600 }) } } },
      undefined,
    ],
    [
      'oidc with an expired id-token',
      CA,
      {
        'auth-provider': {
          name: 'oidc',
          config: { 'id-token': jwt({ exp: NOW / 1000 - 1 }), 'refresh-token': SECRET },
        },
      },
      `${AT_USER}users[].user.auth-provider "oidc": config.id-token has expired, and refreshing it (refresh-token) is not done here: use an exec plugin instead, such as kubelogin (https://github.com/int128/kubelogin: \`kubectl oidc-login get-token\`), or a token`,
    ],
    [
      'auth-provider and exec both',
      CA,
      { 'auth-provider': { name: 'oidc' }, exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'x' } },
      `${AT_USER}users[].user.auth-provider and exec are both set, which client-go refuses: keep the exec plugin`,
    ],
  ])('%s', (_, cluster, user, expected) => {
    const problem = kubeconfigProblem(doc(cluster, user), '/k/config', undefined, read, NOW);
    expect(problem).toBe(expected);
    for (const secret of [SECRET, 'pw-secret']) expect(problem ?? '').not.toContain(secret);
  });
});

describe('proxyUrlProblem', () => {
  it.each<[unknown, string | undefined]>([
    ['http://proxy:3128', undefined],
    ['https://proxy:3128', undefined],
    ['socks5://proxy:1080', undefined],
    ['proxy:3128', 'has the scheme "proxy:", which client-go does not support: use http://, https:// or socks5://'],
    [
      'http://',
      "is not a URL: set it to the proxy's URL, such as http://proxy.example:3128 (http://, https:// or socks5://)",
    ],
    [3128, "is not a string: set it to the proxy's URL (http://, https:// or socks5://)"],
  ])('%s', (value, expected) => {
    expect(proxyUrlProblem(value)).toBe(expected);
  });
});

describe('proxyFromEnvironment (Go http.ProxyFromEnvironment, NO_PROXY with CIDRs)', () => {
  const P = 'http://proxy:3128';
  it.each<[string, string, Record<string, string>, string | undefined | { problem: string }]>([
    ['no variables', 'https://api.example:6443', {}, undefined],
    ['HTTPS_PROXY for https', 'https://api.example:6443', { HTTPS_PROXY: P }, P],
    ['https_proxy (lower case)', 'https://api.example:6443', { https_proxy: P }, P],
    ['HTTP_PROXY is not for https', 'https://api.example:6443', { HTTP_PROXY: P }, undefined],
    ['HTTP_PROXY for http', 'http://api.example:8080', { HTTP_PROXY: P }, P],
    ['a value without scheme is http', 'https://api.example:6443', { HTTPS_PROXY: 'proxy:3128' }, 'http://proxy:3128'],
    ['never for localhost', 'https://localhost:6443', { HTTPS_PROXY: P }, undefined],
    ['never for a loopback address', 'https://127.0.0.1:6443', { HTTPS_PROXY: P }, undefined],
    ['never for ::1', 'https://[::1]:6443', { HTTPS_PROXY: P }, undefined],
    ['NO_PROXY *', 'https://api.example:6443', { HTTPS_PROXY: P, NO_PROXY: '*' }, undefined],
    ['NO_PROXY the host', 'https://api.example:6443', { HTTPS_PROXY: P, NO_PROXY: 'other, api.example' }, undefined],
    ['NO_PROXY a parent domain', 'https://api.example:6443', { HTTPS_PROXY: P, NO_PROXY: 'example' }, undefined],
    [
      'NO_PROXY .domain matches subdomains',
      'https://api.example:6443',
      { HTTPS_PROXY: P, NO_PROXY: '.example' },
      undefined,
    ],
    ['NO_PROXY .domain not the domain', 'https://example:6443', { HTTPS_PROXY: P, NO_PROXY: '.example' }, P],
    ['NO_PROXY *.domain', 'https://api.example:6443', { HTTPS_PROXY: P, NO_PROXY: '*.example' }, undefined],
    [
      'NO_PROXY a suffix that is no domain',
      'https://myapi.example:6443',
      { HTTPS_PROXY: P, NO_PROXY: 'api.example' },
      P,
    ],
    [
      'NO_PROXY host:port, same port',
      'https://api.example:6443',
      { HTTPS_PROXY: P, NO_PROXY: 'api.example:6443' },
      undefined,
    ],
    ['NO_PROXY host:port, other port', 'https://api.example:6443', { HTTPS_PROXY: P, NO_PROXY: 'api.example:443' }, P],
    ['NO_PROXY an IP', 'https://10.1.2.3:6443', { HTTPS_PROXY: P, NO_PROXY: '10.1.2.3' }, undefined],
    ['NO_PROXY a CIDR', 'https://10.1.2.3:6443', { HTTPS_PROXY: P, NO_PROXY: '10.0.0.0/8' }, undefined],
    ['NO_PROXY another CIDR', 'https://10.1.2.3:6443', { HTTPS_PROXY: P, NO_PROXY: '192.168.0.0/16' }, P],
    ['no_proxy (lower case)', 'https://api.example:6443', { HTTPS_PROXY: P, no_proxy: 'api.example' }, undefined],
    [
      'a value that is no URL',
      'https://api.example:6443',
      { HTTPS_PROXY: 'http://[bad' },
      {
        problem:
          "the environment's HTTPS_PROXY is not a proxy URL (the server has no proxy-url, so client-go would use it): set it to http://HOST:PORT, or add the server's host to NO_PROXY",
      },
    ],
  ])('%s', (_, server, env, expected) => {
    expect(proxyFromEnvironment(server, env)).toEqual(expected);
  });
});

describe('impersonationHeaders', () => {
  it.each<[string, Parameters<typeof impersonationHeaders>[0], Record<string, string | string[]>]>([
    ['a user', { user: 'jane' }, { 'impersonate-user': 'jane' }],
    [
      'groups, uid and extra',
      { user: 'jane', uid: '42', groups: ['a', 'b'], extra: { 'acme.io/scope': ['x', 'y'] } },
      {
        'impersonate-user': 'jane',
        'impersonate-uid': '42',
        'impersonate-group': ['a', 'b'],
        'impersonate-extra-acme.io%2Fscope': ['x', 'y'],
      },
    ],
  ])('%s', (_, who, expected) => {
    expect(impersonationHeaders(who)).toEqual(expected);
  });
});

describe('oidcIdToken', () => {
  const valid = jwt({ exp: NOW / 1000 + 3600 });
  it.each<[string, Fields, string | RegExp]>([
    ['a valid id-token', { 'id-token': valid }, valid],
    ['expiring within a minute', { 'id-token': jwt({ exp: NOW / 1000 + 30 }) }, /has expired/],
    ['no exp claim', { 'id-token': jwt({ sub: 'x' }) }, /is not a JWT with an exp claim/],
    ['not a JWT', { 'id-token': SECRET }, /is not a JWT with an exp claim/],
    ['no id-token', { 'refresh-token': SECRET }, /has no config.id-token/],
  ])('%s', (_, config, expected) => {
    const got = oidcIdToken(config, NOW);
    if (typeof expected === 'string') expect(got).toBe(expected);
    else expect(typeof got === 'object' ? got.problem : got).toMatch(expected);
  });
});
