// SOPS files encrypted with encrypted_comment_regex / unencrypted_comment_regex (issue 51, Flux
// kustomize-controller v1.10): the build drops the comments that decided what sops encrypted, and the
// objects still reach the cluster decrypted, with the MAC checked on the source files. Fixtures are
// encrypted at test time by the real sops; a kustomize overlay over a base, and a plain directory.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { isNotFound } from '../../src/cluster/errors.js';
import { runAction } from '../helpers/action.js';
import { adminClient, freshNamespace, kubeconfigPath, writeTree } from '../helpers/cluster.js';
import { createSopsToolkit, type AgeKey, type SopsToolkit } from '../helpers/sops-fixtures.js';

/** Only the values under `# sops:enc` are encrypted. */
const secretPlain = (ns: string) => `apiVersion: v1
kind: Secret
metadata:
    name: db
    namespace: ${ns}
stringData:
    user: app
    # sops:enc
    password: pa55-c0mment-ZQX
    # sops:enc
    token: tok-c0mment-918
`;

/** Everything is encrypted but what follows `# sops:plain`; a ConfigMap, not a Secret. */
const configMapPlain = (ns: string) => `# sops:plain
apiVersion: v1
# sops:plain
kind: ConfigMap
# sops:plain
metadata:
    name: settings
    namespace: ${ns}
data:
    # sops:plain
    mode: fast
    endpoint: https://c0mment.example.invalid/api
`;

const SECRETS = ['pa55-c0mment-ZQX', 'tok-c0mment-918', 'https://c0mment.example.invalid/api'];

describe('SOPS comment rules on the cluster', () => {
  let client: ClusterClient;
  let tk: SopsToolkit;
  let age: AgeKey;
  beforeAll(async () => {
    client = await adminClient();
    tk = createSopsToolkit();
    age = tk.ageKey();
  });
  afterAll(() => {
    client.close();
    tk.cleanup();
  });

  const encrypt = (plain: string, rule: string) =>
    tk.encrypt(plain, 'yaml', { config: `creation_rules:\n  - age: ${age.recipient}\n    ${rule}\n` });
  const files = (dir: string, ns: string): Record<string, string> => ({
    [`${dir}/secret.enc.yaml`]: encrypt(secretPlain(ns), 'encrypted_comment_regex: sops:enc'),
    [`${dir}/settings.enc.yaml`]: encrypt(configMapPlain(ns), 'unencrypted_comment_regex: sops:plain'),
  });
  const overlay = (ns: string): Record<string, string> => ({
    ...files('base', 'elsewhere'),
    'base/kustomization.yaml': 'resources: [secret.enc.yaml, settings.enc.yaml]\n',
    // a secretGenerator env file: decrypted before the build, where its comments are still there
    'overlay/api.enc.env': tk.encrypt('MODE=fast\n# sops:enc\nAPI_TOKEN=api-c0mment-377\n', 'dotenv', {
      config: `creation_rules:\n  - age: ${age.recipient}\n    encrypted_comment_regex: sops:enc\n`,
    }),
    'overlay/kustomization.yaml': `namespace: ${ns}\nnamePrefix: prod-\nlabels:\n  - pairs: {team: payments}\nresources: [../base]\nsecretGenerator:\n  - name: api\n    envs: [api.enc.env]\ngeneratorOptions:\n  disableNameSuffixHash: true\n`,
  });

  async function applied(ns: string, prefix: string) {
    const secret = await client.request<{ data: Record<string, string>; metadata: { labels?: object } }>(
      'GET',
      `/api/v1/namespaces/${ns}/secrets/${prefix}db`,
    );
    const cm = await client.request<{ data: Record<string, string> }>(
      'GET',
      `/api/v1/namespaces/${ns}/configmaps/${prefix}settings`,
    );
    const decoded = Object.fromEntries(
      Object.entries(secret.data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]),
    );
    return { secret: decoded, labels: secret.metadata.labels, configMap: cm.data };
  }

  function expectMasked(stdout: string) {
    const shown = stdout
      .split('\n')
      .filter((l) => !l.startsWith('::add-mask::'))
      .join('\n');
    for (const v of SECRETS) {
      expect(stdout).toContain(`::add-mask::${v}`);
      expect(shown).not.toContain(v);
    }
  }

  it.each([
    { layout: 'a kustomize overlay (namespace, namePrefix, labels) over a base', path: 'overlay', prefix: 'prod-' },
    { layout: 'a plain directory', path: 'plain', prefix: '' },
  ])('$layout: a Secret and a ConfigMap applied decrypted, MAC checked', async ({ path, prefix }) => {
    const ns = await freshNamespace(client);
    const tree = path === 'overlay' ? overlay(ns) : files('plain', ns);
    const workspace = await writeTree(tree);
    const res = await runAction(workspace, { kubeconfig: kubeconfigPath(), path, 'sops-age-key': age.identity });
    expect(res.code, res.stdout).toBe(0);
    expect(res.stdout).toContain(`Secret/${ns}/${prefix}db created`);
    expect(res.stdout).toContain(`ConfigMap/${ns}/${prefix}settings created`);
    expect(res.stdout).not.toContain('MAC not verified');
    expectMasked(res.stdout);
    const got = await applied(ns, prefix);
    expect(got.secret).toEqual({ user: 'app', password: 'pa55-c0mment-ZQX', token: 'tok-c0mment-918' });
    expect(got.configMap).toEqual({ mode: 'fast', endpoint: 'https://c0mment.example.invalid/api' });
    if (path === 'overlay') {
      expect(got.labels).toMatchObject({ team: 'payments' });
      expect(res.stdout).toContain('Decrypted 1 SOPS file(s) before the build: overlay/api.enc.env');
      const api = await client.request<{ data: Record<string, string> }>(
        'GET',
        `/api/v1/namespaces/${ns}/secrets/prod-api`,
      );
      expect(Buffer.from(api.data['API_TOKEN']!, 'base64').toString()).toBe('api-c0mment-377');
      expect(Buffer.from(api.data['MODE']!, 'base64').toString()).toBe('fast');
    }
  });

  it('a value sops signed in clear, changed in the base: MAC mismatch, nothing applied; applied with sops-verify-mac false', async () => {
    const ns = await freshNamespace(client);
    const tree = overlay(ns);
    const tampered = tree['base/secret.enc.yaml']!.replace('user: app', 'user: root');
    expect(tampered).not.toBe(tree['base/secret.enc.yaml']);
    const workspace = await writeTree({ ...tree, 'base/secret.enc.yaml': tampered });
    const inputs = { kubeconfig: kubeconfigPath(), path: 'overlay', 'sops-age-key': age.identity };
    const strict = await runAction(workspace, inputs);
    expect(strict.code).toBe(2);
    expect(strict.stdout).toMatch(
      new RegExp(
        `::error::Secret/${ns}/prod-db \\(base/secret\\.enc\\.yaml\\): SOPS decryption failed: .*MAC mismatch`,
      ),
    );
    await expect(client.request('GET', `/api/v1/namespaces/${ns}/secrets/prod-db`)).rejects.toSatisfy(isNotFound);

    const lenient = await runAction(workspace, { ...inputs, 'sops-verify-mac': 'false' });
    expect(lenient.code, lenient.stdout).toBe(0);
    expect((await applied(ns, 'prod-')).secret).toEqual({
      user: 'root',
      password: 'pa55-c0mment-ZQX',
      token: 'tok-c0mment-918',
    });
  });
});
