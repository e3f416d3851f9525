// Every way a kubeconfig authenticates, against the real API server: who the server says we are
// (a SelfSubjectReview) for each form, or the refusal that names the field. The test cluster's PKI
// is next to its kubeconfig (ca.crt, admin.crt/.key, apiserver.crt/.key; the server's names are
// localhost, kubernetes, kubernetes.default(.svc), 127.0.0.1). A CONNECT proxy in the test shows
// what went through a proxy.
import { chmod, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ClusterClient } from '../../src/cluster/client.js';
import { loadKubeConfig } from '../../src/cluster/kubeconfig.js';
import { isUserError } from '../../src/util/user-error.js';
import { adminClient, freshNamespace, kubeconfigPath } from '../helpers/cluster.js';

type Fields = Record<string, unknown>;
interface Who {
  username: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

const EXEC_V1 = 'client.authentication.k8s.io/v1';
const EXEC_V1BETA1 = 'client.authentication.k8s.io/v1beta1';

describe('kubeconfig authentication forms', () => {
  let admin: ClusterClient;
  let ns: string;
  let sa: string;
  let token: string;
  let pki: string;
  let server: string;
  let port: string;
  let caData: string;
  let admin64: { cert: string; key: string };
  let proxy: { url: string; saw: string[]; close: () => Promise<void> };

  beforeAll(async () => {
    admin = await adminClient();
    ns = await freshNamespace(admin, 'kcauth');
    await admin.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { body: { metadata: { name: 'ci' } } });
    const tr = await admin.request<{ status: { token: string } }>(
      'POST',
      `/api/v1/namespaces/${ns}/serviceaccounts/ci/token`,
      { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } } },
    );
    token = tr.status.token;
    sa = `system:serviceaccount:${ns}:ci`;
    pki = dirname(kubeconfigPath());
    const doc = parse(await readFile(kubeconfigPath(), 'utf8')) as {
      clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
    };
    server = doc.clusters[0]!.cluster.server;
    port = new URL(server).port;
    caData = doc.clusters[0]!.cluster['certificate-authority-data'];
    admin64 = {
      cert: (await readFile(join(pki, 'admin.crt'))).toString('base64'),
      key: (await readFile(join(pki, 'admin.key'))).toString('base64'),
    };
    proxy = await connectProxy(port);
  });
  afterAll(async () => {
    admin.close();
    await proxy.close();
  });

  /** A kubeconfig in a new directory (files written next to it), context ctx → cluster k, user u. */
  async function kubeconfig(cluster: Fields, user: Fields, files: Record<string, string | Buffer> = {}) {
    const dir = await mkdtemp(join(tmpdir(), 'kr-kcauth-'));
    for (const [name, content] of Object.entries(files)) {
      await writeFile(join(dir, name), content);
      if (name.endsWith('.sh')) await chmod(join(dir, name), 0o755);
    }
    const path = join(dir, 'config');
    await writeFile(
      path,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        'current-context': 'ctx',
        clusters: [{ name: 'k', cluster: { server, ...cluster } }],
        contexts: [{ name: 'ctx', context: { cluster: 'k', user: 'u' } }],
        users: [{ name: 'u', user }],
      }),
    );
    return { dir, path };
  }

  /** Who the API server says the kubeconfig is (a SelfSubjectReview), through loadKubeConfig and ClusterClient. */
  async function whoami(path: string, env: NodeJS.ProcessEnv = {}): Promise<Who> {
    const kc = await loadKubeConfig({ kind: 'path', path }, undefined, { env, execTimeoutMs: 20_000 });
    const client = new ClusterClient(kc, { timeouts: { connectMs: 5_000, requestMs: 8_000 } });
    try {
      const review = await client.request<{ status: { userInfo: Who } }>(
        'POST',
        '/apis/authentication.k8s.io/v1/selfsubjectreviews',
        { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } },
      );
      return review.status.userInfo;
    } finally {
      client.close();
    }
  }

  const CA = () => ({ 'certificate-authority-data': caData });
  const ADMIN = () => ({ 'client-certificate-data': admin64.cert, 'client-key-data': admin64.key });

  // [form, cluster, user, files next to the kubeconfig, who the server says it is]
  const works: [
    string,
    () => Fields,
    () => Fields,
    () => Record<string, string | Buffer> | Promise<Record<string, string | Buffer>>,
    () => string,
  ][] = [
    ['token', CA, () => ({ token }), () => ({}), () => sa],
    // Today's bug: client-node knows only token-file, so this user was system:anonymous.
    [
      'tokenFile, relative to the kubeconfig',
      CA,
      () => ({ tokenFile: 'sa-token' }),
      () => ({ 'sa-token': `${token}\n` }),
      () => sa,
    ],
    [
      "token-file (client-node's spelling)",
      CA,
      () => ({ 'token-file': 'sa-token' }),
      () => ({ 'sa-token': token }),
      () => sa,
    ],
    [
      'tokenFile wins over a stale token',
      CA,
      () => ({ tokenFile: 'sa-token', token: 'stale-token-0123456789' }),
      () => ({ 'sa-token': token }),
      () => sa,
    ],
    ['client certificate and key data', CA, ADMIN, () => ({}), () => 'admin'],
    [
      'client-certificate, client-key and certificate-authority files, relative',
      () => ({ 'certificate-authority': 'ca.crt' }),
      () => ({ 'client-certificate': 'admin.crt', 'client-key': 'keys/../admin.key' }),
      async () => ({
        'ca.crt': await readFile(join(pki, 'ca.crt')),
        'admin.crt': await readFile(join(pki, 'admin.crt')),
        'admin.key': await readFile(join(pki, 'admin.key')),
      }),
      () => 'admin',
    ],
    [
      'insecure-skip-tls-verify without a CA',
      () => ({ 'insecure-skip-tls-verify': true }),
      ADMIN,
      () => ({}),
      () => 'admin',
    ],
    [
      'tls-server-name, a name of the certificate',
      () => ({ ...CA(), 'tls-server-name': 'kubernetes.default.svc' }),
      ADMIN,
      () => ({}),
      () => 'admin',
    ],
    [
      'an oidc auth-provider with a valid id-token (sent as the bearer token)',
      CA,
      () => ({ 'auth-provider': { name: 'oidc', config: { 'id-token': token, 'client-id': 'kubectl' } } }),
      () => ({}),
      () => sa,
    ],
    [
      'an exec plugin, v1beta1, with args, env and provideClusterInfo',
      CA,
      () => ({
        exec: {
          apiVersion: EXEC_V1BETA1,
          command: './plugin.sh',
          args: ['--token-from', 'KR_T'],
          env: [{ name: 'KR_T', value: token }],
          provideClusterInfo: true,
        },
      }),
      () => ({
        // Prints the token only when told the cluster's server and asked for v1beta1 without a terminal.
        'plugin.sh': [
          '#!/bin/sh',
          '[ "$1" = --token-from ] || exit 3',
          `case "$KUBERNETES_EXEC_INFO" in *'"apiVersion":"${EXEC_V1BETA1}"'*'"interactive":false'*'"server":"${server}"'*) ;; *) echo "bad exec info: $KUBERNETES_EXEC_INFO" >&2; exit 4;; esac`,
          `printf '{"apiVersion":"${EXEC_V1BETA1}","kind":"ExecCredential","status":{"token":"%s"}}' "$KR_T"`,
        ].join('\n'),
      }),
      () => sa,
    ],
    [
      'impersonation: as, as-groups, as-user-extra',
      CA,
      () => ({
        ...ADMIN(),
        as: 'jane',
        'as-groups': ['team-a', 'team-b'],
        'as-user-extra': { 'acme.io/reason': ['ci'] },
      }),
      () => ({}),
      () => 'jane',
    ],
  ];

  it.each(works)('%s', async (_, cluster, user, files, who) => {
    const { path } = await kubeconfig(cluster(), user(), await files());
    const me = await whoami(path);
    expect(me.username).toBe(who());
    if (me.username === 'jane') {
      expect(me.groups).toEqual(expect.arrayContaining(['team-a', 'team-b']));
      expect(me.extra).toEqual({ 'acme.io/reason': ['ci'] });
    }
  });

  // [form, cluster, user, files, the error]
  const refused: [string, () => Fields, () => Fields, Record<string, string>, RegExp][] = [
    [
      'insecure-skip-tls-verify with a CA',
      () => ({ ...CA(), 'insecure-skip-tls-verify': true }),
      ADMIN,
      {},
      /cluster "k" \(of context "ctx"\): clusters\[\]\.cluster\.insecure-skip-tls-verify is true and certificate-authority-data is set too, which client-go refuses/,
    ],
    [
      'a proxy-url that is not a URL',
      () => ({ ...CA(), 'proxy-url': 'proxy with pw-s3cret' }),
      ADMIN,
      {},
      /cluster "k" \(of context "ctx"\): clusters\[\]\.cluster\.proxy-url is not a URL/,
    ],
    [
      'a tokenFile that is not there',
      CA,
      () => ({ tokenFile: 'missing-token' }),
      {},
      /user "u" \(of context "ctx"\): users\[\]\.user\.tokenFile missing-token cannot be read \(ENOENT\)/,
    ],
    [
      'the gcp auth-provider',
      CA,
      () => ({ 'auth-provider': { name: 'gcp', config: { 'cmd-path': '/bin/false' } } }),
      {},
      /users\[\]\.user\.auth-provider "gcp" was removed from client-go and kubectl \(Kubernetes 1\.26\): use the exec plugin gke-gcloud-auth-plugin/,
    ],
    [
      'the azure auth-provider',
      CA,
      () => ({ 'auth-provider': { name: 'azure', config: {} } }),
      {},
      /users\[\]\.user\.auth-provider "azure" was removed .*: use the exec plugin kubelogin/,
    ],
    [
      'basic auth together with a token',
      CA,
      () => ({ username: 'u', password: 'pw-s3cret', token: 'tok-0123456789abcdef' }),
      {},
      /users\[\]\.user\.username\/password and token are both set/,
    ],
  ];

  it.each(refused)('refuses %s, naming the field', async (_, cluster, user, files, error) => {
    const { path } = await kubeconfig(cluster(), user(), files);
    const err = await loadKubeConfig({ kind: 'path', path }).catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    expect(isUserError(err)).toBe(true);
    expect((err as Error).message).toMatch(error);
    expect((err as Error).message).not.toMatch(/pw-s3cret|tok-0123/);
  });

  it('tls-server-name: the TLS name, for SNI and verification; a name not on the certificate fails', async () => {
    const { path } = await kubeconfig({ ...CA(), 'tls-server-name': 'wrong.example' }, ADMIN());
    await expect(whoami(path)).rejects.toThrow(/wrong\.example|altname|Hostname\/IP does not match/i);
  });

  it('proxy-url: goes through the proxy (CONNECT), the TLS inside it verified as without', async () => {
    const before = proxy.saw.length;
    const { path } = await kubeconfig({ ...CA(), 'proxy-url': proxy.url }, ADMIN());
    expect((await whoami(path)).username).toBe('admin');
    expect(proxy.saw.slice(before)).toContain(`127.0.0.1:${port}`);
  });

  it('HTTPS_PROXY from the environment when there is no proxy-url; NO_PROXY honoured; proxy-url wins', async () => {
    // "kubernetes" is a name of the server's certificate that only the proxy resolves (to 127.0.0.1).
    const byName = server.replace('127.0.0.1', 'kubernetes');
    const { path } = await kubeconfig({ ...CA(), server: byName }, ADMIN());
    const before = proxy.saw.length;
    expect((await whoami(path, { HTTPS_PROXY: proxy.url })).username).toBe('admin');
    expect(proxy.saw.slice(before)).toEqual([`kubernetes:${port}`]);

    // NO_PROXY names the host: straight to "kubernetes", which this machine cannot resolve.
    const skipped = proxy.saw.length;
    await expect(
      whoami(path, { HTTPS_PROXY: proxy.url, NO_PROXY: '127.0.0.0/8,.cluster.local,kubernetes' }),
    ).rejects.toThrow(/ENOTFOUND|EAI_AGAIN|getaddrinfo/);
    expect(proxy.saw.length).toBe(skipped);

    // A proxy-url in the kubeconfig wins over the environment's (here a proxy that does not exist).
    const own = await kubeconfig({ ...CA(), server: byName, 'proxy-url': proxy.url }, ADMIN());
    const n = proxy.saw.length;
    expect((await whoami(own.path, { HTTPS_PROXY: 'http://127.0.0.1:9' })).username).toBe('admin');
    expect(proxy.saw.length).toBe(n + 1);
  });

  it('an exec credential is cached until its expirationTimestamp; an expired one is fetched again', async () => {
    const plugin = (expiry: string) =>
      [
        '#!/bin/sh',
        'echo run >> "$(dirname "$0")/runs"',
        `printf '{"apiVersion":"${EXEC_V1}","kind":"ExecCredential","status":{"token":"%s","expirationTimestamp":"${expiry}"}}' "$KR_T"`,
      ].join('\n');
    for (const [expiry, runs] of [
      ['2999-01-01T00:00:00Z', 1],
      ['2000-01-01T00:00:00Z', 3],
    ] as const) {
      const { dir, path } = await kubeconfig(
        CA(),
        {
          exec: {
            apiVersion: EXEC_V1,
            command: './plugin.sh',
            env: [{ name: 'KR_T', value: token }],
            interactiveMode: 'Never',
          },
        },
        { 'plugin.sh': plugin(expiry) },
      );
      const kc = await loadKubeConfig({ kind: 'path', path });
      const client = new ClusterClient(kc);
      try {
        for (let i = 0; i < 3; i++)
          await client.request('GET', `/api/v1/namespaces/${ns}/serviceaccounts/ci`).catch(() => undefined);
      } finally {
        client.close();
      }
      expect((await readFile(join(dir, 'runs'), 'utf8')).trim().split('\n')).toHaveLength(runs);
    }
  });

  it('an exec plugin that is not installed: its installHint; one that answers another apiVersion: named', async () => {
    const missing = await kubeconfig(CA(), {
      exec: {
        apiVersion: EXEC_V1,
        command: 'kr-no-such-plugin',
        installHint: 'brew install kr-plugin',
        interactiveMode: 'Never',
      },
    });
    await expect(whoami(missing.path)).rejects.toThrow(
      /kubeconfig user "u": the exec credential plugin "kr-no-such-plugin" could not be started \(ENOENT\): brew install kr-plugin \(the kubeconfig's exec.installHint\)/,
    );
    const other = await kubeconfig(
      CA(),
      { exec: { apiVersion: EXEC_V1, command: './plugin.sh', interactiveMode: 'IfAvailable' } },
      {
        'plugin.sh': `#!/bin/sh\necho '{"apiVersion":"${EXEC_V1BETA1}","kind":"ExecCredential","status":{"token":"x"}}'\n`,
      },
    );
    await expect(whoami(other.path)).rejects.toThrow(
      `printed an ExecCredential of "${EXEC_V1BETA1}", but the kubeconfig's exec.apiVersion is "${EXEC_V1}": make them the same`,
    );
  });

  it('basic auth (username/password) is sent as client-go sends it', async () => {
    // The API server has no basic auth; a server with its certificate stands in and shows what it got.
    const got: (string | undefined)[] = [];
    const stand = https.createServer(
      { cert: await readFile(join(pki, 'apiserver.crt')), key: await readFile(join(pki, 'apiserver.key')) },
      (req, res) => {
        got.push(req.headers.authorization);
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ status: { userInfo: { username: 'basic-user' } } }));
      },
    );
    await new Promise<void>((r) => stand.listen(0, '127.0.0.1', r));
    try {
      const { path } = await kubeconfig(
        { ...CA(), server: `https://127.0.0.1:${(stand.address() as net.AddressInfo).port}` },
        { username: 'ci', password: 'pw-s3cret' },
      );
      expect((await whoami(path)).username).toBe('basic-user');
      expect(got).toEqual([`Basic ${Buffer.from('ci:pw-s3cret').toString('base64')}`]);
    } finally {
      stand.close();
    }
  });

  it('tokenFile is read again after client-go’s minute, not before (a rotated token)', async () => {
    // The file's first token works; the kubeconfig is loaded once: a broken token written to the file
    // right after is not read yet (the minute has not passed).
    const { dir, path } = await kubeconfig(CA(), { tokenFile: 'sa-token' }, { 'sa-token': token });
    const kc = await loadKubeConfig({ kind: 'path', path });
    const client = new ClusterClient(kc);
    try {
      const get = () => client.request('GET', `/api/v1/namespaces/${ns}/serviceaccounts/ci`).then(() => 'ok');
      await expect(get()).rejects.toThrow(/forbidden/);
      await writeFile(join(dir, 'sa-token'), 'not-a-token-0123456789');
      await expect(get()).rejects.toThrow(/forbidden/);
    } finally {
      client.close();
    }
  });
});

/** An HTTP CONNECT proxy on 127.0.0.1 that records each CONNECT target and connects every host to 127.0.0.1. */
async function connectProxy(_port: string): Promise<{ url: string; saw: string[]; close: () => Promise<void> }> {
  const saw: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = http.createServer((_req, res) => {
    res.statusCode = 405;
    res.end();
  });
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    saw.push(req.url ?? '');
    const target = new URL(`http://${req.url}`);
    const upstream = net.connect(Number(target.port), '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {
        s.destroy();
      });
      s.on('close', () => sockets.delete(s));
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    saw,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) =>
        server.close(() => {
          r();
        }),
      );
    },
  };
}
