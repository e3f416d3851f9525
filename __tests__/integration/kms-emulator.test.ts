// The AWS KMS key service against a running AWS emulator: moto's server (KMS and STS, installed by
// test/kms/setup.sh) on loopback. The real sops encrypts with a KMS key there; the service must
// recover the data key that opens sops's values. moto does not check signatures: the signing is
// checked against AWS's published vectors in __tests__/unit/kms.test.ts.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createDecipheriv } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { awsKmsKeyService, type AwsCredentials } from '../../src/sops/kms/aws.js';
import { signV4 } from '../../src/aws/sigv4.js';
import type { MasterKey } from '../../src/sops/types.js';
import { REPO, TOOLS } from '../helpers/paths.js';
import { freePort } from '../helpers/ports.js';

const run = promisify(execFile);
const MOTO = join(REPO, 'test', 'kms', 'bin', 'moto_server');
const SOPS = join(TOOLS, 'sops');
const REGION = 'us-east-1';
/** moto accepts any credentials; these are the ones sops and the service sign with. */
const CREDS: AwsCredentials = { accessKeyId: 'AKIDMOTOTEST', secretAccessKey: 'moto-test-secret-key' };

let moto: ChildProcess | undefined;
let endpoint = '';
let dir = '';

/** One KMS JSON call to moto (for set-up: creating and disabling keys). */
async function kms(target: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const url = new URL(`${endpoint}/`);
  const text = JSON.stringify(body);
  const headers = signV4(
    {
      method: 'POST',
      url,
      headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': `TrentService.${target}` },
      body: text,
    },
    CREDS,
    REGION,
    'kms',
  );
  const res = await fetch(url, { method: 'POST', headers, body: text });
  const out = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`moto ${target}: HTTP ${res.status} ${JSON.stringify(out)}`);
  return out;
}

async function createKey(): Promise<string> {
  const out = await kms('CreateKey', { Description: 'kustomize-reconcile test' });
  return (out['KeyMetadata'] as { Arn: string }).Arn;
}

/** Encrypts a YAML document with the real sops for a KMS key at moto; returns the parsed result. */
async function sopsEncrypt(arn: string, extra: string[] = []): Promise<Record<string, unknown>> {
  const file = join(dir, `plain-${Date.now()}-${Math.random().toString(36).slice(2)}.yaml`);
  await writeFile(file, 'password: pa55-w0rd-ZQX\n');
  const { stdout } = await run(SOPS, ['encrypt', '--kms', arn, ...extra, file], {
    cwd: dir,
    env: {
      PATH: process.env['PATH'],
      HOME: dir,
      AWS_ACCESS_KEY_ID: CREDS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: CREDS.secretAccessKey,
      AWS_ENDPOINT_URL: endpoint,
      AWS_EC2_METADATA_DISABLED: 'true',
    },
  });
  return parseYaml(stdout) as Record<string, unknown>;
}

/** The first `sops.kms` entry as the SOPS decryptor hands it to a key service. */
function kmsMasterKey(doc: Record<string, unknown>): MasterKey {
  const entry = (doc['sops'] as { kms: Record<string, unknown>[] }).kms[0]!;
  const { enc, ...fields } = entry;
  return { kind: 'kms', enc: String(enc), fields };
}

/** Opens sops's `ENC[AES256_GCM,...]` value of the top-level `password` key with the data key. */
function openValue(doc: Record<string, unknown>, dataKey: Uint8Array): string {
  const m = /^ENC\[AES256_GCM,data:([^,]*),iv:([^,]+),tag:([^,]+),type:str\]$/.exec(String(doc['password']));
  expect(m).not.toBeNull();
  const [, data, iv, tag] = m!;
  const d = createDecipheriv('aes-256-gcm', dataKey, Buffer.from(iv!, 'base64'));
  d.setAuthTag(Buffer.from(tag!, 'base64'));
  d.setAAD(Buffer.from('password:'));
  return Buffer.concat([d.update(Buffer.from(data!, 'base64')), d.final()]).toString('utf8');
}

beforeAll(async () => {
  if (!existsSync(MOTO)) throw new Error(`${MOTO} is missing: run "bash test/kms/setup.sh" first`);
  if (!existsSync(SOPS)) throw new Error(`${SOPS} is missing: run "npm run cluster:build" first`);
  dir = await mkdtemp(join(tmpdir(), 'kr-kms-emulator-'));
  const port = await freePort();
  endpoint = `http://127.0.0.1:${port}`;
  const child = spawn(MOTO, ['-H', '127.0.0.1', '-p', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
  moto = child;
  const stderr: string[] = [];
  child.stderr.on('data', (d: Buffer) => stderr.push(d.toString()));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`moto_server exited with ${child.exitCode}:\n${stderr.join('')}`);
    try {
      const res = await fetch(`${endpoint}/moto-api/data.json`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`moto_server did not answer in 60s:\n${stderr.join('')}`);
    await new Promise((r) => setTimeout(r, 200));
  }
});

afterAll(async () => {
  const c = moto;
  if (c && c.exitCode === null) {
    const exited = new Promise((r) => c.on('exit', r));
    c.kill('SIGTERM');
    await exited;
  }
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('AWS KMS key service against moto', () => {
  it.each([
    { why: 'without an encryption context', extra: [] as string[], context: undefined },
    {
      why: 'with the encryption context sops stored',
      extra: ['--encryption-context', 'team:infra,env:ci'],
      context: { team: 'infra', env: 'ci' },
    },
  ])('recovers the data key sops encrypted, $why', async ({ extra, context }) => {
    const arn = await createKey();
    const doc = await sopsEncrypt(arn, extra);
    const key = kmsMasterKey(doc);
    expect(key.fields['arn']).toBe(arn);
    expect(key.fields['context']).toEqual(context);
    const service = awsKmsKeyService(CREDS, { AWS_ENDPOINT_URL: endpoint });
    const dataKey = await service.decrypt(key);
    expect(dataKey).toHaveLength(32);
    expect(openValue(doc, dataKey!)).toBe('pa55-w0rd-ZQX');
  });

  it('a wrong encryption context fails with KMS’s InvalidCiphertextException', async () => {
    const arn = await createKey();
    const doc = await sopsEncrypt(arn, ['--encryption-context', 'team:infra']);
    const key = kmsMasterKey(doc);
    const tampered: MasterKey = { ...key, fields: { ...key.fields, context: { team: 'other' } } };
    const service = awsKmsKeyService(CREDS, { AWS_ENDPOINT_URL: endpoint });
    await expect(service.decrypt(tampered)).rejects.toThrow(
      new RegExp(`^AWS KMS key ${arn}: Decrypt failed: HTTP 400 \\(InvalidCiphertextException`),
    );
  });

  // KMS answers IncorrectKeyException; moto answers AccessDeniedException.
  it('the ciphertext of another key fails with the error KMS gives for it', async () => {
    const [arn, other] = await Promise.all([createKey(), createKey()]);
    const doc = await sopsEncrypt(arn);
    const key = kmsMasterKey(doc);
    const service = awsKmsKeyService(CREDS, { AWS_ENDPOINT_URL: endpoint });
    const err = await service.decrypt({ ...key, fields: { ...key.fields, arn: other } }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toMatch(new RegExp(`^AWS KMS key ${other}: Decrypt failed: HTTP 400 \\(\\w+Exception`));
  });

  it('a key with a role: STS AssumeRole first, then Decrypt with the role’s credentials', async () => {
    const arn = await createKey();
    const doc = await sopsEncrypt(arn);
    const key = kmsMasterKey(doc);
    const withRole: MasterKey = { ...key, fields: { ...key.fields, role: 'arn:aws:iam::123456789012:role/sops' } };
    const service = awsKmsKeyService(CREDS, { AWS_ENDPOINT_URL: endpoint });
    expect(openValue(doc, (await service.decrypt(withRole))!)).toBe('pa55-w0rd-ZQX');
  });

  it('web identity: AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN through STS AssumeRoleWithWebIdentity', async () => {
    const arn = await createKey();
    const doc = await sopsEncrypt(arn);
    const tokenFile = join(dir, 'web-identity-token');
    await writeFile(tokenFile, 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJyZXBvOm8vcjpyZWYifQ.sig\n');
    const service = awsKmsKeyService(undefined, {
      AWS_WEB_IDENTITY_TOKEN_FILE: tokenFile,
      AWS_ROLE_ARN: 'arn:aws:iam::123456789012:role/github-actions',
      AWS_ENDPOINT_URL: endpoint,
    });
    expect(openValue(doc, (await service.decrypt(kmsMasterKey(doc)))!)).toBe('pa55-w0rd-ZQX');
  });
});
