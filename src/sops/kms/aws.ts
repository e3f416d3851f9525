/**
 * AWS KMS master keys (`sops.kms[]`: `{arn, role?, context?, enc}`): the data key is recovered with
 * the KMS `Decrypt` call over HTTPS, signed with AWS Signature Version 4 written here, so that the
 * bundle carries no AWS SDK. SOPS stores `enc` as the standard base64 of the KMS ciphertext blob, and
 * the plaintext KMS returns is the raw 32-byte data key (sops kms/keysource.go).
 */
import { hostname } from 'node:os';
import type { KeyService } from '../types.js';
import {
  dataKeyOf,
  field,
  fromBase64,
  githubOidcToken,
  httpDetail,
  keyError,
  keyStep,
  kindKeyService,
  postDecrypt,
  readTokenFile,
  redact,
  send,
  str,
  TokenCache,
  type DecryptApi,
  type HttpResponse,
} from './common.js';
import { awsEndpoint, refusal } from './endpoints.js';
import { environmentCredentials, signV4, type AwsCredentials } from '../../aws/sigv4.js';

export type { AwsCredentials } from '../../aws/sigv4.js';

interface TimedCredentials extends AwsCredentials {
  /** Epoch milliseconds; Infinity for static credentials. */
  expiresAt: number;
}

const PROVIDER = 'AWS KMS';
/**
 * What SOPS matches an ARN with (kms/keysource.go `arnRegex`): partition, region, account, key or
 * alias. The region is taken loosely here and checked by `awsEndpoint`, so that the error says why.
 */
const ARN_RE = /^arn:(aws[\w-]*):kms:(.+):[0-9]+:(key|alias)\/.+$/;

/**
 * A key service for AWS KMS master keys. Credentials, in order: `creds` (Flux's `sops.aws-kms`
 * Secret entry); the `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`/`AWS_SESSION_TOKEN` variables
 * (what aws-actions/configure-aws-credentials exports); web identity, `AWS_WEB_IDENTITY_TOKEN_FILE`
 * with `AWS_ROLE_ARN`, or the GitHub Actions OIDC token (audience `sts.amazonaws.com`) with
 * `AWS_ROLE_ARN` when the job may request one, exchanged with STS `AssumeRoleWithWebIdentity`.
 * A key with a `role` has that role assumed (STS `AssumeRole`) with those credentials first.
 * Endpoints: `AWS_ENDPOINT_URL_KMS` / `AWS_ENDPOINT_URL_STS`, else `AWS_ENDPOINT_URL` (the
 * workflow's own configuration), else AWS's `kms.<region>.<partition's DNS suffix>` (`kms-fips.`
 * with `AWS_USE_FIPS_ENDPOINT=true`), where the region of the key's ARN (from the SOPS file) must be
 * a region name of its partition: a region such as `evil.com/x` is refused before any request.
 */
export function awsKmsKeyService(creds?: AwsCredentials, env: NodeJS.ProcessEnv = process.env): KeyService {
  const cache = new TokenCache<TimedCredentials>();

  const baseCredentials = (region: string): Promise<TimedCredentials> =>
    cache.get('base', async () => {
      if (creds) return { ...creds, expiresAt: Infinity };
      const fromEnv = environmentCredentials(env);
      if (fromEnv) return { ...fromEnv, expiresAt: Infinity };
      const roleArn = env['AWS_ROLE_ARN'];
      if (roleArn) {
        const file = env['AWS_WEB_IDENTITY_TOKEN_FILE'];
        const token = file
          ? await readTokenFile(file, 'AWS_WEB_IDENTITY_TOKEN_FILE')
          : await githubOidcToken(env, 'sts.amazonaws.com');
        if (token) return assumeRoleWithWebIdentity(roleArn, token, stsRegion(env, region), env);
      }
      throw new Error(
        'no AWS credentials: give a sops.aws-kms entry in the decryption Secret, or set AWS_ACCESS_KEY_ID and ' +
          'AWS_SECRET_ACCESS_KEY (aws-actions/configure-aws-credentials does), or AWS_ROLE_ARN with ' +
          'AWS_WEB_IDENTITY_TOKEN_FILE or a GitHub OIDC token (permissions: id-token: write)',
      );
    });

  const credentialsFor = async (region: string, role: string | undefined): Promise<TimedCredentials> => {
    const base = await baseCredentials(region);
    if (!role) return base;
    return cache.get(`role ${role} ${region}`, () => assumeRole(role, base, region, env));
  };

  return kindKeyService(PROVIDER, 'kms', async (key) => {
    const arn = field(key, 'arn');
    if (!arn) throw keyError(PROVIDER, '(no arn)', 'the master key has no arn');
    const role = field(key, 'role');
    const name = role ? `${arn} (role ${role})` : arn;
    const m = ARN_RE.exec(arn);
    if (!m) throw keyError(PROVIDER, name, 'not a KMS key ARN (arn:aws:kms:<region>:<account>:key/<id>)');
    const [, partition = 'aws', region = ''] = m;
    const pinned = awsEndpoint('kms', partition, region, { fips: useFips(env) });
    if (!pinned.ok) throw keyError(PROVIDER, name, refusal(pinned, 'arn'));
    const blob = fromBase64(key.enc);
    if (!blob || blob.length === 0) throw keyError(PROVIDER, name, 'enc is not base64');
    const context = encryptionContext(key.fields['context']);
    if (typeof context === 'string') throw keyError(PROVIDER, name, context);

    const c = await keyStep(PROVIDER, name, () => credentialsFor(region, role));
    const url = endpoint(env, 'KMS', pinned.url);
    const body = JSON.stringify({
      KeyId: arn,
      CiphertextBlob: Buffer.from(blob).toString('base64'),
      ...(context ? { EncryptionContext: context } : {}),
    });
    const headers = signV4(
      {
        method: 'POST',
        url,
        headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': 'TrentService.Decrypt' },
        body,
      },
      c,
      region,
      'kms',
    );
    const json = await postDecrypt(DECRYPT, name, url, { headers, body }, secretsOf(c));
    const plaintext = str(json, 'Plaintext');
    return dataKeyOf(plaintext === undefined ? undefined : fromBase64(plaintext), PROVIDER, name);
  });
}

/** SOPS's `context`: a map of strings, or absent; SOPS drops a context holding other values, we say so. */
function encryptionContext(raw: unknown): Record<string, string> | undefined | string {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'object' || Array.isArray(raw)) return 'context is not a map of strings';
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
    if (typeof v !== 'string') return `context value of "${k}" is not a string`;
    out[k] = v;
  }
  return Object.keys(out).length ? out : undefined;
}

function useFips(env: NodeJS.ProcessEnv): boolean {
  return (env['AWS_USE_FIPS_ENDPOINT'] ?? '').trim().toLowerCase() === 'true';
}

/** A service endpoint: `AWS_ENDPOINT_URL_<SERVICE>`, else `AWS_ENDPOINT_URL`, else AWS's. */
function endpoint(env: NodeJS.ProcessEnv, service: 'KMS' | 'STS', fallback: URL): URL {
  const override = env[`AWS_ENDPOINT_URL_${service}`] || env['AWS_ENDPOINT_URL'];
  const u = new URL(override || fallback);
  if (!u.pathname.endsWith('/')) u.pathname += '/';
  return u;
}

/** STS of a role's partition in `region`; refused (nothing sent) when the region is not one of it. */
function stsEndpoint(env: NodeJS.ProcessEnv, roleArn: string, region: string, field: string): URL {
  const pinned = awsEndpoint('sts', partitionOfRole(roleArn), region, { fips: false });
  if (!pinned.ok) throw new Error(`STS for ${roleArn}: ${refusal(pinned, field)}`);
  return endpoint(env, 'STS', pinned.url);
}

function stsRegion(env: NodeJS.ProcessEnv, keyRegion: string): string {
  return env['AWS_REGION'] || env['AWS_DEFAULT_REGION'] || keyRegion;
}

function secretsOf(c: AwsCredentials): string[] {
  return [c.secretAccessKey, c.sessionToken ?? ''];
}

/** The error code of an AWS JSON-protocol error: `x-amzn-ErrorType`, else `__type`, without namespace or URL. */
function awsJsonErrorCode(header: string | null, json: unknown): string | undefined {
  const raw = header ?? str(json, '__type') ?? str(json, 'code');
  if (!raw) return undefined;
  const noUrl = raw.split(':')[0] ?? raw;
  return noUrl.slice(noUrl.lastIndexOf('#') + 1);
}

/** KMS's refusal: the code of an AWS JSON-protocol error, and its message. */
function kmsError(json: unknown, res: HttpResponse): { code?: string; message?: string } {
  return {
    code: awsJsonErrorCode(res.headers.get('x-amzn-errortype'), json),
    message: str(json, 'message') ?? str(json, 'Message'),
  };
}

const DECRYPT: DecryptApi = { provider: PROVIDER, call: 'AWS KMS Decrypt', operation: 'Decrypt', errorOf: kmsError };

// ---- STS ---------------------------------------------------------------------------------------

/** STS `AssumeRoleWithWebIdentity`: an unsigned Query-protocol call trading an OIDC token for credentials. */
async function assumeRoleWithWebIdentity(
  roleArn: string,
  token: string,
  region: string,
  env: NodeJS.ProcessEnv,
): Promise<TimedCredentials> {
  const url = stsEndpoint(env, roleArn, region, 'AWS_ROLE_ARN and the region');
  const session = env['AWS_ROLE_SESSION_NAME'] || `kustomize-reconcile-${Date.now()}`;
  const res = await stsPost(url, 'AssumeRoleWithWebIdentity', roleArn, {
    RoleSessionName: session,
    WebIdentityToken: token,
  });
  return stsCredentials(res.status, res.body, `STS AssumeRoleWithWebIdentity for ${roleArn}`, [token]);
}

/** STS `AssumeRole`, signed with the base credentials, for a key's `role`. */
async function assumeRole(
  roleArn: string,
  base: AwsCredentials,
  region: string,
  env: NodeJS.ProcessEnv,
): Promise<TimedCredentials> {
  const url = stsEndpoint(env, roleArn, region, 'role');
  const res = await stsPost(url, 'AssumeRole', roleArn, { RoleSessionName: sessionName() }, { creds: base, region });
  return stsCredentials(res.status, res.body, `STS AssumeRole of ${roleArn}`, secretsOf(base));
}

/** POSTs one STS Query-protocol action about `roleArn`, signed with Signature Version 4 when `sign` is given. */
function stsPost(
  url: URL,
  action: 'AssumeRole' | 'AssumeRoleWithWebIdentity',
  roleArn: string,
  params: Record<string, string>,
  sign?: { creds: AwsCredentials; region: string },
): Promise<HttpResponse> {
  const body = new URLSearchParams({ Action: action, Version: '2011-06-15', RoleArn: roleArn, ...params }).toString();
  const form = { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' };
  const headers = sign ? signV4({ method: 'POST', url, headers: form, body }, sign.creds, sign.region, 'sts') : form;
  return send(url, { method: 'POST', headers, body }, `AWS STS ${action}`);
}

function partitionOfRole(arn: string): string {
  return /^arn:(aws[\w-]*):/.exec(arn)?.[1] ?? 'aws';
}

/** `sops@<host>` in SOPS; ours names the tool. STS allows [\w+=,.@-], at most 64 characters. */
function sessionName(): string {
  return `kustomize-reconcile@${hostname()}`.replace(/[^\w+=,.@-]/g, '').slice(0, 64);
}

/** Reads the `<Credentials>` of an STS XML response, or throws with STS's error code and message. */
function stsCredentials(status: number, xml: string, what: string, secrets: string[]): TimedCredentials {
  if (status !== 200) {
    const message = xmlText(xml, 'Message');
    throw new Error(`${what} failed: ${httpDetail(status, xmlText(xml, 'Code'), message && redact(message, secrets))}`);
  }
  const creds = xmlText(xml, 'Credentials') ?? '';
  const accessKeyId = xmlText(creds, 'AccessKeyId');
  const secretAccessKey = xmlText(creds, 'SecretAccessKey');
  const sessionToken = xmlText(creds, 'SessionToken');
  const expiration = xmlText(creds, 'Expiration');
  if (!accessKeyId || !secretAccessKey || !sessionToken) {
    throw new Error(`${what}: the response holds no credentials`);
  }
  const expiresAt = expiration ? Date.parse(expiration) : NaN;
  return {
    accessKeyId,
    secretAccessKey,
    sessionToken,
    expiresAt: Number.isFinite(expiresAt) ? expiresAt : Date.now() + 15 * 60_000,
  };
}

/** The text of the first `<tag>` element (no attributes, as STS writes them), entities decoded. */
function xmlText(xml: string, tag: string): string | undefined {
  const m = new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`).exec(xml);
  if (!m) return undefined;
  return (m[1] ?? '')
    .trim()
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&#(\d+);/g, (_, d: string) => String.fromCodePoint(Number(d)))
    .replace(/&amp;/g, '&');
}
