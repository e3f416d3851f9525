// A pull request cannot send the runner's credentials to a host of its choosing through a SOPS
// file's metadata (vault_url, vault_address) or a decryption Secret's GCP credentials (token_url,
// token_uri, credential_source). Files encrypted by the real sops, the real key-service chain of a
// run (keyServices), and loopback listeners that count every TCP connection: a refused endpoint
// gets none, and the error names the file, the key service and the host and says nothing was sent.
import { generateKeyPairSync } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import type { ClusterClient } from '../../src/cluster/client.js';
import { isNotFound } from '../../src/cluster/errors.js';
import { classifySecretKeys, keyServices } from '../../src/sops/keys.js';
import { decryptSources } from '../../src/sops/sources.js';
import { adminClient, freshNamespace } from '../helpers/cluster.js';
import { kustomizationYaml } from '../helpers/manifests.js';
import { reconcileTree } from '../helpers/reconcile.js';
import { createSopsToolkit, type AgeKey, type SopsToolkit } from '../helpers/sops-fixtures.js';

const CANARY = 'canary-pa55-QX81';
const GCP_RESOURCE = 'projects/p/locations/global/keyRings/r/cryptoKeys/k';
/** Any base64 will do: a refused key must fail before anyone looks at it. */
const ENC = Buffer.alloc(64, 7).toString('base64');

interface Listener {
  url: string;
  host: string;
  connections: () => number;
}

const servers: { close: (cb: () => void) => void }[] = [];

/** A loopback TCP listener that counts connections and hangs up at once. */
async function listener(): Promise<Listener> {
  let count = 0;
  const server: Server = createServer((socket) => {
    count++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, host: `127.0.0.1:${port}`, connections: () => count };
}

/** A fake Microsoft Entra token endpoint (the runner's trusted AZURE_AUTHORITY_HOST), counting requests. */
async function entra(): Promise<{ url: string; requests: () => number }> {
  let count = 0;
  const server = http.createServer((req, res) => {
    count++;
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ access_token: 'entra-token-runner', expires_in: 3600 }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => count };
}

async function tree(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'kr-kms-tree-'));
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, rel)), { recursive: true });
    await writeFile(join(root, rel), text);
  }
  return root;
}

let kit: SopsToolkit;
let age: AgeKey;
let scratch: string;

beforeAll(async () => {
  kit = createSopsToolkit();
  age = kit.ageKey();
  scratch = await mkdtemp(join(tmpdir(), 'kr-kms-endpoints-'));
});

afterAll(async () => {
  for (const s of servers) {
    await new Promise<void>((r) => {
      s.close(() => {
        r();
      });
    });
  }
  kit.cleanup();
  await rm(scratch, { recursive: true, force: true });
});

/**
 * A SOPS file encrypted by sops for our age key, whose metadata is then edited as a pull request
 * could: master keys of other kinds added, and the age key kept or removed.
 */
function sopsFile(
  extra: Record<string, Record<string, unknown>[]>,
  keepAge: boolean,
  metadata: Record<string, string> = {},
): string {
  const encrypted = kit.encrypt(`password: ${CANARY}\n`, 'yaml', { age: [age.recipient] });
  const doc = parseDocument(encrypted);
  for (const [kind, entries] of Object.entries(extra)) doc.setIn(['sops', kind], entries);
  for (const [name, value] of Object.entries(metadata)) doc.setIn(['sops', name], value);
  if (!keepAge) doc.deleteIn(['sops', 'age']);
  return doc.toString();
}

async function decryptTree(
  file: string,
  env: NodeJS.ProcessEnv,
  opts: { secret?: Record<string, string>; ageIdentity?: boolean } = {},
) {
  const root = await tree({
    'deploy/kustomization.yaml': 'secretGenerator:\n  - name: s\n    files: [secret.enc.yaml]\n',
    'deploy/secret.enc.yaml': file,
  });
  const services = keyServices(
    opts.ageIdentity ? { age: age.identity } : {},
    opts.secret ? classifySecretKeys(opts.secret) : undefined,
    env,
  );
  return decryptSources(root, join(root, 'deploy'), { keyServices: services, verifyMac: true });
}

function refusedMessage(err: unknown, service: string, host: string): string {
  const text = (err as Error).message;
  expect(text).toContain('deploy/secret.enc.yaml: SOPS decryption failed');
  expect(text).toContain(service);
  expect(text).toContain(host);
  expect(text).toContain('no request was sent');
  return text;
}

describe('a SOPS file cannot choose where the runner’s credentials go', () => {
  it('Azure vault_url at a loopback listener: no connection, not even the token request', async () => {
    const target = await listener();
    const idp = await entra();
    // The test-only override, smuggled into the file's metadata and into a decryption Secret, admits nothing.
    const file = sopsFile(
      {
        azure_kv: [
          {
            vault_url: target.url,
            name: 'sops-key',
            version: 'v1',
            created_at: '2026-01-01T00:00:00Z',
            enc: 'AAAA',
            KR_TEST_KMS_ENDPOINTS: target.url,
          },
        ],
      },
      false,
      { KR_TEST_KMS_ENDPOINTS: target.url },
    );
    const env = {
      AZURE_TENANT_ID: 'tenant',
      AZURE_CLIENT_ID: 'client',
      AZURE_CLIENT_SECRET: 'runner-client-secret',
      AZURE_AUTHORITY_HOST: idp.url,
    };
    const err = await decryptTree(file, env, { secret: { KR_TEST_KMS_ENDPOINTS: target.url } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err, 'decryption must fail').toBeInstanceOf(Error);
    expect(target.connections()).toBe(0);
    expect(idp.requests()).toBe(0);
    const text = refusedMessage(err, 'Azure Key Vault', target.host);
    expect(text).toContain('vault_url');
  });

  it('Vault vault_address at a loopback listener: no connection, and the error names sops-vault-addresses', async () => {
    const target = await listener();
    const file = sopsFile(
      {
        hc_vault: [
          {
            vault_address: target.url,
            engine_path: 'sops',
            key_name: 'k',
            created_at: '2026-01-01T00:00:00Z',
            enc: 'vault:v1:AAAA',
          },
        ],
      },
      false,
    );
    const err = await decryptTree(file, { VAULT_TOKEN: 'hvs.runner-vault-token' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err, 'decryption must fail').toBeInstanceOf(Error);
    expect(target.connections()).toBe(0);
    const text = refusedMessage(err, 'Vault transit', target.host);
    expect(text).toContain('sops-vault-addresses');
  });

  it('GCP external_account in the decryption Secret: its credential source is not read and token_url not contacted', async () => {
    const target = await listener();
    const environ = join(scratch, 'environ');
    await writeFile(environ, `INPUT_KUBECONFIG=${CANARY}\n`);
    const creds = JSON.stringify({
      type: 'external_account',
      audience: '//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/x',
      subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
      token_url: `${target.url}/v1/token`,
      credential_source: { file: environ },
    });
    const file = sopsFile(
      { gcp_kms: [{ resource_id: GCP_RESOURCE, created_at: '2026-01-01T00:00:00Z', enc: ENC }] },
      false,
    );
    const err = await decryptTree(file, {}, { secret: { 'sops.gcp-kms': creds } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err, 'decryption must fail').toBeInstanceOf(Error);
    expect(target.connections()).toBe(0);
    const text = refusedMessage(err, 'GCP KMS', target.host);
    expect(text).toContain('external_account credentials are refused in a decryption Secret');
    expect(text).toContain('token_url');
    expect(text).not.toContain(CANARY);
  });

  it('GCP service account key in the decryption Secret whose token_uri is elsewhere: not contacted', async () => {
    const target = await listener();
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const creds = JSON.stringify({
      type: 'service_account',
      client_email: 'sa@p.iam.gserviceaccount.com',
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }),
      token_uri: `${target.url}/token`,
    });
    const file = sopsFile(
      { gcp_kms: [{ resource_id: GCP_RESOURCE, created_at: '2026-01-01T00:00:00Z', enc: ENC }] },
      false,
    );
    const err = await decryptTree(file, {}, { secret: { 'sops.gcp-kms': creds } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err, 'decryption must fail').toBeInstanceOf(Error);
    expect(target.connections()).toBe(0);
    const text = refusedMessage(err, 'GCP KMS', target.host);
    expect(text).toContain('token_uri');
  });

  it('an AWS key ARN whose region names another host is refused before any request', async () => {
    const file = sopsFile(
      {
        kms: [
          {
            arn: 'arn:aws:kms:127.0.0.1:1/x:111122223333:key/abc',
            created_at: '2026-01-01T00:00:00Z',
            enc: ENC,
            aws_profile: '',
          },
        ],
      },
      false,
    );
    const err = await decryptTree(file, {
      AWS_ACCESS_KEY_ID: 'AKIDRUNNER',
      AWS_SECRET_ACCESS_KEY: 'runner-secret',
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err, 'decryption must fail').toBeInstanceOf(Error);
    refusedMessage(err, 'AWS KMS', 'kms.127.0.0.1:1/x');
  });

  it('the same refused keys beside the age key: the file still decrypts with age, and nothing is contacted', async () => {
    const target = await listener();
    const file = sopsFile(
      {
        azure_kv: [{ vault_url: target.url, name: 'k', version: 'v', created_at: '2026-01-01T00:00:00Z', enc: 'AAAA' }],
        hc_vault: [
          {
            vault_address: target.url,
            engine_path: 'sops',
            key_name: 'k',
            created_at: '2026-01-01T00:00:00Z',
            enc: 'vault:v1:AAAA',
          },
        ],
      },
      true,
    );
    const done = await decryptTree(file, { VAULT_TOKEN: 'hvs.runner-vault-token' }, { ageIdentity: true });
    expect(done).toEqual(['deploy/secret.enc.yaml']);
    expect(target.connections()).toBe(0);
  });
});

describe('on the cluster: a preview of a tree whose SOPS files point at a listener', () => {
  let client: ClusterClient;
  beforeAll(async () => {
    client = await adminClient();
  });
  afterAll(() => {
    client.close();
  });

  it('fails the Kustomization naming the file, service and host; no connection, nothing applied', async () => {
    const ns = await freshNamespace(client);
    const target = await listener();
    const environ = join(scratch, 'environ-cluster');
    await writeFile(environ, `INPUT_KUBECONFIG=${CANARY}\n`);
    // The tenant's decryption Secret: GCP credentials whose source is the runner's environment.
    await client.request('POST', `/api/v1/namespaces/${ns}/secrets`, {
      body: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'sops-gcp' },
        stringData: {
          'sops.gcp-kms': JSON.stringify({
            type: 'external_account',
            audience: '//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/x',
            subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
            token_url: `${target.url}/v1/token`,
            credential_source: { file: environ },
          }),
        },
      },
    });
    const secret = kit.encrypt(
      `apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: ${ns}\nstringData:\n  password: ${CANARY}\n`,
      'yaml',
      { age: [age.recipient], flags: ['--encrypted-regex', '^(data|stringData)$'] },
    );
    const doc = parseDocument(secret);
    doc.deleteIn(['sops', 'age']);
    doc.setIn(['sops', 'gcp_kms'], [{ resource_id: GCP_RESOURCE, created_at: '2026-01-01T00:00:00Z', enc: ENC }]);
    doc.setIn(
      ['sops', 'azure_kv'],
      [{ vault_url: target.url, name: 'k', version: 'v', created_at: '2026-01-01T00:00:00Z', enc: 'AAAA' }],
    );
    const root = await tree({
      'deploy/kustomization.yaml': 'resources: [secret.enc.yaml]\n',
      'deploy/secret.enc.yaml': doc.toString(),
      'clusters/app.yaml': kustomizationYaml({
        namespace: ns,
        path: './deploy',
        spec: 'decryption:\n  provider: sops\n  secretRef: {name: sops-gcp}',
      }),
    });
    const report = await reconcileTree(root, {
      mode: 'preview',
      kustomizations: ['clusters/app.yaml'],
      env: {
        AZURE_TENANT_ID: 'tenant',
        AZURE_CLIENT_ID: 'client',
        AZURE_CLIENT_SECRET: 'runner-client-secret',
        AZURE_AUTHORITY_HOST: target.url,
      },
    });
    expect(target.connections()).toBe(0);
    expect(report.ok).toBe(false);
    const text = JSON.stringify(report);
    expect(text).toContain('deploy/secret.enc.yaml');
    expect(text).toContain(`refused to contact ${target.host} (from vault_url)`);
    expect(text).toContain('external_account credentials are refused in a decryption Secret');
    expect(text).toContain('no request was sent');
    expect(text).not.toContain(CANARY);
    await expect(client.request('GET', `/api/v1/namespaces/${ns}/secrets/db`)).rejects.toSatisfy(isNotFound);
  });
  it('sops-vault-addresses is what lets a Vault be contacted: unlisted, no connection; listed, contacted', async () => {
    const ns = await freshNamespace(client);
    const target = await listener();
    const encrypted = kit.encrypt(
      `apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: ${ns}\nstringData:\n  password: ${CANARY}\n`,
      'yaml',
      { age: [age.recipient], flags: ['--encrypted-regex', '^(data|stringData)$'] },
    );
    const doc = parseDocument(encrypted);
    doc.deleteIn(['sops', 'age']);
    doc.setIn(
      ['sops', 'hc_vault'],
      [
        {
          vault_address: target.url,
          engine_path: 'sops',
          key_name: 'k',
          created_at: '2026-01-01T00:00:00Z',
          enc: 'vault:v1:AAAA',
        },
      ],
    );
    const root = await tree({
      'deploy/kustomization.yaml': 'resources: [secret.enc.yaml]\n',
      'deploy/secret.enc.yaml': doc.toString(),
    });
    const run = (addresses: string[]) =>
      reconcileTree(root, {
        mode: 'preview',
        path: 'deploy',
        sopsAgeKey: age.identity,
        sopsVaultAddresses: addresses,
        env: { VAULT_TOKEN: 'hvs.runner-vault-token' },
      });
    const unlisted = await run(['https://vault.example.com:8200']);
    expect(target.connections()).toBe(0);
    expect(unlisted.ok).toBe(false);
    expect(unlisted.error).toContain(`refused to contact ${target.host} (from vault_address)`);
    expect(unlisted.error).toContain('sops-vault-addresses');

    const listed = await run([`${target.url}/`]);
    expect(listed.ok).toBe(false); // the listener hangs up: no data key, but it was asked
    expect(target.connections()).toBeGreaterThan(0);
    expect(listed.error).not.toContain('refused to contact');
  });
});
