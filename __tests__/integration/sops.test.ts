// SOPS decryption in the pipeline against the real cluster, with fixtures encrypted at test time
// by the real sops and age-keygen that the setup builds.
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { isNotFound } from '../../src/cluster/errors.js';
import { runAction } from '../helpers/action.js';
import { adminClient, freshNamespace, kubeconfigPath, writeTree } from '../helpers/cluster.js';
import { kustomizationYaml } from '../helpers/manifests.js';
import { TOOLS } from '../helpers/paths.js';

const run = promisify(execFile);

async function ageKey(): Promise<{ identity: string; recipient: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'kr-age-'));
  await run(join(TOOLS, 'age-keygen'), ['-o', join(dir, 'key.txt')]);
  const identity = await readFile(join(dir, 'key.txt'), 'utf8');
  const recipient = /# public key: (age1\S+)/.exec(identity)![1]!;
  return { identity, recipient };
}

/** Encrypts `text` with the real sops for `recipient`, from a directory without any .sops.yaml. */
async function sopsEncrypt(
  text: string,
  recipient: string,
  type: 'yaml' | 'dotenv',
  extra: string[] = [],
): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kr-sops-'));
  const file = join(dir, `plain.${type === 'yaml' ? 'yaml' : 'env'}`);
  await writeFile(file, text);
  const { stdout } = await run(
    join(TOOLS, 'sops'),
    ['--encrypt', '--age', recipient, '--input-type', type, '--output-type', type, ...extra, file],
    { cwd: dir },
  );
  return stdout;
}

describe('SOPS decryption on the cluster', () => {
  let client: ClusterClient;
  let key: { identity: string; recipient: string };
  let other: { identity: string; recipient: string };
  beforeAll(async () => {
    client = await adminClient();
    [key, other] = await Promise.all([ageKey(), ageKey()]);
  });
  afterAll(() => {
    client.close();
  });

  async function tree(ns: string) {
    const secret = await sopsEncrypt(
      `apiVersion: v1\nkind: Secret\nmetadata:\n  name: db-credentials\n  namespace: ${ns}\nstringData:\n  username: app\n  password: pa55-w0rd-ZQX\n`,
      key.recipient,
      'yaml',
      ['--encrypted-regex', '^(data|stringData)$'],
    );
    const env = await sopsEncrypt('API_TOKEN=tok-9f8e7d-secret\nMODE=fast\n', key.recipient, 'dotenv');
    return {
      'deploy/kustomization.yaml': `namespace: ${ns}\nresources: [secret.enc.yaml]\nsecretGenerator:\n  - name: api\n    envs: [api.enc.env]\ngeneratorOptions:\n  disableNameSuffixHash: true\n`,
      'deploy/secret.enc.yaml': secret,
      'deploy/api.enc.env': env,
    };
  }

  function action(workspace: string, inputs: Record<string, string>) {
    return runAction(workspace, { kubeconfig: kubeconfigPath(), path: 'deploy', ...inputs });
  }

  it('with build-cache, a build that decrypted files keeps nothing: no decrypted value reaches the disk', async () => {
    const ns = await freshNamespace(client);
    const workspace = await writeTree(await tree(ns));
    const cache = await mkdtemp(join(tmpdir(), 'kr-sops-cache-'));
    for (let i = 0; i < 2; i++) {
      const res = await action(workspace, { 'sops-age-key': key.identity, 'build-cache': cache });
      expect(res.code, res.stdout).toBe(0);
      expect(res.stdout).toContain('Decrypted 1 SOPS file(s) before the build: deploy/api.enc.env');
      expect(res.stdout).not.toContain('kustomize did not run');
    }
    expect(await readdir(cache, { recursive: true })).toEqual([]);
  });

  it('applies an encrypted Secret and an encrypted secretGenerator env file decrypted, masking every value', async () => {
    const ns = await freshNamespace(client);
    const workspace = await writeTree(await tree(ns));
    const res = await action(workspace, { 'sops-age-key': key.identity });
    expect(res.code, res.stdout).toBe(0);
    expect(res.stdout).toContain(`Secret/${ns}/db-credentials created`);
    expect(res.stdout).toContain('Decrypted 1 SOPS file(s) before the build: deploy/api.enc.env');
    for (const v of ['pa55-w0rd-ZQX', 'tok-9f8e7d-secret']) {
      expect(res.stdout).toContain(`::add-mask::${v}`);
      expect(
        res.stdout
          .split('\n')
          .filter((l) => !l.startsWith('::add-mask::'))
          .join('\n'),
      ).not.toContain(v);
    }
    const secret = await client.request<{ data: Record<string, string> }>(
      'GET',
      `/api/v1/namespaces/${ns}/secrets/db-credentials`,
    );
    expect(Buffer.from(secret.data['password']!, 'base64').toString()).toBe('pa55-w0rd-ZQX');
    expect(Object.keys(secret.data).sort()).toEqual(['password', 'username']);
    const api = await client.request<{ data: Record<string, string> }>('GET', `/api/v1/namespaces/${ns}/secrets/api`);
    expect(Buffer.from(api.data['API_TOKEN']!, 'base64').toString()).toBe('tok-9f8e7d-secret');
    // The user's files are untouched: still encrypted on disk.
    expect(await readFile(join(workspace, 'deploy/api.enc.env'), 'utf8')).toContain('sops_mac=ENC[');
  });

  it('fails with a wrong key, naming the file and the key type, and applies nothing', async () => {
    const ns = await freshNamespace(client);
    const workspace = await writeTree(await tree(ns));
    const res = await action(workspace, { 'sops-age-key': other.identity });
    expect(res.code).toBe(2);
    expect(res.stdout).toMatch(/::error::deploy\/api\.enc\.env: SOPS decryption failed: .*age/);
    expect(res.stdout).toContain(key.recipient);
    await expect(client.request('GET', `/api/v1/namespaces/${ns}/secrets/db-credentials`)).rejects.toSatisfy(
      isNotFound,
    );
  });

  it('refuses to apply a still-encrypted Secret when decryption is not configured (Flux’s hint)', async () => {
    const ns = await freshNamespace(client);
    const files = await tree(ns);
    const workspace = await writeTree({
      'deploy/kustomization.yaml': `resources: [secret.enc.yaml]\n`,
      'deploy/secret.enc.yaml': files['deploy/secret.enc.yaml'],
    });
    const res = await action(workspace, {});
    expect(res.code).toBe(2);
    expect(res.stdout).toContain(
      `::error::Secret/${ns}/db-credentials is SOPS encrypted, configuring decryption is required for this secret to be reconciled`,
    );
    await expect(client.request('GET', `/api/v1/namespaces/${ns}/secrets/db-credentials`)).rejects.toSatisfy(
      isNotFound,
    );
  });

  it('fails on a tampered file (MAC mismatch) unless sops-verify-mac is false, as in Flux', async () => {
    const ns = await freshNamespace(client);
    const files = await tree(ns);
    // metadata is not encrypted (encrypted-regex) but the MAC covers it; kustomize's namespace
    // transformer would hide the change in the built object, so the MAC is checked on the file.
    const tampered = files['deploy/secret.enc.yaml'].replace(`namespace: ${ns}`, 'namespace: elsewhere');
    expect(tampered).not.toBe(files['deploy/secret.enc.yaml']);
    const workspace = await writeTree({ ...files, 'deploy/secret.enc.yaml': tampered });
    const strict = await action(workspace, { 'sops-age-key': key.identity });
    expect(strict.code).toBe(2);
    expect(strict.stdout).toMatch(
      new RegExp(
        `::error::Secret/${ns}/db-credentials \\(deploy/secret\\.enc\\.yaml\\): SOPS decryption failed: .*MAC mismatch`,
      ),
    );
    await expect(client.request('GET', `/api/v1/namespaces/${ns}/secrets/db-credentials`)).rejects.toSatisfy(
      isNotFound,
    );

    const lenient = await action(workspace, { 'sops-age-key': key.identity, 'sops-verify-mac': 'false' });
    expect(lenient.code, lenient.stdout).toBe(0);
    const secret = await client.request<{ data: Record<string, string> }>(
      'GET',
      `/api/v1/namespaces/${ns}/secrets/db-credentials`,
    );
    expect(Buffer.from(secret.data['username']!, 'base64').toString()).toBe('app');
  });

  it('reads keys from spec.decryption.secretRef in the cluster, as Flux does', async () => {
    const ns = await freshNamespace(client);
    const files = await tree(ns);
    await client.request('POST', `/api/v1/namespaces/${ns}/secrets`, {
      body: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'sops-age' },
        stringData: { 'identity.agekey': key.identity },
      },
    });
    const workspace = await writeTree({
      ...files,
      'clusters/app.yaml': kustomizationYaml({
        namespace: ns,
        path: './deploy',
        spec: 'decryption:\n  provider: sops\n  secretRef: {name: sops-age}',
      }),
    });
    const res = await runAction(workspace, { kubeconfig: kubeconfigPath(), kustomizations: 'clusters/app.yaml' });
    expect(res.code, res.stdout).toBe(0);
    expect(res.stdout).toContain('::add-mask::AGE-SECRET-KEY-1');
    const secret = await client.request<{ data: Record<string, string> }>(
      'GET',
      `/api/v1/namespaces/${ns}/secrets/db-credentials`,
    );
    expect(Buffer.from(secret.data['password']!, 'base64').toString()).toBe('pa55-w0rd-ZQX');
  });
});
