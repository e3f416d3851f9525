// The cloud KMS key services, against loopback HTTP servers of the test that check each request
// and answer with the providers' documented responses. No cloud is reachable from here, so:
// - AWS request signing is checked against AWS's Signature Version 4 test suite and against
//   requests signed by botocore (the AWS SDK for Python), whose output matches that suite;
// - the request and response bodies follow the providers' API references, named at each test.
// __tests__/integration/kms-emulator.test.ts runs AWS KMS and STS for real (moto) with sops.
import { execFileSync } from 'node:child_process';
import {
  createHash,
  createPublicKey,
  createVerify,
  generateKeyPairSync,
  X509Certificate,
  type KeyObject,
} from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { awsKmsKeyService, type AwsCredentials } from '../../src/sops/kms/aws.js';
import { signV4 } from '../../src/aws/sigv4.js';
import { azureKeyVaultKeyService, CLI_RESOURCE } from '../../src/sops/kms/azure.js';
import { kmsRetry } from '../../src/sops/kms/common.js';
import { gcpKmsKeyService } from '../../src/sops/kms/gcp.js';
import { normalizeVaultAddress } from '../../src/sops/kms/endpoints.js';
import { vaultTransitKeyService } from '../../src/sops/kms/vault.js';
import type { KeyService, MasterKey, MasterKeyKind } from '../../src/sops/types.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

// ---- loopback servers ----------------------------------------------------------------------------

interface Seen {
  method: string;
  /** Path and query, as sent. */
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface Reply {
  status?: number;
  headers?: Record<string, string>;
  /** An object is sent as JSON, a string as it is. */
  body?: unknown;
}

interface Loopback {
  url: string;
  host: string;
  seen: Seen[];
}

const servers: http.Server[] = [];

async function loopback(handler: (req: Seen) => Reply): Promise<Loopback> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const s: Seen = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      seen.push(s);
      let r: Reply;
      try {
        r = handler(s);
      } catch (err) {
        r = { status: 599, body: `test handler failed: ${String(err)}` };
      }
      const text = typeof r.body === 'string' ? r.body : r.body === undefined ? '' : JSON.stringify(r.body);
      res.writeHead(r.status ?? 200, {
        'content-type': typeof r.body === 'string' ? 'text/xml' : 'application/json',
        ...r.headers,
      });
      res.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, host: `127.0.0.1:${port}`, seen };
}

/** A loopback port with nothing listening: a server is opened to learn a free port, then closed. */
async function closedPort(): Promise<string> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => {
    server.close(() => {
      resolve();
    });
  });
  return `http://127.0.0.1:${port}`;
}

afterEach(async () => {
  vi.useRealTimers();
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise<void>((resolve) => {
      s.close(() => {
        resolve();
      });
    });
  }
});

beforeAll(() => {
  kmsRetry.policy = { attempts: kmsRetry.policy.attempts, sleep: () => Promise.resolve() };
});

const form = (body: string) => Object.fromEntries(new URLSearchParams(body));
const json = (body: string) => JSON.parse(body) as Record<string, unknown>;
const key = (kind: MasterKeyKind, enc: string, fields: Record<string, unknown>): MasterKey => ({ kind, enc, fields });

/** The data key every fake service hands back: 32 bytes, as SOPS generates. */
const DATA_KEY = Buffer.from(Array.from({ length: 32 }, (_, i) => (i * 7 + 3) & 0xff));

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

describe('canOpen', () => {
  const services: KeyService[] = [
    awsKmsKeyService(undefined, {}),
    gcpKmsKeyService(undefined, {}),
    azureKeyVaultKeyService(undefined, {}),
    vaultTransitKeyService(undefined, {}),
  ];
  const kinds: MasterKeyKind[] = ['age', 'pgp', 'kms', 'gcp_kms', 'azure_kv', 'hc_vault'];
  it.each([
    ['AWS KMS', 'kms'],
    ['GCP KMS', 'gcp_kms'],
    ['Azure Key Vault', 'azure_kv'],
    ['Vault transit', 'hc_vault'],
  ])('%s opens only %s keys, and leaves others to other services', async (name, kind) => {
    const service = services.find((s) => s.name === name)!;
    expect(service).toBeDefined();
    for (const k of kinds) expect(service.canOpen(key(k, 'x', {}))).toBe(k === kind);
    const other = kinds.find((k) => k !== kind)!;
    await expect(service.decrypt(key(other, 'x', {}))).resolves.toBeUndefined();
  });
});

// ---- AWS -------------------------------------------------------------------------------------------

describe('AWS Signature Version 4', () => {
  const EXAMPLE: AwsCredentials = {
    accessKeyId: 'AKIDEXAMPLE',
    secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  };
  const SUITE_DATE = new Date('2015-08-30T12:36:00Z');
  const scope = 'Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request';

  // The AWS Signature Version 4 test suite ("aws-sig-v4-test-suite", as kept in awslabs/aws-c-auth
  // tests/aws-signing-test-suite/v4/<name>/header-signed-request.txt): credentials AKIDEXAMPLE, region
  // us-east-1, service "service", 20150830T123600Z.
  it.each<{
    name: string;
    method: string;
    url: string;
    headers: Record<string, string>;
    body: string;
    signed: string;
    sig: string;
  }>([
    {
      name: 'get-vanilla',
      method: 'GET',
      url: 'https://example.amazonaws.com/',
      headers: {},
      body: '',
      signed: 'host;x-amz-date',
      sig: '5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
    },
    {
      name: 'get-vanilla-query-order-key-case',
      method: 'GET',
      url: 'https://example.amazonaws.com/?Param2=value2&Param1=value1',
      headers: {},
      body: '',
      signed: 'host;x-amz-date',
      sig: 'b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500',
    },
    {
      name: 'get-vanilla-query-unreserved',
      method: 'GET',
      url: 'https://example.amazonaws.com/?-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz=-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz',
      headers: {},
      body: '',
      signed: 'host;x-amz-date',
      sig: '9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197',
    },
    {
      name: 'get-utf8',
      method: 'GET',
      url: 'https://example.amazonaws.com/ሴ',
      headers: {},
      body: '',
      signed: 'host;x-amz-date',
      sig: '8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85',
    },
    {
      name: 'get-header-value-trim',
      method: 'GET',
      url: 'https://example.amazonaws.com/',
      headers: { 'My-Header1': ' value1', 'My-Header2': ' "a   b   c"' },
      body: '',
      signed: 'host;my-header1;my-header2;x-amz-date',
      sig: 'acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736',
    },
    {
      name: 'post-vanilla',
      method: 'POST',
      url: 'https://example.amazonaws.com/',
      headers: {},
      body: '',
      signed: 'host;x-amz-date',
      sig: '5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b',
    },
    {
      name: 'post-header-key-sort',
      method: 'POST',
      url: 'https://example.amazonaws.com/',
      headers: { 'My-Header1': 'value1' },
      body: '',
      signed: 'host;my-header1;x-amz-date',
      sig: 'c5410059b04c1ee005303aed430f6e6645f61f4dc9e1461ec8f8916fdf18852c',
    },
  ])('test suite: $name', ({ method, url, headers, body, signed, sig }) => {
    const out = signV4({ method, url: new URL(url), headers, body }, EXAMPLE, 'us-east-1', 'service', SUITE_DATE);
    expect(out['authorization']).toBe(`AWS4-HMAC-SHA256 ${scope}, SignedHeaders=${signed}, Signature=${sig}`);
    expect(out['x-amz-date']).toBe('20150830T123600Z');
    expect(out['host']).toBeUndefined();
  });

  it('test suite: get-vanilla-with-session-token signs x-amz-security-token', () => {
    const token = '6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267';
    const out = signV4(
      { method: 'GET', url: new URL('https://example.amazonaws.com/'), headers: {}, body: '' },
      { ...EXAMPLE, sessionToken: token },
      'us-east-1',
      'service',
      SUITE_DATE,
    );
    expect(out['x-amz-security-token']).toBe(token);
    expect(out['authorization']).toBe(
      `AWS4-HMAC-SHA256 ${scope}, SignedHeaders=host;x-amz-date;x-amz-security-token, ` +
        'Signature=07ec1639c89043aa0e3e2de82b96708f198cceab042d4a97044c66dd9f74e7f8',
    );
  });

  it('AWS General Reference example: IAM ListUsers', () => {
    // "Examples of the complete Signature Version 4 signing process": GET ?Action=ListUsers&Version=2010-05-08.
    const out = signV4(
      {
        method: 'GET',
        url: new URL('https://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08'),
        headers: { 'Content-Type': 'application/x-www-form-urlencoded; charset=utf-8' },
        body: '',
      },
      EXAMPLE,
      'us-east-1',
      'iam',
      SUITE_DATE,
    );
    expect(out['authorization']).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, ' +
        'SignedHeaders=content-type;host;x-amz-date, ' +
        'Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7',
    );
  });

  // Requests as this service sends them, signed by botocore 1.43 (SigV4Auth, with the clock set to
  // 2026-01-15T10:00:00Z); botocore reproduces every test-suite signature above.
  const KMS_BODY =
    '{"KeyId":"arn:aws:kms:us-west-2:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab",' +
    '"CiphertextBlob":"AQIDAHhBRxDEXAMPLEciphertextblob==","EncryptionContext":{"team":"infra"}}';
  it.each<{
    name: string;
    url: string;
    headers: Record<string, string>;
    body: string;
    service: string;
    creds: AwsCredentials;
    want: string;
  }>([
    {
      name: 'KMS Decrypt',
      url: 'https://kms.us-west-2.amazonaws.com/',
      headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': 'TrentService.Decrypt' },
      body: KMS_BODY,
      service: 'kms',
      creds: EXAMPLE,
      want:
        'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260115/us-west-2/kms/aws4_request, ' +
        'SignedHeaders=content-type;host;x-amz-date;x-amz-target, ' +
        'Signature=9bbd0696a60bfeef1c12ff6e2b7d48f07be83a87edb31d8fb35b999ee1e8ad8e',
    },
    {
      name: 'KMS Decrypt with temporary credentials',
      url: 'https://kms.us-west-2.amazonaws.com/',
      headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': 'TrentService.Decrypt' },
      body: KMS_BODY,
      service: 'kms',
      creds: {
        accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
        secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY',
        sessionToken: 'AQoDYXdzEE0a8ANXXXXXXXXNO1ewxE5TijQyp+IEXAMPLE',
      },
      want:
        'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20260115/us-west-2/kms/aws4_request, ' +
        'SignedHeaders=content-type;host;x-amz-date;x-amz-security-token;x-amz-target, ' +
        'Signature=9b2aed1871c853324a35c9eb611c77f243d24d995de364868b3e8147a4352b71',
    },
    {
      name: 'STS AssumeRole',
      url: 'https://sts.us-west-2.amazonaws.com/',
      headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
      body:
        'Action=AssumeRole&Version=2011-06-15&RoleArn=arn%3Aaws%3Aiam%3A%3A123456789012%3Arole%2Fdemo' +
        '&RoleSessionName=testAssumeRoleSession',
      service: 'sts',
      creds: EXAMPLE,
      want:
        'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260115/us-west-2/sts/aws4_request, ' +
        'SignedHeaders=content-type;host;x-amz-date, ' +
        'Signature=294a5f8484e49bc3e273fc1eb83c9639da27085c364dfbfc014b624e1dcc81e1',
    },
  ])('botocore-signed: $name', ({ url, headers, body, service, creds, want }) => {
    const out = signV4(
      { method: 'POST', url: new URL(url), headers, body },
      creds,
      'us-west-2',
      service,
      new Date('2026-01-15T10:00:00Z'),
    );
    expect(out['authorization']).toBe(want);
  });
});

describe('AWS KMS key service', () => {
  // From the KMS API Reference (Decrypt, "To decrypt data") and the STS API Reference
  // (AssumeRole, AssumeRoleWithWebIdentity examples), as botocore's examples-1.json carries them.
  const ARN = 'arn:aws:kms:us-west-2:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab';
  const ENC = Buffer.from('an encrypted data key blob from KMS').toString('base64');
  const ENV_CREDS = {
    AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
    AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  };
  const ENV_AS_CREDS: AwsCredentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: ENV_CREDS.AWS_SECRET_ACCESS_KEY };
  const WEB_IDENTITY_CREDS = {
    accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
    secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY',
    sessionToken: 'AQoDYXdzEE0a8ANXXXXXXXXNO1ewxE5TijQyp+IEXAMPLE',
  };
  const ROLE_CREDS = {
    accessKeyId: 'ASIAROLEEXAMPLE',
    secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY',
    sessionToken:
      'AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8Y',
  };

  function stsXml(action: string, c: AwsCredentials, expiration = '2099-10-24T23:00:23Z'): string {
    return (
      `<${action}Response xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><${action}Result>` +
      '<AssumedRoleUser><Arn>arn:aws:sts::123456789012:assumed-role/demo/app1</Arn>' +
      '<AssumedRoleId>AROACLKWSDQRAOEXAMPLE:app1</AssumedRoleId></AssumedRoleUser>' +
      `<Credentials><AccessKeyId>${c.accessKeyId}</AccessKeyId><SecretAccessKey>${c.secretAccessKey}</SecretAccessKey>` +
      `<SessionToken>${c.sessionToken ?? ''}</SessionToken><Expiration>${expiration}</Expiration></Credentials>` +
      `</${action}Result><ResponseMetadata><RequestId>ad4156e9-bce1-11e2-82e6-6b6efEXAMPLE</RequestId>` +
      `</ResponseMetadata></${action}Response>`
    );
  }

  /** KMS and STS on one loopback port, told apart by X-Amz-Target and the form's Action. */
  function aws(overrides: { kms?: (s: Seen) => Reply } = {}) {
    return loopback((s) => {
      if (s.headers['x-amz-target'] === 'TrentService.Decrypt') {
        if (overrides.kms) return overrides.kms(s);
        return {
          body: { KeyId: ARN, Plaintext: DATA_KEY.toString('base64'), EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' },
        };
      }
      const action = form(s.body)['Action'];
      if (action === 'AssumeRoleWithWebIdentity') return { body: stsXml(action, WEB_IDENTITY_CREDS) };
      if (action === 'AssumeRole') return { body: stsXml(action, ROLE_CREDS) };
      if (s.path.startsWith('/oidc')) return { body: { value: 'github-oidc-jwt' } };
      return { status: 404, body: 'no route' };
    });
  }

  /** Checks that a request carries a valid signature over what was actually sent. */
  function expectSignedBy(s: Seen, c: AwsCredentials, region: string, service: string) {
    const auth = String(s.headers['authorization']);
    const m =
      /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=[0-9a-f]{64}$/.exec(
        auth,
      );
    expect(m, auth).not.toBeNull();
    const [, id, , r, svc, signed] = m!;
    expect([id, r, svc]).toEqual([c.accessKeyId, region, service]);
    const names = signed!.split(';');
    expect(names).toContain('host');
    const headers: Record<string, string> = {};
    for (const n of names) {
      if (n !== 'x-amz-date' && n !== 'x-amz-security-token') headers[n] = String(s.headers[n]);
    }
    const amzDate = String(s.headers['x-amz-date']);
    const when = new Date(
      `${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`,
    );
    const again = signV4(
      { method: s.method, url: new URL(`http://${String(s.headers['host'])}${s.path}`), headers, body: s.body },
      c,
      region,
      service,
      when,
    );
    expect(auth).toBe(again['authorization']);
  }

  it('sends KMS Decrypt with the ARN, the ciphertext and the encryption context, and returns the plaintext', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: new Date('2026-01-15T10:00:00Z') });
    const srv = await aws();
    const service = awsKmsKeyService(undefined, { ...ENV_CREDS, AWS_ENDPOINT_URL_KMS: srv.url });
    const got = await service.decrypt(key('kms', ENC, { arn: ARN, context: { team: 'infra', env: 'ci' } }));
    expect(Buffer.from(got!)).toEqual(DATA_KEY);
    expect(srv.seen).toHaveLength(1);
    const s = srv.seen[0]!;
    expect([s.method, s.path]).toEqual(['POST', '/']);
    expect(s.headers['content-type']).toBe('application/x-amz-json-1.1');
    expect(s.headers['x-amz-target']).toBe('TrentService.Decrypt');
    expect(s.headers['x-amz-date']).toBe('20260115T100000Z');
    expect(s.headers['x-amz-security-token']).toBeUndefined();
    expect(json(s.body)).toEqual({ KeyId: ARN, CiphertextBlob: ENC, EncryptionContext: { team: 'infra', env: 'ci' } });
    expectSignedBy(s, ENV_AS_CREDS, 'us-west-2', 'kms');
  });

  it.each<{ why: string; creds: AwsCredentials | undefined; env: NodeJS.ProcessEnv; want: AwsCredentials }>([
    {
      why: 'explicit credentials (sops.aws-kms) win over the environment',
      creds: { accessKeyId: 'AKIDFROMSECRET', secretAccessKey: 'secret-from-flux-secret' },
      env: ENV_CREDS,
      want: { accessKeyId: 'AKIDFROMSECRET', secretAccessKey: 'secret-from-flux-secret' },
    },
    {
      why: 'the environment variables of configure-aws-credentials, with a session token',
      creds: undefined,
      env: { ...ENV_CREDS, AWS_SESSION_TOKEN: 'session-token-from-env' },
      want: { ...ENV_AS_CREDS, sessionToken: 'session-token-from-env' },
    },
  ])('credentials: $why', async ({ creds, env, want }) => {
    const srv = await aws();
    const service = awsKmsKeyService(creds, { ...env, AWS_ENDPOINT_URL: srv.url });
    await service.decrypt(key('kms', ENC, { arn: ARN }));
    const kms = srv.seen.filter((s) => s.headers['x-amz-target']);
    expect(kms).toHaveLength(srv.seen.length);
    expect(kms[0]!.headers['x-amz-security-token']).toBe(want.sessionToken);
    expectSignedBy(kms[0]!, want, 'us-west-2', 'kms');
  });

  it('credentials: web identity token file → unsigned STS AssumeRoleWithWebIdentity, cached across keys', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kms-test-'));
    try {
      await writeFile(join(dir, 'token'), 'eyJhbGciOiJSUzI1NiJ9.web-identity.sig\n');
      const srv = await aws();
      const service = awsKmsKeyService(undefined, {
        AWS_WEB_IDENTITY_TOKEN_FILE: join(dir, 'token'),
        AWS_ROLE_ARN: 'arn:aws:iam::123456789012:role/FederatedWebIdentityRole',
        AWS_ROLE_SESSION_NAME: 'app1',
        AWS_REGION: 'eu-west-1',
        AWS_ENDPOINT_URL: srv.url,
      });
      await service.decrypt(key('kms', ENC, { arn: ARN }));
      await service.decrypt(key('kms', ENC, { arn: ARN }));
      expect(srv.seen.map((s) => s.headers['x-amz-target'] ?? form(s.body)['Action'])).toEqual([
        'AssumeRoleWithWebIdentity',
        'TrentService.Decrypt',
        'TrentService.Decrypt',
      ]);
      const sts = srv.seen[0]!;
      expect(sts.headers['authorization']).toBeUndefined();
      expect(sts.headers['content-type']).toBe('application/x-www-form-urlencoded; charset=utf-8');
      expect(form(sts.body)).toEqual({
        Action: 'AssumeRoleWithWebIdentity',
        Version: '2011-06-15',
        RoleArn: 'arn:aws:iam::123456789012:role/FederatedWebIdentityRole',
        RoleSessionName: 'app1',
        WebIdentityToken: 'eyJhbGciOiJSUzI1NiJ9.web-identity.sig',
      });
      expect(srv.seen[1]!.headers['x-amz-security-token']).toBe(WEB_IDENTITY_CREDS.sessionToken);
      expectSignedBy(srv.seen[1]!, WEB_IDENTITY_CREDS, 'us-west-2', 'kms');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('credentials: the GitHub OIDC token (audience sts.amazonaws.com) when AWS_ROLE_ARN has no token file', async () => {
    const srv = await aws();
    const service = awsKmsKeyService(undefined, {
      AWS_ROLE_ARN: 'arn:aws:iam::123456789012:role/gha',
      ACTIONS_ID_TOKEN_REQUEST_URL: `${srv.url}/oidc?api-version=2.0`,
      ACTIONS_ID_TOKEN_REQUEST_TOKEN: 'runtime-bearer',
      AWS_ENDPOINT_URL: srv.url,
    });
    await service.decrypt(key('kms', ENC, { arn: ARN }));
    const oidc = srv.seen[0]!;
    expect(oidc.method).toBe('GET');
    const u = new URL(oidc.path, srv.url);
    expect([u.pathname, u.searchParams.get('api-version'), u.searchParams.get('audience')]).toEqual([
      '/oidc',
      '2.0',
      'sts.amazonaws.com',
    ]);
    expect(oidc.headers['authorization']).toBe('Bearer runtime-bearer');
    expect(form(srv.seen[1]!.body)['WebIdentityToken']).toBe('github-oidc-jwt');
  });

  it('a key with a role: STS AssumeRole signed with the base credentials, then KMS with the role’s', async () => {
    const srv = await aws();
    const service = awsKmsKeyService(undefined, { ...ENV_CREDS, AWS_ENDPOINT_URL: srv.url });
    const role = 'arn:aws:iam::123456789012:role/demo';
    await service.decrypt(key('kms', ENC, { arn: ARN, role }));
    await service.decrypt(key('kms', ENC, { arn: ARN, role }));
    expect(srv.seen).toHaveLength(3);
    const [assume, kms] = srv.seen;
    expect(form(assume!.body)).toMatchObject({ Action: 'AssumeRole', Version: '2011-06-15', RoleArn: role });
    expect(form(assume!.body)['RoleSessionName']).toMatch(/^kustomize-reconcile@[\w+=,.@-]*$/);
    expectSignedBy(assume!, ENV_AS_CREDS, 'us-west-2', 'sts');
    expectSignedBy(kms!, ROLE_CREDS, 'us-west-2', 'kms');
  });

  it('reads the region and partition from the ARN: the STS and KMS endpoints and the signing scope', async () => {
    const srv = await aws();
    const arn = 'arn:aws-cn:kms:cn-north-1:111122223333:alias/sops';
    const service = awsKmsKeyService(undefined, { ...ENV_CREDS, AWS_ENDPOINT_URL_KMS: srv.url });
    await service.decrypt(key('kms', ENC, { arn }));
    expect(json(srv.seen[0]!.body)['KeyId']).toBe(arn);
    expectSignedBy(srv.seen[0]!, ENV_AS_CREDS, 'cn-north-1', 'kms');
  });

  /** Records the URLs the service fetches (without any network) and answers as KMS Decrypt does. */
  function recordFetch(): string[] {
    const urls: string[] = [];
    vi.spyOn(globalThis, 'fetch').mockImplementation((input) => {
      urls.push(input instanceof Request ? input.url : input instanceof URL ? input.href : input);
      return Promise.resolve(new Response(JSON.stringify({ Plaintext: DATA_KEY.toString('base64') })));
    });
    return urls;
  }

  it.each([
    { arn: ARN, env: {}, url: 'https://kms.us-west-2.amazonaws.com/' },
    {
      arn: 'arn:aws-cn:kms:cn-north-1:111122223333:alias/sops',
      env: {},
      url: 'https://kms.cn-north-1.amazonaws.com.cn/',
    },
    {
      arn: 'arn:aws-us-gov:kms:us-gov-west-1:111122223333:alias/sops',
      env: {},
      url: 'https://kms.us-gov-west-1.amazonaws.com/',
    },
    { arn: ARN, env: { AWS_USE_FIPS_ENDPOINT: 'true' }, url: 'https://kms-fips.us-west-2.amazonaws.com/' },
  ])('without an endpoint variable, KMS is AWS’s host for the ARN: $url', async ({ arn, env, url }) => {
    const urls = recordFetch();
    try {
      const service = awsKmsKeyService(undefined, { ...ENV_CREDS, ...env });
      expect(Buffer.from((await service.decrypt(key('kms', ENC, { arn })))!)).toEqual(DATA_KEY);
      expect(urls).toEqual([url]);
    } finally {
      vi.restoreAllMocks();
    }
  });

  it.each([
    { why: 'a host as the region', fields: { arn: 'arn:aws:kms:evil.example.com/x:111122223333:key/k' }, field: 'arn' },
    {
      why: 'a region of another partition',
      fields: { arn: 'arn:aws:kms:cn-north-1:111122223333:key/k' },
      field: 'arn',
    },
    {
      why: 'a role of a partition the region is not in',
      fields: { arn: ARN, role: 'arn:aws-cn:iam::111122223333:role/sops' },
      field: 'role',
    },
  ])('refuses $why before any request', async ({ fields, field }) => {
    const urls = recordFetch();
    try {
      const service = awsKmsKeyService(undefined, { ...ENV_CREDS });
      const err = await rejection(service.decrypt(key('kms', ENC, fields)));
      expect(err.message).toMatch(/^AWS KMS key /);
      expect(err.message).toContain(`(from ${field})`);
      expect(err.message).toContain('no request was sent');
      expect(urls).toEqual([]);
    } finally {
      vi.restoreAllMocks();
    }
  });

  it.each([
    {
      why: 'KMS JSON error (__type, message)',
      reply: { status: 400, body: { __type: 'InvalidCiphertextException', message: 'The ciphertext is invalid.' } },
      want: ['HTTP 400', 'InvalidCiphertextException', 'The ciphertext is invalid.'],
    },
    {
      why: 'x-amzn-ErrorType header with a namespace and URL, Message capitalised',
      reply: {
        status: 400,
        headers: {
          'x-amzn-ErrorType': 'AccessDeniedException:http://internal.amazon.com/coral/com.amazon.coral.service/',
        },
        body: {
          __type: 'com.amazonaws.kms#AccessDeniedException',
          Message: 'User is not authorized to perform: kms:Decrypt',
        },
      },
      want: ['HTTP 400', 'AccessDeniedException', 'not authorized to perform: kms:Decrypt'],
    },
    {
      why: 'a message echoing the secret key is redacted',
      reply: {
        status: 403,
        body: { __type: 'IncompleteSignatureException', message: 'bad key wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' },
      },
      want: ['HTTP 403', 'IncompleteSignatureException', 'bad key ***'],
    },
  ])('errors name provider, ARN, status and code: $why', async ({ reply, want }) => {
    const srv = await aws({ kms: () => reply });
    const service = awsKmsKeyService(undefined, { ...ENV_CREDS, AWS_ENDPOINT_URL: srv.url });
    const err = await rejection(service.decrypt(key('kms', ENC, { arn: ARN })));
    expect(err.name).toBe('SopsError');
    expect(err.message).toContain(`AWS KMS key ${ARN}: Decrypt failed`);
    for (const w of want) expect(err.message).toContain(w);
    expect(err.message).not.toContain(ENV_CREDS.AWS_SECRET_ACCESS_KEY);
    expect(srv.seen).toHaveLength(1);
  });

  it('a refusal of the GitHub OIDC endpoint names that call and hides its bearer token', async () => {
    const srv = await loopback(() => ({
      status: 403,
      body:
        '<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type>' +
        '<Code>AccessDenied</Code><Message>Not authorized to perform sts:AssumeRoleWithWebIdentity</Message></Error>' +
        '<RequestId>4f5b5e2c-EXAMPLE</RequestId></ErrorResponse>',
    }));
    const service = awsKmsKeyService(undefined, {
      AWS_ROLE_ARN: 'arn:aws:iam::123456789012:role/gha',
      ACTIONS_ID_TOKEN_REQUEST_URL: `${srv.url}/oidc`,
      ACTIONS_ID_TOKEN_REQUEST_TOKEN: 'runtime-bearer',
      AWS_ENDPOINT_URL: srv.url,
    });
    const err = await rejection(service.decrypt(key('kms', ENC, { arn: ARN })));
    expect(err.message).toContain(`AWS KMS key ${ARN}: GitHub OIDC token: HTTP 403`);
    expect(err.message).not.toContain('runtime-bearer');
  });

  it('an AssumeRoleWithWebIdentity refusal names the role and the STS error', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kms-test-'));
    try {
      await writeFile(join(dir, 'token'), 'the-web-identity-token');
      const srv = await loopback(() => ({
        status: 400,
        body:
          '<ErrorResponse><Error><Type>Sender</Type><Code>InvalidIdentityToken</Code>' +
          '<Message>Couldn&apos;t retrieve verification key from your identity provider</Message></Error></ErrorResponse>',
      }));
      const service = awsKmsKeyService(undefined, {
        AWS_ROLE_ARN: 'arn:aws:iam::123456789012:role/gha',
        AWS_WEB_IDENTITY_TOKEN_FILE: join(dir, 'token'),
        AWS_ENDPOINT_URL_STS: srv.url,
      });
      const err = await rejection(service.decrypt(key('kms', ENC, { arn: ARN })));
      expect(err.message).toBe(
        `AWS KMS key ${ARN}: STS AssumeRoleWithWebIdentity for arn:aws:iam::123456789012:role/gha failed: ` +
          "HTTP 400 (InvalidIdentityToken: Couldn't retrieve verification key from your identity provider)",
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('retries once on 503 and then succeeds', async () => {
    let n = 0;
    const srv = await aws({
      kms: () =>
        ++n === 1
          ? { status: 503, body: { __type: 'KMSInternalException', message: 'busy' } }
          : { body: { KeyId: ARN, Plaintext: DATA_KEY.toString('base64') } },
    });
    const service = awsKmsKeyService(undefined, { ...ENV_CREDS, AWS_ENDPOINT_URL: srv.url });
    expect(Buffer.from((await service.decrypt(key('kms', ENC, { arn: ARN })))!)).toEqual(DATA_KEY);
    expect(srv.seen).toHaveLength(2);
  });

  it('gives up after the second 5xx and reports the last answer', async () => {
    const srv = await aws({ kms: () => ({ status: 500, body: { __type: 'KMSInternalException', message: 'down' } }) });
    const service = awsKmsKeyService(undefined, { ...ENV_CREDS, AWS_ENDPOINT_URL: srv.url });
    const err = await rejection(service.decrypt(key('kms', ENC, { arn: ARN })));
    expect(err.message).toContain('HTTP 500 (KMSInternalException: down)');
    expect(srv.seen).toHaveLength(2);
  });

  it('a network error names the endpoint and the reason after one retry', async () => {
    const url = await closedPort();
    const service = awsKmsKeyService(undefined, { ...ENV_CREDS, AWS_ENDPOINT_URL: url });
    const err = await rejection(service.decrypt(key('kms', ENC, { arn: ARN })));
    expect(err.message).toBe(`AWS KMS key ${ARN}: AWS KMS Decrypt: ${new URL(url).host}: fetch failed (ECONNREFUSED)`);
  });

  it.each([
    { why: 'no credentials anywhere', fields: { arn: ARN }, enc: ENC, env: {}, want: 'no AWS credentials' },
    {
      why: 'an ARN that is not a KMS key',
      fields: { arn: 'arn:aws:s3:::bucket' },
      enc: ENC,
      env: ENV_CREDS,
      want: 'not a KMS key ARN',
    },
    { why: 'no arn', fields: {}, enc: ENC, env: ENV_CREDS, want: 'the master key has no arn' },
    { why: 'enc not base64', fields: { arn: ARN }, enc: 'not base64!', env: ENV_CREDS, want: 'enc is not base64' },
    {
      why: 'a context value that is not a string',
      fields: { arn: ARN, context: { n: 1 } },
      enc: ENC,
      env: ENV_CREDS,
      want: 'context value of "n" is not a string',
    },
  ])('refuses before any request: $why', async ({ fields, enc, env, want }) => {
    const srv = await aws();
    const service = awsKmsKeyService(undefined, { ...env, AWS_ENDPOINT_URL: srv.url });
    const err = await rejection(service.decrypt(key('kms', enc, fields)));
    expect(err.message).toContain('AWS KMS key ');
    expect(err.message).toContain(want);
    expect(srv.seen).toHaveLength(0);
  });

  it('rejects a plaintext that is not a 32-byte data key', async () => {
    const srv = await aws({
      kms: () => ({ body: { KeyId: ARN, Plaintext: Buffer.from('short').toString('base64') } }),
    });
    const service = awsKmsKeyService(undefined, { ...ENV_CREDS, AWS_ENDPOINT_URL: srv.url });
    await expect(service.decrypt(key('kms', ENC, { arn: ARN }))).rejects.toThrow(
      `AWS KMS key ${ARN}: the decrypted data key is 5 bytes, not the 32 bytes SOPS uses`,
    );
  });
});

// ---- GCP -------------------------------------------------------------------------------------------

describe('GCP KMS key service', () => {
  const RESOURCE = 'projects/my-project/locations/global/keyRings/my-keyring/cryptoKeys/my-key';
  const ENC = Buffer.from('a Cloud KMS ciphertext').toString('base64');
  // "Using OAuth 2.0 for Server to Server Applications", the access token response.
  const GOOGLE_TOKEN = '1/8xbJqaOZXSUZbHLl5EOtu1pxz3fmmetKx9W8CV4t79M';
  let keys: { privateKey: KeyObject; pem: string; publicKey: KeyObject };

  beforeAll(() => {
    const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
    keys = {
      privateKey: pair.privateKey,
      publicKey: pair.publicKey,
      pem: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    };
  });

  /** Token endpoints and Cloud KMS on one port; KMS answers as projects.locations.keyRings.cryptoKeys.decrypt. */
  function gcp(kms?: (s: Seen) => Reply) {
    return loopback((s) => {
      const path = new URL(s.path, 'http://x').pathname;
      if (path === '/token') {
        return {
          body: {
            access_token: GOOGLE_TOKEN,
            scope: 'https://www.googleapis.com/auth/cloud-platform',
            token_type: 'Bearer',
            expires_in: 3600,
          },
        };
      }
      if (path === '/sts/v1/token') {
        return {
          body: {
            access_token: 'federated-access-token',
            issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
            token_type: 'Bearer',
            expires_in: 3599,
          },
        };
      }
      if (path.endsWith(':generateAccessToken')) {
        return { body: { accessToken: 'impersonated-access-token', expireTime: '2099-01-01T00:00:00Z' } };
      }
      if (path === '/github-oidc') return { body: { count: 1, value: 'github-oidc-jwt' } };
      if (path.endsWith(':decrypt')) {
        if (kms) return kms(s);
        return {
          body: {
            plaintext: DATA_KEY.toString('base64'),
            plaintextCrc32c: '2941217183',
            usedPrimary: true,
            protectionLevel: 'SOFTWARE',
          },
        };
      }
      return { status: 404, body: { error: { code: 404, message: 'no route', status: 'NOT_FOUND' } } };
    });
  }

  const serviceAccount = (tokenUri: string) =>
    JSON.stringify({
      type: 'service_account',
      project_id: 'my-project',
      private_key_id: 'abc123keyid',
      private_key: keys.pem,
      client_email: 'sops@my-project.iam.gserviceaccount.com',
      client_id: '1234567890',
      token_uri: tokenUri,
    });

  function verifyJwt(jwt: string): { header: Record<string, unknown>; claims: Record<string, unknown> } {
    const [h, c, sig] = jwt.split('.');
    const ok = createVerify('RSA-SHA256').update(`${h}.${c}`).verify(keys.publicKey, Buffer.from(sig!, 'base64url'));
    expect(ok).toBe(true);
    return {
      header: JSON.parse(Buffer.from(h!, 'base64url').toString()) as Record<string, unknown>,
      claims: JSON.parse(Buffer.from(c!, 'base64url').toString()) as Record<string, unknown>,
    };
  }

  it('service account key: JWT bearer grant (RS256), then POST v1/{resource}:decrypt with {ciphertext}', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: new Date('2026-01-15T10:00:00Z') });
    const srv = await gcp();
    const service = gcpKmsKeyService(serviceAccount(`${srv.url}/token`), {
      KR_GCP_KMS_ENDPOINT: srv.url,
      KR_TEST_KMS_ENDPOINTS: srv.url,
    });
    const got = await service.decrypt(key('gcp_kms', ENC, { resource_id: RESOURCE }));
    expect(Buffer.from(got!)).toEqual(DATA_KEY);
    const [token, kms] = srv.seen;
    expect([token!.method, token!.path, token!.headers['content-type']]).toEqual([
      'POST',
      '/token',
      'application/x-www-form-urlencoded',
    ]);
    const f = form(token!.body);
    expect(f['grant_type']).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
    const { header, claims } = verifyJwt(f['assertion']!);
    expect(header).toEqual({ alg: 'RS256', typ: 'JWT', kid: 'abc123keyid' });
    const now = Date.parse('2026-01-15T10:00:00Z') / 1000;
    expect(claims).toEqual({
      iss: 'sops@my-project.iam.gserviceaccount.com',
      scope: 'https://www.googleapis.com/auth/cloud-platform',
      aud: `${srv.url}/token`,
      iat: now,
      exp: now + 3600,
    });
    expect([kms!.method, kms!.path]).toEqual(['POST', `/v1/${RESOURCE}:decrypt`]);
    expect(kms!.headers['authorization']).toBe(`Bearer ${GOOGLE_TOKEN}`);
    expect(json(kms!.body)).toEqual({ ciphertext: ENC });
  });

  it('caches the access token across keys', async () => {
    const srv = await gcp();
    const service = gcpKmsKeyService(serviceAccount(`${srv.url}/token`), {
      KR_GCP_KMS_ENDPOINT: srv.url,
      KR_TEST_KMS_ENDPOINTS: srv.url,
    });
    await service.decrypt(key('gcp_kms', ENC, { resource_id: RESOURCE }));
    await service.decrypt(key('gcp_kms', ENC, { resource_id: RESOURCE.replace('my-key', 'other') }));
    expect(srv.seen.map((s) => s.path.split(':').pop())).toEqual(['/token', 'decrypt', 'decrypt']);
  });

  it('authorized_user credentials: refresh-token grant; quota_project_id goes in x-goog-user-project', async () => {
    const srv = await gcp();
    const creds = JSON.stringify({
      type: 'authorized_user',
      client_id: 'client.apps.googleusercontent.com',
      client_secret: 'd-FL95Q19q7MQmFpd7hHD0Ty',
      refresh_token: '1//refresh-token',
      quota_project_id: 'billing-project',
      token_uri: `${srv.url}/token`,
    });
    const service = gcpKmsKeyService(creds, { KR_GCP_KMS_ENDPOINT: srv.url, KR_TEST_KMS_ENDPOINTS: srv.url });
    await service.decrypt(key('gcp_kms', ENC, { resource_id: RESOURCE }));
    expect(form(srv.seen[0]!.body)).toEqual({
      grant_type: 'refresh_token',
      client_id: 'client.apps.googleusercontent.com',
      client_secret: 'd-FL95Q19q7MQmFpd7hHD0Ty',
      refresh_token: '1//refresh-token',
    });
    expect(srv.seen[1]!.headers['x-goog-user-project']).toBe('billing-project');
  });

  it('external_account as google-github-actions/auth writes it: URL source (json), STS exchange, impersonation', async () => {
    const srv = await gcp();
    const dir = await mkdtemp(join(tmpdir(), 'kms-test-'));
    try {
      const audience =
        '//iam.googleapis.com/projects/123456789/locations/global/workloadIdentityPools/my-pool/providers/my-provider';
      const file = join(dir, 'gha-creds.json');
      await writeFile(
        file,
        JSON.stringify({
          type: 'external_account',
          audience,
          subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
          token_url: `${srv.url}/sts/v1/token`,
          service_account_impersonation_url: `${srv.url}/v1/projects/-/serviceAccounts/sops@my-project.iam.gserviceaccount.com:generateAccessToken`,
          credential_source: {
            url: `${srv.url}/github-oidc?api-version=2.0&audience=https://iam.googleapis.com${audience.slice(1)}`,
            headers: { Authorization: 'Bearer actions-runtime-token' },
            format: { type: 'json', subject_token_field_name: 'value' },
          },
        }),
      );
      const service = gcpKmsKeyService(undefined, {
        GOOGLE_APPLICATION_CREDENTIALS: file,
        KR_GCP_KMS_ENDPOINT: srv.url,
      });
      expect(Buffer.from((await service.decrypt(key('gcp_kms', ENC, { resource_id: RESOURCE })))!)).toEqual(DATA_KEY);
      const [oidc, sts, impersonate, kms] = srv.seen;
      expect(oidc!.headers['authorization']).toBe('Bearer actions-runtime-token');
      expect(form(sts!.body)).toEqual({
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        audience,
        scope: 'https://www.googleapis.com/auth/cloud-platform',
        requested_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        subject_token: 'github-oidc-jwt',
        subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
      });
      expect(impersonate!.headers['authorization']).toBe('Bearer federated-access-token');
      expect(json(impersonate!.body)).toEqual({
        scope: ['https://www.googleapis.com/auth/cloud-platform'],
        lifetime: '3600s',
      });
      expect(kms!.headers['authorization']).toBe('Bearer impersonated-access-token');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('external_account with a file source (text) and no impersonation uses the federated token', async () => {
    const srv = await gcp();
    const dir = await mkdtemp(join(tmpdir(), 'kms-test-'));
    try {
      await writeFile(join(dir, 'oidc'), 'file-subject-token\n');
      const creds = JSON.stringify({
        type: 'external_account',
        audience: '//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/q',
        subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
        token_url: `${srv.url}/sts/v1/token`,
        credential_source: { file: join(dir, 'oidc') },
      });
      // From the runner's environment (GOOGLE_CREDENTIALS), not from a decryption Secret.
      const service = gcpKmsKeyService(undefined, { GOOGLE_CREDENTIALS: creds, KR_GCP_KMS_ENDPOINT: srv.url });
      await service.decrypt(key('gcp_kms', ENC, { resource_id: RESOURCE }));
      expect(form(srv.seen[0]!.body)['subject_token']).toBe('file-subject-token');
      expect(form(srv.seen[0]!.body)['subject_token_type']).toBe('urn:ietf:params:oauth:token-type:id_token');
      expect(srv.seen[1]!.headers['authorization']).toBe('Bearer federated-access-token');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('external_account credentials in the decryption Secret are refused: the source is not read, nothing is sent', async () => {
    const srv = await gcp();
    const dir = await mkdtemp(join(tmpdir(), 'kms-test-'));
    try {
      await writeFile(join(dir, 'environ'), 'INPUT_KUBECONFIG=not-to-be-read\n');
      const creds = JSON.stringify({
        type: 'external_account',
        audience: '//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/q',
        subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
        token_url: `${srv.url}/sts/v1/token`,
        credential_source: { file: join(dir, 'environ') },
      });
      // Even the test-only override does not admit them: the refusal is about the credential source.
      const service = gcpKmsKeyService(creds, { KR_GCP_KMS_ENDPOINT: srv.url, KR_TEST_KMS_ENDPOINTS: srv.url });
      const err = await rejection(service.decrypt(key('gcp_kms', ENC, { resource_id: RESOURCE })));
      expect(err.message).toContain(
        `GCP KMS key ${RESOURCE}: the sops.gcp-kms credentials: external_account credentials are refused in a decryption Secret`,
      );
      expect(err.message).toContain('their credential_source would make the runner read a local file and send it on');
      expect(err.message).toContain('nothing was read and no request was sent');
      expect(srv.seen).toHaveLength(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it.each([
    { type: 'service_account', field: 'token_uri' },
    { type: 'authorized_user', field: 'token_uri' },
  ])('$type credentials in the decryption Secret whose $field is not Google’s: nothing is sent', async ({ type }) => {
    const srv = await gcp();
    const creds =
      type === 'service_account'
        ? serviceAccount(`${srv.url}/token`)
        : JSON.stringify({
            type,
            client_id: 'c',
            client_secret: 'client-secret',
            refresh_token: 'r',
            token_uri: `${srv.url}/token`,
          });
    const service = gcpKmsKeyService(creds, { KR_GCP_KMS_ENDPOINT: srv.url });
    const err = await rejection(service.decrypt(key('gcp_kms', ENC, { resource_id: RESOURCE })));
    expect(err.message).toContain(`refused to contact ${srv.host} (from token_uri)`);
    expect(err.message).toContain('no request was sent');
    expect(srv.seen).toHaveLength(0);
  });

  it.each([
    {
      why: 'sops.gcp-kms wins over every variable',
      explicit: true,
      env: { GOOGLE_OAUTH_ACCESS_TOKEN: 'env-token' },
      want: `Bearer ${GOOGLE_TOKEN}`,
    },
    {
      why: 'GOOGLE_OAUTH_ACCESS_TOKEN as it is',
      explicit: false,
      env: { GOOGLE_OAUTH_ACCESS_TOKEN: ' ya29.env-token\n' },
      want: 'Bearer ya29.env-token',
    },
    {
      why: 'GOOGLE_CREDENTIALS holding the JSON itself (SOPS’s variable)',
      explicit: false,
      env: { GOOGLE_CREDENTIALS: 'SA' },
      want: `Bearer ${GOOGLE_TOKEN}`,
    },
  ])('credential order: $why', async ({ explicit, env, want }) => {
    const srv = await gcp();
    const sa = serviceAccount(`${srv.url}/token`);
    const e: NodeJS.ProcessEnv = { ...env, KR_GCP_KMS_ENDPOINT: srv.url, KR_TEST_KMS_ENDPOINTS: srv.url };
    if (e['GOOGLE_CREDENTIALS'] === 'SA') e['GOOGLE_CREDENTIALS'] = sa;
    const service = gcpKmsKeyService(explicit ? sa : undefined, e);
    await service.decrypt(key('gcp_kms', ENC, { resource_id: RESOURCE }));
    expect(srv.seen.at(-1)!.headers['authorization']).toBe(want);
  });

  it('KMS errors name the resource id, the status and Google’s status and message, never the token', async () => {
    const srv = await gcp(() => ({
      status: 403,
      body: {
        error: {
          code: 403,
          message: `Permission 'cloudkms.cryptoKeyVersions.useToDecrypt' denied on resource '${RESOURCE}' (token ya29.leaked)`,
          status: 'PERMISSION_DENIED',
        },
      },
    }));
    const service = gcpKmsKeyService(undefined, {
      GOOGLE_OAUTH_ACCESS_TOKEN: 'ya29.leaked',
      KR_GCP_KMS_ENDPOINT: srv.url,
    });
    const err = await rejection(service.decrypt(key('gcp_kms', ENC, { resource_id: RESOURCE })));
    expect(err.message).toContain(`GCP KMS key ${RESOURCE}: decrypt failed: HTTP 403 (PERMISSION_DENIED: Permission`);
    expect(err.message).not.toContain('ya29.leaked');
  });

  it('a token endpoint error names the service account and OAuth’s error', async () => {
    const srv = await loopback(() => ({
      status: 400,
      body: { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' },
    }));
    const service = gcpKmsKeyService(serviceAccount(`${srv.url}/token`), {
      KR_GCP_KMS_ENDPOINT: srv.url,
      KR_TEST_KMS_ENDPOINTS: srv.url,
    });
    const err = await rejection(service.decrypt(key('gcp_kms', ENC, { resource_id: RESOURCE })));
    expect(err.message).toBe(
      `GCP KMS key ${RESOURCE}: service account sops@my-project.iam.gserviceaccount.com: token request to ` +
        `${srv.url}/token failed: HTTP 400 (invalid_grant: Invalid JWT Signature.)`,
    );
  });

  it.each([
    { why: 'no credentials', creds: undefined, env: {}, fields: { resource_id: RESOURCE }, want: 'no GCP credentials' },
    {
      why: 'a malformed resource id',
      creds: undefined,
      env: { GOOGLE_OAUTH_ACCESS_TOKEN: 't' },
      fields: { resource_id: 'projects/p/keys/k' },
      want: 'not a key resource id',
    },
    {
      why: 'an unsupported credentials type',
      creds: '{"type":"impersonated_service_account"}',
      env: {},
      fields: { resource_id: RESOURCE },
      want: 'credentials of type "impersonated_service_account" are not supported',
    },
    {
      why: 'credentials that are not JSON',
      creds: 'not json',
      env: {},
      fields: { resource_id: RESOURCE },
      want: 'not a JSON credentials file',
    },
  ])('refuses: $why', async ({ creds, env, fields, want }) => {
    const srv = await gcp();
    const service = gcpKmsKeyService(creds, { ...env, KR_GCP_KMS_ENDPOINT: srv.url });
    const err = await rejection(service.decrypt(key('gcp_kms', ENC, fields)));
    expect(err.message).toMatch(/^GCP KMS key /);
    expect(err.message).toContain(want);
    expect(srv.seen).toHaveLength(0);
  });
});

// ---- Azure -----------------------------------------------------------------------------------------

describe('Azure Key Vault key service', () => {
  const TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47';
  const CLIENT = '535fb089-9ff3-47b6-9bfb-4f1264799865';
  // The base64url ciphertext SOPS writes (RawURLEncoding: no padding).
  const ENC = Buffer.from('an RSA-OAEP-256 ciphertext of the data key').toString('base64url');
  // "Microsoft identity platform and the OAuth 2.0 client credentials flow": the token response.
  const ENTRA_TOKEN =
    'eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiIsIng1dCI6Ik1uQ19WWmNBVGZNNXBPWWlKSE1iYTlnb0VLWSJ9.eyJhdWQiOiJodHRwczovL3ZhdWx0LmF6dXJlLm5ldCJ9.sig';

  function azure(kv?: (s: Seen) => Reply) {
    return loopback((s) => {
      const u = new URL(s.path, 'http://x');
      if (u.pathname.endsWith('/oauth2/v2.0/token')) {
        return { body: { token_type: 'Bearer', expires_in: 3599, ext_expires_in: 3599, access_token: ENTRA_TOKEN } };
      }
      if (u.pathname === '/msi' || u.pathname === '/metadata/identity/oauth2/token') {
        return {
          body: {
            access_token: 'managed-identity-token',
            expires_on: '4102444800',
            resource: 'https://vault.azure.net',
            token_type: 'Bearer',
          },
        };
      }
      if (u.pathname === '/github-oidc') return { body: { value: 'github-oidc-jwt' } };
      if (u.pathname.endsWith('/decrypt')) {
        if (kv) return kv(s);
        // Key Vault REST "Decrypt": KeyOperationResult {kid, value (base64url)}.
        return {
          body: {
            kid: 'https://myvault.vault.azure.net/keys/sops-key/78deebed173b48e48f55abf87ed4cf71',
            value: DATA_KEY.toString('base64url'),
          },
        };
      }
      return { status: 404, body: { error: { code: 'NotFound', message: 'no route' } } };
    });
  }

  /** TEST-ONLY: admits the loopback fake vault as a Key Vault host (KR_TEST_KMS_ENDPOINTS). */
  const testHost = (srv: Loopback) => ({ KR_TEST_KMS_ENDPOINTS: srv.url });

  it('a vault_url outside Key Vault’s domains gets neither a token request nor a decrypt request', async () => {
    const srv = await azure();
    const service = azureKeyVaultKeyService(
      JSON.stringify({ tenantId: TENANT, clientId: CLIENT, clientSecret: 'sampleCredentia1s', authorityHost: srv.url }),
      {},
    );
    const err = await rejection(service.decrypt(kvKey(srv.url)));
    expect(err.message).toBe(
      `Azure Key Vault key ${srv.url}/keys/sops-key/78deebed173b48e48f55abf87ed4cf71: refused to contact ${srv.host} ` +
        '(from vault_url): not an Azure Key Vault host (<name>.vault.azure.net, <name>.vault.azure.cn, ' +
        '<name>.vault.usgovcloudapi.net, <name>.managedhsm.azure.net, <name>.managedhsm.azure.cn, ' +
        '<name>.managedhsm.usgovcloudapi.net): it is http://, not https://; no request was sent',
    );
    expect(srv.seen).toHaveLength(0);
  });

  const kvKey = (url: string) =>
    key('azure_kv', ENC, { vault_url: url, name: 'sops-key', version: '78deebed173b48e48f55abf87ed4cf71' });

  it('client secret: client credentials grant, then POST keys/{name}/{version}/decrypt?api-version=7.4', async () => {
    const srv = await azure();
    const service = azureKeyVaultKeyService(
      JSON.stringify({ tenantId: TENANT, clientId: CLIENT, clientSecret: 'sampleCredentia1s', authorityHost: srv.url }),
      testHost(srv),
    );
    expect(Buffer.from((await service.decrypt(kvKey(srv.url)))!)).toEqual(DATA_KEY);
    const [token, kv] = srv.seen;
    expect([token!.method, token!.path, token!.headers['content-type']]).toEqual([
      'POST',
      `/${TENANT}/oauth2/v2.0/token`,
      'application/x-www-form-urlencoded',
    ]);
    expect(form(token!.body)).toEqual({
      client_id: CLIENT,
      scope: 'https://vault.azure.net/.default',
      client_secret: 'sampleCredentia1s',
      grant_type: 'client_credentials',
    });
    expect([kv!.method, kv!.path]).toEqual([
      'POST',
      '/keys/sops-key/78deebed173b48e48f55abf87ed4cf71/decrypt?api-version=7.4',
    ]);
    expect(kv!.headers['authorization']).toBe(`Bearer ${ENTRA_TOKEN}`);
    expect(json(kv!.body)).toEqual({ alg: 'RSA-OAEP-256', value: ENC });
  });

  it.each([
    {
      why: 'az-CLI output {appId, password, tenant} as YAML',
      config: (u: string) => `appId: ${CLIENT}\npassword: az-cli-password\ntenant: ${TENANT}\nauthorityHost: ${u}\n`,
      env: {},
      want: { client_id: CLIENT, client_secret: 'az-cli-password', grant_type: 'client_credentials' },
    },
    {
      why: 'AZURE_TENANT_ID, AZURE_CLIENT_ID and AZURE_CLIENT_SECRET with AZURE_AUTHORITY_HOST',
      config: undefined,
      env: { AZURE_TENANT_ID: TENANT, AZURE_CLIENT_ID: CLIENT, AZURE_CLIENT_SECRET: 'env-secret' },
      want: { client_id: CLIENT, client_secret: 'env-secret', grant_type: 'client_credentials' },
    },
  ])('credentials: $why', async ({ config, env, want }) => {
    const srv = await azure();
    const service = azureKeyVaultKeyService(config?.(srv.url), {
      ...env,
      AZURE_AUTHORITY_HOST: srv.url,
      ...testHost(srv),
    });
    await service.decrypt(kvKey(srv.url));
    expect(srv.seen[0]!.path).toBe(`/${TENANT}/oauth2/v2.0/token`);
    expect(form(srv.seen[0]!.body)).toMatchObject({ ...want, scope: 'https://vault.azure.net/.default' });
  });

  it.each([
    { why: 'AZURE_FEDERATED_TOKEN_FILE', viaFile: true },
    { why: 'the GitHub OIDC token (audience api://AzureADTokenExchange)', viaFile: false },
  ])('federated credential from $why: the token is the client assertion', async ({ viaFile }) => {
    const srv = await azure();
    const dir = await mkdtemp(join(tmpdir(), 'kms-test-'));
    try {
      await writeFile(join(dir, 'token'), 'projected-federated-token\n');
      const env: NodeJS.ProcessEnv = {
        AZURE_TENANT_ID: TENANT,
        AZURE_CLIENT_ID: CLIENT,
        AZURE_AUTHORITY_HOST: srv.url,
        ...testHost(srv),
      };
      if (viaFile) env['AZURE_FEDERATED_TOKEN_FILE'] = join(dir, 'token');
      else {
        env['ACTIONS_ID_TOKEN_REQUEST_URL'] = `${srv.url}/github-oidc?api-version=2.0`;
        env['ACTIONS_ID_TOKEN_REQUEST_TOKEN'] = 'runtime-bearer';
      }
      const service = azureKeyVaultKeyService(undefined, env);
      await service.decrypt(kvKey(srv.url));
      const tokenReq = srv.seen.find((s) => s.path.endsWith('/oauth2/v2.0/token'))!;
      expect(form(tokenReq.body)).toEqual({
        client_id: CLIENT,
        scope: 'https://vault.azure.net/.default',
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        client_assertion: viaFile ? 'projected-federated-token' : 'github-oidc-jwt',
        grant_type: 'client_credentials',
      });
      if (!viaFile) {
        expect(new URL(srv.seen[0]!.path, srv.url).searchParams.get('audience')).toBe('api://AzureADTokenExchange');
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  describe('client certificate', () => {
    let dir: string;
    let pem: string;
    let thumbprint: string;
    let publicKey: KeyObject;

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'kms-cert-'));
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-days',
          '2',
          '-subj',
          '/CN=sops-test',
          '-keyout',
          join(dir, 'key.pem'),
          '-out',
          join(dir, 'cert.pem'),
        ],
        { stdio: 'ignore' },
      );
      const cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
      pem = `${readFileSync(join(dir, 'key.pem'), 'utf8')}${cert}`;
      const x = new X509Certificate(cert);
      thumbprint = createHash('sha1').update(x.raw).digest('base64url');
      publicKey = createPublicKey(cert);
    });

    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it.each([{ sendChain: false }, { sendChain: true }])(
      'signs a client assertion (RS256, x5t, x5c when sendChain=$sendChain) for the token endpoint',
      async ({ sendChain }) => {
        const srv = await azure();
        const service = azureKeyVaultKeyService(
          JSON.stringify({
            tenantId: TENANT,
            clientId: CLIENT,
            clientCertificate: pem,
            clientCertificateSendChain: sendChain,
            authorityHost: srv.url,
          }),
          testHost(srv),
        );
        await service.decrypt(kvKey(srv.url));
        const f = form(srv.seen[0]!.body);
        expect(f['client_assertion_type']).toBe('urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
        expect(f['client_secret']).toBeUndefined();
        const [h, c, sig] = f['client_assertion']!.split('.');
        expect(createVerify('RSA-SHA256').update(`${h}.${c}`).verify(publicKey, Buffer.from(sig!, 'base64url'))).toBe(
          true,
        );
        const header = JSON.parse(Buffer.from(h!, 'base64url').toString()) as Record<string, unknown>;
        const claims = JSON.parse(Buffer.from(c!, 'base64url').toString()) as Record<string, number | string>;
        expect(header['alg']).toBe('RS256');
        expect(header['x5t']).toBe(thumbprint);
        expect(Array.isArray(header['x5c'])).toBe(sendChain);
        expect(claims).toMatchObject({ aud: `${srv.url}/${TENANT}/oauth2/v2.0/token`, iss: CLIENT, sub: CLIENT });
        expect(Number(claims['exp']) - Number(claims['nbf'])).toBe(600);
        expect(String(claims['jti'])).toMatch(/^[0-9a-f-]{36}$/);
      },
    );
  });

  it.each([
    {
      why: 'sops.azure-kv {clientId} at the IMDS (Metadata: true, 2018-02-01)',
      env: (u: string) => ({ AZURE_POD_IDENTITY_AUTHORITY_HOST: u }),
      path: '/metadata/identity/oauth2/token',
      header: ['metadata', 'true'],
      apiVersion: '2018-02-01',
    },
    {
      why: 'sops.azure-kv {clientId} at IDENTITY_ENDPOINT (X-IDENTITY-HEADER, 2019-08-01)',
      env: (u: string) => ({ IDENTITY_ENDPOINT: `${u}/msi`, IDENTITY_HEADER: 'identity-header-secret' }),
      path: '/msi',
      header: ['x-identity-header', 'identity-header-secret'],
      apiVersion: '2019-08-01',
    },
  ])('managed identity: $why', async ({ env, path, header, apiVersion }) => {
    const srv = await azure();
    const service = azureKeyVaultKeyService(JSON.stringify({ clientId: CLIENT }), {
      ...env(srv.url),
      ...testHost(srv),
    });
    await service.decrypt(kvKey(srv.url));
    const req = srv.seen[0]!;
    const u = new URL(req.path, srv.url);
    expect([req.method, u.pathname]).toEqual(['GET', path]);
    expect(Object.fromEntries(u.searchParams)).toEqual({
      'api-version': apiVersion,
      resource: 'https://vault.azure.net',
      client_id: CLIENT,
    });
    expect(req.headers[header[0]!]).toBe(header[1]);
    expect(srv.seen[1]!.headers['authorization']).toBe('Bearer managed-identity-token');
  });

  it('the Azure CLI (as azure/login leaves it) when nothing else is configured', async () => {
    const srv = await azure();
    const dir = await mkdtemp(join(tmpdir(), 'kms-az-'));
    try {
      await writeFile(
        join(dir, 'az'),
        `#!/bin/sh\necho "$@" > '${join(dir, 'args')}'\n` +
          'printf \'{"accessToken":"az-cli-token","expiresOn":"2099-01-01 00:00:00.000000","expires_on":4070908800,' +
          '"subscription":"s","tenant":"t","tokenType":"Bearer"}\'\n',
      );
      await chmod(join(dir, 'az'), 0o755);
      const service = azureKeyVaultKeyService(undefined, { PATH: dir, ...testHost(srv) });
      await service.decrypt(kvKey(srv.url));
      expect(readFileSync(join(dir, 'args'), 'utf8').trim()).toBe(
        'account get-access-token --resource https://vault.azure.net --output json',
      );
      expect(srv.seen[0]!.headers['authorization']).toBe('Bearer az-cli-token');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it.each(['https://k.vault.x&calc&.net', 'https://k.vault.a"b.net', 'https://k.vault.a(b)!c.net'])(
    'never runs the Azure CLI for a vault_url host that cmd.exe would read as commands: %s',
    async (vaultUrl) => {
      const dir = await mkdtemp(join(tmpdir(), 'kms-az-'));
      try {
        await writeFile(join(dir, 'az'), `#!/bin/sh\necho ran > '${join(dir, 'ran')}'\n`);
        await chmod(join(dir, 'az'), 0o755);
        const service = azureKeyVaultKeyService(undefined, { PATH: dir });
        const err = await rejection(service.decrypt(kvKey(vaultUrl)));
        // The host is not a Key Vault host, so no token is asked for (CLI_RESOURCE stays as a second guard).
        expect(err.message).toContain('not an Azure Key Vault host');
        expect(existsSync(join(dir, 'ran'))).toBe(false);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  );

  it.each([
    ['https://vault.azure.net', true],
    ['https://managedhsm.azure.net', true],
    ['https://vault.x&calc&.net', false],
    ['http://vault.azure.net', false],
    ['https://vault.azure.net/', false],
    ['https://-x.net', false],
    ['https://vault.azure.net:443', false],
  ])('CLI_RESOURCE %s → %s', (resource, ok) => {
    expect(CLI_RESOURCE.test(resource)).toBe(ok);
  });

  it('without az on PATH, says which credentials it looked for', async () => {
    const srv = await azure();
    const service = azureKeyVaultKeyService(undefined, { PATH: '/nonexistent', ...testHost(srv) });
    const err = await rejection(service.decrypt(kvKey(srv.url)));
    expect(err.message).toContain(
      `Azure Key Vault key ${srv.url}/keys/sops-key/78deebed173b48e48f55abf87ed4cf71: no Azure credentials`,
    );
    expect(srv.seen).toHaveLength(0);
  });

  it('a Key Vault error names the key, the status and the error code and message', async () => {
    const srv = await azure(() => ({
      status: 403,
      body: {
        error: {
          code: 'Forbidden',
          message:
            "The user, group or application 'appid=...' does not have keys decrypt permission on key vault 'myvault'.",
          innererror: { code: 'ForbiddenByPolicy' },
        },
      },
    }));
    const service = azureKeyVaultKeyService(undefined, {
      AZURE_TENANT_ID: TENANT,
      AZURE_CLIENT_ID: CLIENT,
      AZURE_CLIENT_SECRET: 'env-secret',
      AZURE_AUTHORITY_HOST: srv.url,
      ...testHost(srv),
    });
    const err = await rejection(service.decrypt(kvKey(srv.url)));
    expect(err.message).toBe(
      `Azure Key Vault key ${srv.url}/keys/sops-key/78deebed173b48e48f55abf87ed4cf71: decrypt failed: HTTP 403 ` +
        "(Forbidden: The user, group or application 'appid=...' does not have keys decrypt permission on key vault 'myvault'.)",
    );
  });

  it('an Entra error keeps the AADSTS line and drops the secret', async () => {
    const srv = await loopback(() => ({
      status: 401,
      body: {
        error: 'invalid_client',
        error_description:
          "AADSTS7000215: Invalid client secret provided. Ensure the secret being sent is the client secret value, not 'sampleCredentia1s'.\r\nTrace ID: 0000\r\nCorrelation ID: 1111",
        error_codes: [7000215],
      },
    }));
    const service = azureKeyVaultKeyService(
      JSON.stringify({ tenantId: TENANT, clientId: CLIENT, clientSecret: 'sampleCredentia1s', authorityHost: srv.url }),
      testHost(srv),
    );
    const err = await rejection(service.decrypt(kvKey(srv.url)));
    expect(err.message).toContain(
      `service principal ${CLIENT} (client secret): token request to ${srv.host} failed: HTTP 401`,
    );
    expect(err.message).toContain('invalid_client: AADSTS7000215: Invalid client secret provided.');
    expect(err.message).not.toContain('sampleCredentia1s');
    expect(err.message).not.toContain('Trace ID');
  });

  it.each([
    {
      why: 'a config with no usable fields',
      config: '{"tenantId": "t"}',
      want: "sops.azure-kv: requires a 'clientId' field",
    },
    {
      why: 'a config that is not an object',
      config: '- a\n- b\n',
      want: 'sops.azure-kv: expected a JSON or YAML object',
    },
  ])('refuses: $why', async ({ config, want }) => {
    const srv = await azure();
    const service = azureKeyVaultKeyService(config, testHost(srv));
    await expect(service.decrypt(kvKey(srv.url))).rejects.toThrow(want);
    expect(srv.seen).toHaveLength(0);
  });

  it('rejects enc that is not base64url before any request', async () => {
    const srv = await azure();
    const service = azureKeyVaultKeyService(undefined, {
      AZURE_TENANT_ID: TENANT,
      AZURE_CLIENT_ID: CLIENT,
      AZURE_CLIENT_SECRET: 's',
      ...testHost(srv),
    });
    await expect(
      service.decrypt(key('azure_kv', 'a+b/c=', { vault_url: srv.url, name: 'k', version: 'v' })),
    ).rejects.toThrow('enc is not base64url');
    expect(srv.seen).toHaveLength(0);
  });
});

// ---- Vault -----------------------------------------------------------------------------------------

describe('Vault transit key service', () => {
  // Vault API docs, Transit secrets engine, "Decrypt data": the sample payload and response.
  const DOC_CIPHERTEXT = 'vault:v1:XjsPWPjqPrBi1N2Ms2s1QM798YyFWnO4TR4lsFA=';
  const DOC_PLAINTEXT = 'dGhlIHF1aWNrIGJyb3duIGZveAo=';

  function vault(reply?: (s: Seen) => Reply) {
    return loopback((s) => reply?.(s) ?? { body: { data: { plaintext: DATA_KEY.toString('base64') } } });
  }
  /** The fake Vault's address, as the sops-vault-addresses input lists it. */
  const listed = (srv: Loopback) => [normalizeVaultAddress(srv.url)];

  it.each([
    { why: 'the input is empty', allowed: () => [] as string[], want: 'no Vault address is allowed: list' },
    {
      why: 'another address is listed',
      allowed: () => [normalizeVaultAddress('https://vault.example.com:8200')],
      want: 'is not listed in the sops-vault-addresses input (CLI --sops-vault-addresses)',
    },
  ])('an address not in sops-vault-addresses is not contacted ($why)', async ({ allowed, want }) => {
    const srv = await vault();
    const err = await rejection(vaultTransitKeyService('s.secret-token', {}, allowed()).decrypt(vKey(srv.url)));
    expect(err.message).toContain(`Vault transit key ${srv.url}/v1/sops/keys/firstkey: refused to contact ${srv.host}`);
    expect(err.message).toContain(want);
    expect(err.message).toContain('no request was sent');
    expect(srv.seen).toHaveLength(0);
  });

  const vKey = (address: string, enginePath = 'sops') =>
    key('hc_vault', DOC_CIPHERTEXT, { vault_address: address, engine_path: enginePath, key_name: 'firstkey' });

  it.each([
    {
      why: 'sops.vault-token, trimmed',
      token: '  s.flux-secret-token\n',
      env: { VAULT_TOKEN: 'env' },
      want: 's.flux-secret-token',
    },
    { why: 'VAULT_TOKEN without one', token: undefined, env: { VAULT_TOKEN: 'hvs.env-token' }, want: 'hvs.env-token' },
  ])(
    'POST {address}/v1/{engine}/decrypt/{key} with {ciphertext} and X-Vault-Token: $why',
    async ({ token, env, want }) => {
      const srv = await vault();
      const service = vaultTransitKeyService(token, env, listed(srv));
      expect(Buffer.from((await service.decrypt(vKey(`${srv.url}/`)))!)).toEqual(DATA_KEY);
      const s = srv.seen[0]!;
      expect([s.method, s.path]).toEqual(['POST', '/v1/sops/decrypt/firstkey']);
      expect(s.headers['x-vault-token']).toBe(want);
      expect(s.headers['x-vault-namespace']).toBeUndefined();
      expect(json(s.body)).toEqual({ ciphertext: DOC_CIPHERTEXT });
    },
  );

  it('a nested engine path and VAULT_NAMESPACE', async () => {
    const srv = await vault();
    const service = vaultTransitKeyService('t', { VAULT_NAMESPACE: 'team-a' }, listed(srv));
    await service.decrypt(vKey(srv.url, '/teams/transit/'));
    expect(srv.seen[0]!.path).toBe('/v1/teams/transit/decrypt/firstkey');
    expect(srv.seen[0]!.headers['x-vault-namespace']).toBe('team-a');
  });

  it('the documented response decodes to 20 bytes, which is not a SOPS data key', async () => {
    const srv = await vault(() => ({ body: { data: { plaintext: DOC_PLAINTEXT } } }));
    const service = vaultTransitKeyService('t', {}, listed(srv));
    await expect(service.decrypt(vKey(srv.url))).rejects.toThrow(
      `Vault transit key ${srv.url}/v1/sops/keys/firstkey: the decrypted data key is 20 bytes, not the 32 bytes SOPS uses`,
    );
  });

  it.each([
    {
      status: 403,
      errors: ['1 error occurred:\n\t* permission denied\n\n'],
      want: 'HTTP 403 (1 error occurred: * permission denied)',
      calls: 1,
    },
    {
      status: 400,
      errors: ['invalid ciphertext: no prefix'],
      want: 'HTTP 400 (invalid ciphertext: no prefix)',
      calls: 1,
    },
    { status: 503, errors: ['Vault is sealed'], want: 'HTTP 503 (Vault is sealed)', calls: 2 },
  ])('errors: HTTP $status', async ({ status, errors, want, calls }) => {
    const srv = await vault(() => ({ status, body: { errors } }));
    const service = vaultTransitKeyService('s.secret-token', {}, listed(srv));
    const err = await rejection(service.decrypt(vKey(srv.url)));
    expect(err.message).toBe(`Vault transit key ${srv.url}/v1/sops/keys/firstkey: decrypt failed: ${want}`);
    expect(srv.seen).toHaveLength(calls);
  });

  it('without a token it says where one comes from, and sends nothing', async () => {
    const srv = await vault();
    const err = await rejection(vaultTransitKeyService('  ', {}, listed(srv)).decrypt(vKey(srv.url)));
    expect(err.message).toContain('no Vault token: give a sops.vault-token entry');
    expect(srv.seen).toHaveLength(0);
  });

  it('a missing key field is named', async () => {
    const err = await rejection(
      vaultTransitKeyService('t', {}).decrypt(
        key('hc_vault', DOC_CIPHERTEXT, { vault_address: 'http://127.0.0.1:1', engine_path: 'sops' }),
      ),
    );
    expect(err.message).toBe(
      'Vault transit key http://127.0.0.1:1/v1/sops/keys/(no key_name): the master key needs vault_address, engine_path and key_name',
    );
  });
});
