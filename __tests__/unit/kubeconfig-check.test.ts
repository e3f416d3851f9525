import { describe, expect, it } from 'vitest';
import { kubeconfigProblem, type FileReader } from '../../src/cluster/kubeconfig-check.js';
import { CERT, KEY } from '../helpers/test-cert.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const SECRET_TOKEN = 'tok-abcdef0123456789';

type Doc = Record<string, unknown>;

/** A valid kubeconfig with one context `ctx` (cluster `k`, user `u`), changed by `edit`. */
function doc(edit: (d: Doc & { clusters: Doc[]; users: Doc[]; contexts: Doc[] }) => void = () => {}): Doc {
  const d = {
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'ctx',
    clusters: [{ name: 'k', cluster: { server: 'https://127.0.0.1:6443', 'certificate-authority-data': b64(CERT) } }],
    users: [{ name: 'u', user: { token: SECRET_TOKEN } }],
    contexts: [{ name: 'ctx', context: { cluster: 'k', user: 'u' } }],
  };
  edit(d);
  return d;
}
const cluster = (d: { clusters: Doc[] }) => d.clusters[0]!['cluster'] as Doc;
const context = (d: { contexts: Doc[] }) => d.contexts[0]!['context'] as Doc;

const files: Record<string, string> = { '/k/ca.crt': CERT, '/k/garbage.crt': 'not a certificate\n' };
const read: FileReader = (path) => {
  const text = files[path];
  if (text === undefined) throw Object.assign(new Error(`ENOENT: no such file, open '${path}'`), { code: 'ENOENT' });
  return Buffer.from(text);
};

describe('kubeconfigProblem', () => {
  it.each<[string, Doc, string | undefined]>([
    ['a valid kubeconfig', doc(), undefined],
    [
      'a context without user (anonymous)',
      doc((d) => {
        delete context(d)['user'];
      }),
      undefined,
    ],
    [
      'a client certificate and key given as files',
      doc((d) => {
        d.users[0]!['user'] = { 'client-certificate': '/k/ca.crt', 'client-key-data': b64(KEY) };
      }),
      undefined,
    ],
    [
      'no contexts at all',
      doc((d) => {
        d.contexts = [];
        delete d['current-context'];
      }),
      'kubeconfig /k/config has no contexts: add a context that names a cluster and a user, and set current-context to it',
    ],
    [
      'no current-context',
      doc((d) => {
        delete d['current-context'];
      }),
      'kubeconfig /k/config sets no current-context: set current-context to one of its contexts ("ctx"), or choose one with the context input / --context flag',
    ],
    [
      'a current-context that does not exist',
      doc((d) => {
        d['current-context'] = 'prod';
      }),
      'kubeconfig /k/config: current-context "prod" is not one of its contexts ("ctx"): fix current-context, or choose a context with the context input / --context flag',
    ],
    [
      'a context whose user is missing',
      doc((d) => {
        context(d)['user'] = 'admin';
      }),
      'kubeconfig /k/config: context "ctx" names user "admin", which is not in its users list ("u"): add the user or fix the context\'s user',
    ],
    [
      'a context whose cluster is missing',
      doc((d) => {
        context(d)['cluster'] = 'prod';
      }),
      'kubeconfig /k/config: context "ctx" names cluster "prod", which is not in its clusters list ("k"): add the cluster or fix the context\'s cluster',
    ],
    [
      'a context that names no cluster',
      doc((d) => {
        delete context(d)['cluster'];
      }),
      'kubeconfig /k/config: context "ctx" names no cluster: set its cluster to one of the clusters ("k")',
    ],
    [
      'a cluster without server',
      doc((d) => {
        delete cluster(d)['server'];
      }),
      'kubeconfig /k/config: cluster "k" (of context "ctx") has no server: set its server to the API server\'s URL, such as https://HOST:6443',
    ],
    [
      'a server that is not a URL',
      doc((d) => {
        cluster(d)['server'] = 'kube.example.com:6443 ';
      }),
      'kubeconfig /k/config: cluster "k" (of context "ctx") has a server that is not an https:// or http:// URL: set its server to the API server\'s URL, such as https://HOST:6443',
    ],
    [
      'an http:// server without insecure-skip-tls-verify',
      doc((d) => {
        cluster(d)['server'] = 'http://127.0.0.1:8080';
      }),
      'kubeconfig /k/config: cluster "k" (of context "ctx") has an http:// server, which is used only with insecure-skip-tls-verify: true: use the API server\'s https:// URL',
    ],
    [
      'an http:// server with insecure-skip-tls-verify',
      doc((d) => {
        Object.assign(cluster(d), { server: 'http://127.0.0.1:8080', 'insecure-skip-tls-verify': true });
        // client-go refuses a CA together with insecure-skip-tls-verify (a case below).
        delete cluster(d)['certificate-authority-data'];
      }),
      undefined,
    ],
    [
      'certificate-authority-data that is not base64',
      doc((d) => {
        cluster(d)['certificate-authority-data'] = 'not*base64!';
      }),
      'kubeconfig /k/config: cluster "k" (of context "ctx"): certificate-authority-data is not valid base64: it should be the CA certificate\'s PEM file, base64-encoded (base64 -w0 ca.crt)',
    ],
    [
      'certificate-authority-data that is PEM text, not base64',
      doc((d) => {
        cluster(d)['certificate-authority-data'] = CERT;
      }),
      'kubeconfig /k/config: cluster "k" (of context "ctx"): certificate-authority-data holds PEM text, not its base64: base64-encode it (base64 -w0 ca.crt) or use certificate-authority with the file\'s path',
    ],
    [
      'certificate-authority-data that decodes to something other than PEM',
      doc((d) => {
        cluster(d)['certificate-authority-data'] = b64('hello world');
      }),
      'kubeconfig /k/config: cluster "k" (of context "ctx"): certificate-authority-data does not decode to a PEM certificate (-----BEGIN CERTIFICATE-----): it should be the CA certificate\'s PEM file, base64-encoded',
    ],
    [
      'certificate-authority-data whose PEM does not parse',
      doc((d) => {
        cluster(d)['certificate-authority-data'] = b64(CERT.replace('MIIBmDCC', 'MIIBmXXX'));
      }),
      'kubeconfig /k/config: cluster "k" (of context "ctx"): certificate-authority-data holds a PEM block that is not a valid X.509 certificate: replace it with the CA certificate\'s PEM file, base64-encoded',
    ],
    [
      'a certificate-authority file that does not exist',
      doc((d) => {
        cluster(d)['certificate-authority'] = '/k/missing.crt';
      }),
      'kubeconfig /k/config: cluster "k" (of context "ctx"): certificate-authority /k/missing.crt cannot be read (ENOENT): fix the path (relative paths are relative to the kubeconfig file)',
    ],
    [
      'a certificate-authority file that is not a certificate',
      doc((d) => {
        cluster(d)['certificate-authority'] = '/k/garbage.crt';
      }),
      'kubeconfig /k/config: cluster "k" (of context "ctx"): certificate-authority /k/garbage.crt is not a PEM certificate (-----BEGIN CERTIFICATE-----)',
    ],
    [
      'client-key-data that is not base64',
      doc((d) => {
        d.users[0]!['user'] = { 'client-certificate-data': b64(CERT), 'client-key-data': '%%%' };
      }),
      'kubeconfig /k/config: user "u" (of context "ctx"): client-key-data is not valid base64: it should be the private key\'s PEM file, base64-encoded (base64 -w0 client.key)',
    ],
    [
      'client-key-data that is not a private key',
      doc((d) => {
        d.users[0]!['user'] = { 'client-certificate-data': b64(CERT), 'client-key-data': b64(CERT) };
      }),
      'kubeconfig /k/config: user "u" (of context "ctx"): client-key-data does not decode to a PEM private key (-----BEGIN … PRIVATE KEY-----): it should be the private key\'s PEM file, base64-encoded',
    ],
    [
      'client-key-data whose PEM does not parse',
      doc((d) => {
        d.users[0]!['user'] = {
          'client-certificate-data': b64(CERT),
          'client-key-data': b64('-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n'),
        };
      }),
      'kubeconfig /k/config: user "u" (of context "ctx"): client-key-data holds a PEM block that is not a valid private key: replace it with the private key\'s PEM file, base64-encoded',
    ],
    [
      'client-certificate-data without a key',
      doc((d) => {
        d.users[0]!['user'] = { 'client-certificate-data': b64(CERT) };
      }),
      'kubeconfig /k/config: user "u" (of context "ctx") has a client certificate but no client key: add client-key-data (or client-key)',
    ],
    [
      'a client key without a certificate',
      doc((d) => {
        d.users[0]!['user'] = { 'client-key-data': b64(KEY) };
      }),
      'kubeconfig /k/config: user "u" (of context "ctx") has a client key but no client certificate: add client-certificate-data (or client-certificate)',
    ],
    [
      'an exec section without command',
      doc((d) => {
        d.users[0]!['user'] = { exec: { apiVersion: 'client.authentication.k8s.io/v1', args: ['x'] } };
      }),
      'kubeconfig /k/config: user "u" (of context "ctx") has an exec section without command: set exec.command to the credential plugin to run',
    ],
    [
      'an exec plugin that always needs a terminal',
      doc((d) => {
        d.users[0]!['user'] = {
          exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'kubelogin', interactiveMode: 'Always' },
        };
      }),
      'kubeconfig /k/config: user "u" (of context "ctx") has an exec plugin with interactiveMode: Always, which needs a terminal, and this run has none: set interactiveMode to IfAvailable or Never, with a plugin that can log in without one',
    ],
    [
      'a token-file that cannot be read',
      doc((d) => {
        d.users[0]!['user'] = { 'token-file': '/k/token' };
      }),
      'kubeconfig /k/config: user "u" (of context "ctx"): token-file /k/token cannot be read (ENOENT): fix the path (relative paths are relative to the kubeconfig file)',
    ],
  ])('%s', (_, d, expected) => {
    const problem = kubeconfigProblem(d, '/k/config', undefined, read);
    expect(problem).toBe(expected);
    expect(problem ?? '').not.toContain(SECRET_TOKEN);
  });

  it.each([
    ['an explicit context that exists', 'ctx', undefined],
    [
      'an explicit context that does not exist',
      'staging',
      'kubeconfig /k/config has no context "staging" (has: "ctx"): choose one of its contexts with the context input / --context flag',
    ],
  ])('%s', (_, name, expected) => {
    expect(kubeconfigProblem(doc(), '/k/config', name, read)).toBe(expected);
  });

  it('never quotes key material', () => {
    const broken = b64(KEY).slice(0, 40) + '!!';
    const problem = kubeconfigProblem(
      doc((d) => {
        d.users[0]!['user'] = { 'client-certificate-data': b64(CERT), 'client-key-data': broken };
      }),
      '/k/config',
      undefined,
      read,
    );
    expect(problem).toContain('client-key-data is not valid base64');
    expect(problem).not.toContain(broken.slice(0, 20));
  });

  it('checks only the context in use: a broken entry elsewhere is not an error', () => {
    const d = doc((x) => {
      x.clusters.push({ name: 'other', cluster: { 'certificate-authority-data': '%%%' } });
      x.contexts.push({ name: 'other', context: { cluster: 'other', user: 'nobody' } });
    });
    expect(kubeconfigProblem(d, '/k/config', undefined, read)).toBeUndefined();
    expect(kubeconfigProblem(d, '/k/config', 'other', read)).toMatch(
      /^kubeconfig \/k\/config: context "other" names user "nobody"/,
    );
  });
});
