/**
 * AWS request signing (Signature Version 4), shared by the AWS KMS key service (sops/kms/aws.ts) and
 * the S3 client of Bucket sources (source/s3.ts). Pure.
 */
import { createHash, createHmac } from 'node:crypto';

/** An access key pair, with the session token of temporary credentials. */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface SigV4Request {
  method: string;
  url: URL;
  /** Headers to sign (and send); names in any case. `host` comes from the URL unless given. */
  headers: Record<string, string>;
  body: string;
}

/**
 * Signs a request with AWS Signature Version 4 (header form) and returns the headers to send: the
 * given ones plus `x-amz-date`, `x-amz-security-token` for temporary credentials, and
 * `authorization`. Every given header is signed, as is `host`, which is left for fetch to send.
 */
export function signV4(
  req: SigV4Request,
  creds: AwsCredentials,
  region: string,
  service: string,
  now: Date = new Date(),
): Record<string, string> {
  const amzDate = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  const day = amzDate.slice(0, 8);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) headers[k.toLowerCase()] = v;
  headers['host'] ??= req.url.host;
  headers['x-amz-date'] = amzDate;
  if (creds.sessionToken) headers['x-amz-security-token'] = creds.sessionToken;

  const names = Object.keys(headers).sort();
  const canonicalHeaders = names.map((n) => `${n}:${(headers[n] ?? '').trim().replace(/\s+/g, ' ')}\n`).join('');
  const signedHeaders = names.join(';');
  const canonicalRequest = [
    req.method.toUpperCase(),
    canonicalPath(req.url.pathname),
    canonicalQuery(req.url.search),
    canonicalHeaders,
    signedHeaders,
    sha256Hex(req.body),
  ].join('\n');
  const scope = `${day}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
  let k = hmac(`AWS4${creds.secretAccessKey}`, day);
  k = hmac(k, region);
  k = hmac(k, service);
  k = hmac(k, 'aws4_request');
  const signature = createHmac('sha256', k).update(stringToSign, 'utf8').digest('hex');

  const out: Record<string, string> = { ...headers };
  delete out['host'];
  out['authorization'] =
    `AWS4-HMAC-SHA256 Credential=${creds.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return out;
}

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac('sha256', key).update(data, 'utf8').digest();
}

function sha256Hex(data: string): string {
  return createHash('sha256').update(data, 'utf8').digest('hex');
}

/** RFC 3986 encoding: everything but unreserved characters, in upper-case hex. */
function uriEncode(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The normalised path (the URL parser already removed dot segments), each segment encoded once. */
function canonicalPath(pathname: string): string {
  const p = pathname === '' ? '/' : pathname;
  return p
    .split('/')
    .map((seg) => uriEncode(safeDecode(seg)))
    .join('/');
}

/** Query parameters encoded, sorted by name and then value. */
function canonicalQuery(search: string): string {
  const q = search.startsWith('?') ? search.slice(1) : search;
  if (!q) return '';
  return q
    .split('&')
    .filter((p) => p !== '')
    .map((p) => {
      const i = p.indexOf('=');
      const k = i < 0 ? p : p.slice(0, i);
      const v = i < 0 ? '' : p.slice(i + 1);
      return [uriEncode(safeDecode(k)), uriEncode(safeDecode(v))] as const;
    })
    .sort(([ak, av], [bk, bv]) => (ak < bk ? -1 : ak > bk ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
}

/**
 * The static credentials of the environment: `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` (both, or
 * none), with `AWS_SESSION_TOKEN` when set, as aws-actions/configure-aws-credentials exports them.
 * The first link of every AWS credential chain here (the KMS key service's, a Bucket's).
 */
export function environmentCredentials(env: NodeJS.ProcessEnv): AwsCredentials | undefined {
  const id = env['AWS_ACCESS_KEY_ID'];
  const secret = env['AWS_SECRET_ACCESS_KEY'];
  if (!id || !secret) return undefined;
  const token = env['AWS_SESSION_TOKEN'];
  return { accessKeyId: id, secretAccessKey: secret, ...(token ? { sessionToken: token } : {}) };
}
