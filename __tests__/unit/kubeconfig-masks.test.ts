// What the action registers with the runner (`setSecret`, i.e. `::add-mask::`) for its credential
// inputs, and what the scrubber then adds (issue 33, item 8): a kubeconfig by its credentials and
// whole, never by its structural lines, which the runner would hide in every later step of the job
// (`kind: ConfigMap` shown as `***Map`); no mask shorter than 4 characters.
import { describe, expect, it } from 'vitest';
import { kubeconfigMasks } from '../../src/cluster/kubeconfig-secrets.js';
import { readSettings } from '../../src/options/read.js';
import type { Report } from '../../src/report/model.js';
import { Scrubber, scrubReport, scrubText } from '../../src/report/scrub.js';
import { knownSecrets } from '../../src/options/settings.js';

const KEY = 'LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0tCk1IY0NBUUVFSUlrZXktc2VjcmV0LWtleQ==';
const CERT = 'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJrekNDQVRpZ0F3SUJBZ0lJY2VydA==';
const CA = 'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJrekNDQVRpZ0F3SUJBZ0lJY2FjYQ==';
const SECRETS = {
  token: 'kr-kube-token-0123456789',
  password: 'kr-kube-password-42',
  access: 'kr-oidc-access-token-1',
  refresh: 'kr-oidc-refresh-token-2',
  idToken: 'kr-oidc-id-token-3',
  clientSecret: 'kr-oidc-client-secret-4',
  envValue: 'kr-exec-env-secret-5',
  proxyPassword: 'kr-proxy-pass-6',
};

const YAML = `apiVersion: v1
kind: Config
current-context: admin
preferences: {}
clusters:
- name: prod
  cluster:
    server: https://k8s.example.com:6443
    certificate-authority-data: ${CA}
    proxy-url: http://proxy-user:${SECRETS.proxyPassword}@proxy.example.com:3128
contexts:
- name: admin
  context:
    cluster: prod
    user: admin
    namespace: default
users:
- name: admin
  user:
    client-certificate-data: ${CERT}
    client-key-data: ${KEY}
- name: bot
  user:
    token: ${SECRETS.token}
- name: basic
  user:
    username: admin
    password: "${SECRETS.password}"
- name: oidc
  user:
    auth-provider:
      name: oidc
      config:
        client-id: kubernetes
        client-secret: ${SECRETS.clientSecret}
        id-token: ${SECRETS.idToken}
        access-token: ${SECRETS.access}
        refresh-token: ${SECRETS.refresh}
- name: exec
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: aws
      args: [eks, get-token, --cluster-name, prod]
      env:
      - name: AWS_SECRET_ACCESS_KEY
        value: ${SECRETS.envValue}
      interactiveMode: Never
`;

const ALL = [...Object.values(SECRETS), KEY, CERT];

/** Every line of the kubeconfig that holds no credential, trimmed, with and without its `- `. */
function structuralLines(text: string): Set<string> {
  const out = new Set<string>();
  for (const l of text.split('\n').map((x) => x.trim())) {
    if (l === '' || ALL.some((v) => l.includes(v))) continue;
    out.add(l);
    if (l.startsWith('- ')) out.add(l.slice(2));
  }
  return out;
}

/** readSettings with a fake setSecret: what the runner would be told, in order. */
function read(inputs: Record<string, string>): { setSecret: string[]; settings: ReturnType<typeof readSettings> } {
  const setSecret: string[] = [];
  const settings = readSettings(
    (n) => inputs[n] ?? '',
    { GITHUB_WORKSPACE: '/ws' },
    (v) => setSecret.push(v),
  );
  return { setSecret, settings };
}

/** What main.ts then registers: each known secret in every form the scrubber adds. */
function scrubberMasks(settings: ReturnType<typeof readSettings>): string[] {
  const s = new Scrubber();
  return knownSecrets(settings).flatMap((v) => s.add(v));
}

const base64 = (t: string) => Buffer.from(t).toString('base64');
const JSON_KUBECONFIG = JSON.stringify(
  {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'prod', cluster: { server: 'https://k8s.example.com' } }],
    users: [{ name: 'bot', user: { token: SECRETS.token, 'client-key-data': KEY } }],
  },
  null,
  2,
);

describe('kubeconfig input masks', () => {
  it.each([
    { why: 'YAML', input: YAML, doc: YAML, secrets: ALL, whole: [YAML.trim()] },
    { why: 'base64-encoded YAML', input: base64(YAML), doc: YAML, secrets: ALL, whole: [YAML.trim(), base64(YAML)] },
    {
      why: 'base64 wrapped at 76 columns',
      input: base64(YAML).replace(/(.{76})/g, '$1\n'),
      doc: YAML,
      secrets: ALL,
      whole: [YAML.trim(), base64(YAML)],
    },
    {
      why: 'JSON',
      input: JSON_KUBECONFIG,
      doc: JSON_KUBECONFIG,
      secrets: [SECRETS.token, KEY],
      whole: [JSON_KUBECONFIG],
    },
  ])('$why: each credential and the document whole, no structural line', ({ input, doc, secrets, whole }) => {
    const { setSecret, settings } = read({ kubeconfig: input });
    for (const s of [...secrets, ...whole]) expect(setSecret).toContain(s);
    const structural = structuralLines(doc);
    for (const masks of [setSecret, scrubberMasks(settings)]) {
      expect(masks.filter((m) => structural.has(m.trim()))).toEqual([]);
      expect(masks.filter((m) => m.length < 4)).toEqual([]);
      // Not secret: the CA's certificate, the user name, the server.
      expect(masks).not.toContain(CA);
      expect(masks).not.toContain('admin');
      expect(masks).not.toContain('https://k8s.example.com:6443');
    }
  });

  it('a job summary keeps `kind: ConfigMap` and `apiVersion: v1`, and loses the token and the key', () => {
    const { settings } = read({ kubeconfig: YAML });
    const known = knownSecrets(settings);
    const text = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: admin\ndata:\n  t: ${SECRETS.token}\n  k: ${KEY}\n`;
    expect(scrubText(text, known)).toBe(
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: admin\ndata:\n  t: ***\n  k: ***\n',
    );
    const s = new Scrubber();
    known.forEach((v) => s.add(v));
    expect(s.text('kind: ConfigMap apiVersion: v1 current-context: admin')).toBe(
      'kind: ConfigMap apiVersion: v1 current-context: admin',
    );
    const report = { mode: 'preview', error: `kind: ConfigMap token ${SECRETS.token}` } as unknown as Report;
    expect(scrubReport(report, known).error).toBe('kind: ConfigMap token ***');
  });

  it.each([
    {
      why: 'broken YAML: whole, credential values and lines that are not structure',
      input: `apiVersion: v1\nkind: Config\nusers:\n- name: bot\n  user:\n    token: ${SECRETS.token}\n   bad: [indent\n  ${SECRETS.envValue}\n`,
      want: [SECRETS.token, SECRETS.envValue],
      not: ['apiVersion: v1', 'kind: Config', 'Config', 'users:', '- name: bot', 'name: bot', 'bot', 'user:'],
    },
    {
      why: 'broken JSON',
      input: `{\n  "kind": "Config",\n  "users": [{"name": "bot", "user": {"token": "${SECRETS.token}"}}\n`,
      want: [SECRETS.token],
      not: ['"kind": "Config",', 'Config'],
    },
  ])('a kubeconfig that does not parse, $why', ({ input, want, not }) => {
    const masks = kubeconfigMasks(input);
    expect(masks).toContain(input.trim());
    for (const w of want) expect(masks.some((m) => m === w || (m !== input.trim() && m.includes(w)))).toBe(true);
    for (const n of not) expect(masks).not.toContain(n);
  });

  it('a path is not masked; a token given by mistake, refused or taken for a path, is', () => {
    expect(read({ kubeconfig: 'clusters/prod/kubeconfig' }).setSecret).toEqual([]);
    expect(read({ kubeconfig: 'kubeconfig' }).setSecret).toEqual([]);
    const token = 'ghp_0123456789abcdefghijABCDEFGHIJ';
    expect(read({ kubeconfig: token }).setSecret).toEqual([token]);
    const refused = `ghp_${'A'.repeat(1100)}`;
    const seen: string[] = [];
    expect(() =>
      readSettings(
        (n) => (n === 'kubeconfig' ? refused : ''),
        { GITHUB_WORKSPACE: '/ws' },
        (v) => seen.push(v),
      ),
    ).toThrow(/^input kubeconfig is neither/);
    expect(seen).toEqual([refused]);
  });
});

describe('the other credential inputs: per value, no structure, nothing short', () => {
  it.each<{ why: string; inputs: Record<string, string>; want: string[]; not: string[] }>([
    {
      why: 'git-credentials: the token, not the host',
      inputs: { 'git-credentials': 'github.com: ghp_tokentoken\n' },
      want: ['ghp_tokentoken'],
      not: ['github.com: ghp_tokentoken', 'github.com'],
    },
    {
      why: 'registry-credentials: the login and its password, not the host',
      inputs: { 'registry-credentials': 'ghcr.io: "me:regpass123"\n' },
      want: ['me:regpass123', 'regpass123'],
      not: ['ghcr.io', 'me'],
    },
    {
      why: 'an age key file: the key, not its comments',
      inputs: {
        'sops-age-key':
          '# created: 2026-01-01T00:00:00Z\n# public key: age1qqqqqqqq\nAGE-SECRET-KEY-1QQQQQQQQQQQQQQQQQQQQ\n',
      },
      want: ['AGE-SECRET-KEY-1QQQQQQQQQQQQQQQQQQQQ'],
      not: ['# created: 2026-01-01T00:00:00Z', '# public key: age1qqqqqqqq'],
    },
    {
      why: 'an armoured OpenPGP key: its body, not its boundaries',
      inputs: {
        'sops-pgp-key':
          '-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGZ0aXNhc2VjcmV0a2V5Ym9keWxpbmUx\n=abcd\n-----END PGP PRIVATE KEY BLOCK-----\n',
      },
      want: ['lQOYBGZ0aXNhc2VjcmV0a2V5Ym9keWxpbmUx'],
      not: ['-----BEGIN PGP PRIVATE KEY BLOCK-----', '-----END PGP PRIVATE KEY BLOCK-----'],
    },
    {
      why: 'secret-vars: values of 4 characters and more, no base64 of a short one',
      inputs: { 'secret-vars': 'one: "1"\nabc: abc\npin: "1234"\n' },
      want: ['1234'],
      not: ['1', 'abc', 'MQ==', 'YWJj'],
    },
    { why: 'github-token: whole', inputs: { 'github-token': ' ghs_abcdefgh ' }, want: ['ghs_abcdefgh'], not: [] },
  ])('$why', ({ inputs, want, not }) => {
    const { setSecret, settings } = read(inputs);
    const scrubbed = scrubberMasks(settings);
    for (const w of want) {
      expect(setSecret).toContain(w);
      expect(scrubbed).toContain(w);
    }
    for (const masks of [setSecret, scrubbed]) {
      for (const n of not) expect(masks).not.toContain(n);
      expect(masks.filter((m) => m.length < 4)).toEqual([]);
    }
  });
});
