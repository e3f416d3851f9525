/**
 * A Bucket's artifact (source.toolkit.fluxcd.io/v1), fetched as source-controller fetches it with
 * minio-go for providers `generic` (the default) and `aws`, through the S3 API; `gcp` and `azure`
 * (their own APIs) are refused.
 *
 * What source-controller does (internal/controller/bucket_controller.go, internal/bucket/minio):
 * `.sourceignore` at the root of the bucket (whatever spec.prefix is) is read first and kept in the
 * artifact; its patterns, then spec.ignore's, decide which keys count. No default exclusion applies
 * to a Bucket (the matcher is sourceignore.NewMatcher, not NewDefaultMatcher, and the artifact is
 * archived without a filter). The keys under spec.prefix are listed (ListObjectsV2, recursive,
 * `encoding-type=url`); keys ending in `/` and the `.sourceignore` key are skipped; each other key not
 * ignored is indexed with its ETag (quotes trimmed), downloaded to root/key (the prefix kept), and its
 * ETag replaced by the one the download answered when it differs; a key gone by then is dropped. The
 * revision is `sha256:` and the hex SHA-256 of the index: one line `<key> <etag>\n` per key, keys in
 * byte order (fluxcd/source-controller internal/index Digester).
 *
 * Addressing as minio-go: path-style (`scheme://endpoint/bucket/key`) except for Amazon S3, Google
 * and Aliyun endpoints (virtual-host, `bucket.host`, unless the name has a dot over HTTPS), Amazon
 * S3 hosts being replaced by the dual-stack endpoint of the region. Region: spec.region, else that of
 * an Amazon S3 host name, else the bucket's location (GetBucketLocation), `us-east-1` when it has
 * none. Requests are signed with AWS Signature Version 4 (sops/kms/aws.ts's signer) when there are
 * credentials: spec.secretRef's `accesskey` and `secretkey`, else for provider aws the
 * AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN variables; else they go unsigned.
 *
 * Credential values are masked (opts.secret) as soon as they are read; signatures are never logged
 * nor put in a message (S3's error bodies are read for Code, Message and Region only).
 *
 * Keys must stay below the root: `..`, `.` and empty segments and absolute keys are refused. Limits:
 * 20,000 objects and 256 MiB; each phase (listing, downloading) has the timeout (60 s by default).
 * Errors name the Bucket, its file, the endpoint and bucket, the step, the HTTP status with S3's
 * code and message, and on 401/403 which credentials were used or why there were none. The
 * temporary directory is removed on failure.
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import type { BucketDef } from '../flux/source-defs.js';
import { isIgnored, readPatterns, SOURCEIGNORE_FILE, type IgnorePattern } from '../kustomize/sourceignore.js';
import { scrub } from '../objects/secret.js';
import { signV4, type AwsCredentials } from '../sops/kms/aws.js';
import { mapLimit } from '../util/concurrency.js';
import type { Fetched } from './git.js';

export const BUCKET_MAX_OBJECTS = 20_000;
export const BUCKET_MAX_BYTES = 256 * 1024 * 1024;
export const BUCKET_TIMEOUT_MS = 60_000;
/** Downloads in flight at once (source-controller allows 100; a runner has 2 cores). */
export const BUCKET_CONCURRENCY = 16;
/** The SHA-256 of an empty payload, sent as `x-amz-content-sha256` with every signed GET. */
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
const DEFAULT_REGION = 'us-east-1';

export interface BucketFetchOptions {
  /** Masks a value in every later log line. */
  secret: (value: string) => void;
  /** Reads a Secret's data, decoded (spec.secretRef, in the Bucket's namespace). */
  readSecret?: (namespace: string, name: string) => Promise<Record<string, string>>;
  /** The environment (process.env): AWS_ACCESS_KEY_ID and the like, for provider aws. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Each phase's timeout (listing, then downloading); 60 s, Flux's default spec.timeout. */
  timeoutMs?: number;
  log?: (line: string) => void;
  /** `max-keys` of each ListObjectsV2 page; the server's default (1,000 on S3) when unset. */
  pageSize?: number;
  /** At most this many objects (20,000). */
  maxObjects?: number;
  /** At most this many bytes in all (256 MiB). */
  maxBytes?: number;
}

// ---- providers, endpoints, names ------------------------------------------------------------------

/** Why a Bucket of `provider` is not fetched here; undefined for generic (or unset) and aws. */
export function providerRefusal(provider: string): string | undefined {
  const p = provider.trim() === '' ? 'generic' : provider;
  if (p === 'generic' || p === 'aws') return undefined;
  const only = 'only providers generic and aws (the S3 API) are fetched here';
  if (p === 'gcp') return `provider gcp (the Google Cloud Storage API) is not supported: ${only}`;
  if (p === 'azure') return `provider azure (the Azure Blob Storage API) is not supported: ${only}`;
  return `provider ${p} is not one of Flux's (generic, aws, gcp, azure)`;
}

/** Why spec.endpoint is not `host[:port]`, or undefined. */
export function endpointProblem(endpoint: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(endpoint)) {
    return `spec.endpoint ${JSON.stringify(endpoint)} has a scheme: give host[:port] (spec.insecure: true for http)`;
  }
  if (!/^(?:\[[0-9a-fA-F:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)(?::\d{1,5})?$/.test(endpoint)) {
    return `spec.endpoint ${JSON.stringify(endpoint)} is not host[:port]`;
  }
  const port = /:(\d+)$/.exec(endpoint)?.[1];
  if (port !== undefined && !endpoint.endsWith(']') && Number(port) > 65535) {
    return `spec.endpoint ${JSON.stringify(endpoint)} has no valid port`;
  }
  return undefined;
}

/** Why spec.bucketName is not a bucket name (minio-go's CheckValidBucketName), or undefined. */
export function bucketNameProblem(name: string): string | undefined {
  if (name.length < 3 || name.length > 63) return `spec.bucketName ${JSON.stringify(name)} is not 3 to 63 characters`;
  if (/^(\d+\.){3}\d+$/.test(name)) return `spec.bucketName ${JSON.stringify(name)} is an IP address`;
  if (/\.\.|\.-|-\./.test(name) || !/^[A-Za-z0-9][A-Za-z0-9._:-]{1,61}[A-Za-z0-9]$/.test(name)) {
    return `spec.bucketName ${JSON.stringify(name)} holds characters a bucket name cannot`;
  }
  return undefined;
}

/** Where a Bucket's objects are asked for. */
export interface S3Target {
  scheme: 'http' | 'https';
  /** spec.endpoint, lower-cased. */
  endpoint: string;
  bucket: string;
}

export function s3Target(def: Pick<BucketDef, 'endpoint' | 'insecure' | 'bucketName'>): S3Target {
  return { scheme: def.insecure ? 'http' : 'https', endpoint: def.endpoint.toLowerCase(), bucket: def.bucketName };
}

const hostnameOf = (endpoint: string): string => endpoint.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');

/**
 * The region an Amazon S3 host name names (minio-go's GetRegionFromURL, for the forms a Bucket's
 * endpoint takes), or undefined.
 */
export function regionOfS3Host(hostname: string): string | undefined {
  const h = hostname.toLowerCase();
  if (h === 's3-external-1.amazonaws.com' || /elb.*\.amazonaws\.com(\.cn)?$/.test(h)) return undefined;
  const forms = [
    /^s3-fips\.dualstack\.([a-z0-9-]+)\.amazonaws\.com$/,
    /^s3-fips\.([a-z0-9-]+)\.amazonaws\.com$/,
    /^s3\.dualstack\.([a-z0-9-]+)\.amazonaws\.com$/,
    /^s3-([a-z0-9-]+)\.amazonaws\.com$/,
    /^s3\.(cn-[a-z0-9-]+)\.amazonaws\.com\.cn$/,
    /^s3\.dualstack\.(cn-[a-z0-9-]+)\.amazonaws\.com\.cn$/,
    /^(?:bucket|accesspoint)\.vpce-[a-z0-9-]+\.s3\.([a-z0-9-]+)\.vpce\.amazonaws\.com$/,
    /^s3\.([a-z0-9-]+)\.amazonaws\.com$/,
  ];
  for (const re of forms) {
    const region = re.exec(h)?.[1];
    if (region === undefined) continue;
    if (/^(xpress-|dualstack|control|website-)/.test(region)) return undefined;
    return region;
  }
  return undefined;
}

/** An Amazon S3 endpoint, as minio-go's IsAmazonEndpoint tells them. */
export function isAmazonS3Host(hostname: string): boolean {
  const h = hostname.toLowerCase();
  return h === 's3.amazonaws.com' || h === 's3-external-1.amazonaws.com' || regionOfS3Host(h) !== undefined;
}

/** Virtual-host addressing, as minio-go's default lookup chooses: Amazon S3, Google and Aliyun endpoints. */
export function usesVirtualHost(t: S3Target): boolean {
  if (t.scheme === 'https' && t.bucket.includes('.')) return false;
  const h = hostnameOf(t.endpoint);
  return isAmazonS3Host(h) || h === 'storage.googleapis.com' || h.endsWith('aliyuncs.com');
}

/** The host requests go to: for Amazon S3 (not FIPS or PrivateLink), the region's dual-stack endpoint, as minio-go. */
function hostFor(t: S3Target, region: string | undefined): string {
  const h = hostnameOf(t.endpoint);
  if (region === undefined || !isAmazonS3Host(h) || h.startsWith('s3-fips') || h.includes('.vpce.')) return t.endpoint;
  return region.startsWith('cn-') ? `s3.dualstack.${region}.amazonaws.com.cn` : `s3.dualstack.${region}.amazonaws.com`;
}

/** RFC 3986 encoding: everything but unreserved characters, in upper-case hex. */
function uriEncode(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** A key in a URL path: each segment encoded, `/` kept (minio-go's EncodePath). */
export function encodeKey(key: string): string {
  return key.split('/').map(uriEncode).join('/');
}

/**
 * The URL of a request about the bucket (no key: `…/bucket/`) or one of its objects, with `query`
 * encoded as Signature Version 4 wants it (RFC 3986, sorted by name). `region` picks the Amazon S3
 * host (undefined: the endpoint as given).
 */
export function s3Url(
  t: S3Target,
  region: string | undefined,
  key?: string,
  query: readonly (readonly [string, string])[] = [],
): URL {
  const host = hostFor(t, region);
  const path = key === undefined ? '' : encodeKey(key);
  const base = usesVirtualHost(t) ? `${t.scheme}://${t.bucket}.${host}/` : `${t.scheme}://${host}/${t.bucket}/`;
  const search = [...query]
    .map(([k, v]) => [uriEncode(k), uriEncode(v)] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  return new URL(`${base}${path}${search ? `?${search}` : ''}`);
}

/** The ListObjectsV2 query of one page (minio-go's, without the owner). */
export function listQuery(prefix: string, token: string | undefined, pageSize?: number): [string, string][] {
  const q: [string, string][] = [
    ['list-type', '2'],
    ['encoding-type', 'url'],
    ['prefix', prefix],
  ];
  if (token !== undefined) q.push(['continuation-token', token]);
  if (pageSize !== undefined) q.push(['max-keys', String(pageSize)]);
  return q;
}

// ---- XML -----------------------------------------------------------------------------------------

const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** Character data of an element: entities and character references decoded, CDATA kept as is. */
export function xmlText(raw: string): string {
  return raw
    .split(/(<!\[CDATA\[[\s\S]*?\]\]>)/)
    .map((part) =>
      part.startsWith('<![CDATA[')
        ? part.slice(9, -3)
        : part.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-z]+);/g, (whole, name: string) => {
            if (name.startsWith('#')) {
              const cp = name[1] === 'x' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
              return cp <= 0x10ffff ? String.fromCodePoint(cp) : whole;
            }
            return ENTITIES[name] ?? whole;
          }),
    )
    .join('');
}

/** The text of the first `<tag>` element of `xml` (attributes allowed, `<tag/>` is empty), or undefined. */
function element(xml: string, tag: string): string | undefined {
  const m = new RegExp(`<${tag}(?:\\s[^>]*)?(?:/>|>([\\s\\S]*?)</${tag}\\s*>)`).exec(xml);
  return m ? xmlText(m[1] ?? '') : undefined;
}

/** minio-go's trimEtag: one pair of surrounding quotes removed. */
export function trimEtag(etag: string): string {
  return etag.replace(/^"/, '').replace(/"$/, '');
}

/** Go's url.QueryUnescape: `+` is a space, `%XX` a byte; throws on a malformed escape. */
function queryUnescape(s: string): string {
  return decodeURIComponent(s.replace(/\+/g, ' '));
}

export interface ListedObject {
  key: string;
  /** Quotes trimmed. */
  etag: string;
  size: number;
}

export interface ListPage {
  objects: ListedObject[];
  truncated: boolean;
  nextToken?: string;
}

const CONTENTS = /<Contents(?:\s[^>]*)?>([\s\S]*?)<\/Contents\s*>/g;

/** One ListObjectsV2 answer; keys decoded (`encoding-type=url` when the answer says so). Throws when it is none. */
export function parseListObjectsV2(xml: string): ListPage {
  if (!/<ListBucketResult[\s>/]/.test(xml)) throw new Error('the answer is not a ListBucketResult');
  const outer = xml.replace(CONTENTS, '');
  const urlEncoded = (element(outer, 'EncodingType') ?? '').trim().toLowerCase() === 'url';
  const objects: ListedObject[] = [];
  for (const m of xml.matchAll(CONTENTS)) {
    const inner = m[1] ?? '';
    const raw = element(inner, 'Key');
    if (raw === undefined) throw new Error('the listing holds an object without a Key');
    let key = raw;
    if (urlEncoded) {
      try {
        key = queryUnescape(raw);
      } catch {
        throw new Error(`the listing holds a malformed URL-encoded key ${JSON.stringify(raw)}`);
      }
    }
    const size = Number((element(inner, 'Size') ?? '0').trim());
    objects.push({
      key,
      etag: trimEtag((element(inner, 'ETag') ?? '').trim()),
      size: Number.isFinite(size) && size >= 0 ? size : 0,
    });
  }
  const truncated = (element(outer, 'IsTruncated') ?? '').trim().toLowerCase() === 'true';
  const token = element(outer, 'NextContinuationToken');
  return { objects, truncated, ...(token ? { nextToken: token } : {}) };
}

export interface S3ErrorBody {
  code?: string;
  message?: string;
  /** Given with AuthorizationHeaderMalformed and the like: the bucket's region. */
  region?: string;
}

/** The `<Error>` an S3 server answers with, or empty when the body is none. */
export function parseS3Error(xml: string): S3ErrorBody {
  if (!/<Error[\s>]/.test(xml)) return {};
  const out: S3ErrorBody = {};
  const code = element(xml, 'Code')?.trim();
  const message = element(xml, 'Message')?.trim();
  const region = element(xml, 'Region')?.trim();
  if (code) out.code = code;
  if (message) out.message = message;
  if (region) out.region = region;
  return out;
}

/** The region of a GetBucketLocation answer: empty is us-east-1, `EU` is eu-west-1 (minio-go). */
export function parseLocation(xml: string): string {
  const loc = (element(xml, 'LocationConstraint') ?? '').trim();
  if (loc === '') return DEFAULT_REGION;
  return loc === 'EU' ? 'eu-west-1' : loc;
}

// ---- keys, index, revision ---------------------------------------------------------------------

/** source-controller's matcher for a Bucket: the root `.sourceignore`'s patterns, then spec.ignore's; no defaults. */
export function bucketPatterns(sourceignore: string | undefined, ignore: string | undefined): IgnorePattern[] {
  return [...readPatterns(sourceignore ?? '', []), ...readPatterns(ignore ?? '', [])];
}

export type KeyVerdict = 'directory' | 'sourceignore' | 'ignored' | 'fetch';

/** What source-controller does with a listed key. */
export function judgeKey(patterns: readonly IgnorePattern[], key: string): KeyVerdict {
  if (key.endsWith('/')) return 'directory';
  if (key === SOURCEIGNORE_FILE) return 'sourceignore';
  return isIgnored(patterns, key.split('/'), false) ? 'ignored' : 'fetch';
}

/** Why a key to fetch cannot be a path below the root, or undefined. */
export function keyProblem(key: string): string | undefined {
  if (key.startsWith('/')) return 'it is absolute';
  if (key.includes('\0')) return 'it holds a NUL character';
  const segments = key.split('/');
  if (segments.includes('..')) return 'it has a .. segment';
  if (segments.includes('.') || segments.includes('')) return 'it has an empty or . segment';
  return undefined;
}

/** Where `key` is written below `root`; throws when it would not be below it. */
export function objectPath(root: string, key: string): string {
  const problem = keyProblem(key);
  const path = resolve(root, ...key.split('/'));
  const rel = relative(resolve(root), path);
  if (problem !== undefined || rel === '' || rel.startsWith('..') || isAbsolute(rel)) {
    throw new Error(`object key ${JSON.stringify(key)} is refused: ${problem ?? 'it names a path outside the root'}`);
  }
  return path;
}

/** Go's string order: byte-wise over UTF-8. */
export function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** The text digested for the revision: `<key> <etag>\n` per key, keys in byte order. */
export function indexText(index: ReadonlyMap<string, string>): string {
  return [...index.keys()]
    .sort(compareKeys)
    .map((k) => `${k} ${index.get(k) ?? ''}\n`)
    .join('');
}

/** Flux's Bucket revision: `sha256:<hex>` of {@link indexText}. */
export function bucketRevision(index: ReadonlyMap<string, string>): string {
  return `sha256:${createHash('sha256').update(indexText(index), 'utf8').digest('hex')}`;
}

// ---- credentials --------------------------------------------------------------------------------

interface Auth {
  creds?: AwsCredentials;
  /** Where the credentials come from, or why there are none: said when the server refuses. */
  note: string;
  /** Values to scrub from server messages. */
  secrets: string[];
}

async function authFor(def: BucketDef, aws: boolean, opts: BucketFetchOptions): Promise<Auth> {
  const notes: string[] = [];
  if (def.secretRef !== undefined) {
    const ref = `spec.secretRef ${def.secretRef}`;
    let data: Record<string, string> | undefined;
    if (opts.readSecret === undefined) notes.push(`${ref} could not be read (no cluster to read it from)`);
    else {
      try {
        data = await opts.readSecret(def.namespace, def.secretRef);
      } catch (err) {
        notes.push(`${ref} could not be read: ${(err as Error).message}`);
      }
    }
    if (data !== undefined) {
      for (const v of Object.values(data)) if (v.trim() !== '') opts.secret(v);
      const accessKey = data['accesskey'];
      const secretKey = data['secretkey'];
      if (accessKey === undefined || secretKey === undefined) {
        throw new Error(`invalid '${def.secretRef}' secret data: required fields 'accesskey' and 'secretkey'`);
      }
      // As minio-go's static credentials: both or none (anonymous), and no fallback past a Secret.
      if (accessKey === '' || secretKey === '') {
        return { note: `the requests were unsigned: ${ref} has an empty accesskey or secretkey`, secrets: [] };
      }
      return {
        creds: { accessKeyId: accessKey, secretAccessKey: secretKey },
        note: `signed with the accesskey and secretkey of ${ref}`,
        secrets: [secretKey],
      };
    }
  }
  if (aws) {
    const env = opts.env ?? {};
    const id = env['AWS_ACCESS_KEY_ID'];
    const secretKey = env['AWS_SECRET_ACCESS_KEY'];
    if (id && secretKey) {
      const token = env['AWS_SESSION_TOKEN'];
      for (const v of [id, secretKey, token]) if (v) opts.secret(v);
      return {
        creds: { accessKeyId: id, secretAccessKey: secretKey, ...(token ? { sessionToken: token } : {}) },
        note: 'signed with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY',
        secrets: [secretKey, token ?? ''],
      };
    }
    notes.push('AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set');
  } else if (def.secretRef === undefined) {
    notes.push('no spec.secretRef');
  }
  return { note: `the requests were unsigned: ${notes.join('; ')}`, secrets: [] };
}

// ---- requests -----------------------------------------------------------------------------------

/** A refusal of the S3 server. */
class S3Failure extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    readonly body: S3ErrorBody,
    detail: string,
  ) {
    super(detail);
  }
}

const RETRY_STATUS = new Set([500, 502, 503, 504]);

function networkReason(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message;
}

class Client {
  region: string | undefined;
  constructor(
    readonly target: S3Target,
    readonly auth: Auth,
  ) {}

  /**
   * GETs `url`; returns the response when it is 2xx (its body unread), else throws an S3Failure
   * (`objectKey` says what a bodiless 404 means). Retries once after a network error or a 5xx.
   */
  async get(url: URL, signal: AbortSignal, objectKey?: string): Promise<Response> {
    const headers: Record<string, string> = this.auth.creds
      ? signV4(
          { method: 'GET', url, headers: { 'x-amz-content-sha256': EMPTY_SHA256 }, body: '' },
          this.auth.creds,
          this.region ?? DEFAULT_REGION,
          's3',
        )
      : {};
    for (let attempt = 1; ; attempt++) {
      let res: Response;
      try {
        res = await fetch(url, { headers, signal, redirect: 'manual' });
      } catch (err) {
        if (signal.aborted) throw err;
        if (attempt < 2) continue;
        throw new Error(`${url.host}: ${networkReason(err)}`, { cause: err });
      }
      if (res.ok) return res;
      if (RETRY_STATUS.has(res.status) && attempt < 2) {
        await res.body?.cancel();
        continue;
      }
      const text = (await res.text()).slice(0, 64 * 1024);
      const body = parseS3Error(text);
      // What minio-go makes of a body-less answer.
      const code =
        body.code ??
        (res.status === 404 ? (objectKey === undefined ? 'NoSuchBucket' : 'NoSuchKey') : undefined) ??
        (res.status === 403 ? 'AccessDenied' : undefined);
      const parts = [code, body.message && scrub(body.message, this.auth.secrets)].filter(Boolean).join(': ');
      throw new S3Failure(
        res.status,
        code,
        body,
        `HTTP ${res.status}${parts ? ` (${parts.replace(/\s+/g, ' ')})` : ''}`,
      );
    }
  }
}

async function findRegion(client: Client, signal: AbortSignal, log?: (line: string) => void): Promise<string> {
  let region: string;
  try {
    const res = await client.get(s3Url(client.target, undefined, undefined, [['location', '']]), signal);
    region = parseLocation(await res.text());
  } catch (err) {
    // What minio-go's processBucketLocationResponse lets through.
    const known = ['AuthorizationHeaderMalformed', 'InvalidRegion', 'AccessDenied'];
    if (!(err instanceof S3Failure) || !known.includes(err.code ?? '')) throw err;
    region = err.body.region ?? DEFAULT_REGION;
  }
  log?.(`Bucket ${client.target.bucket}: region ${region} (its location)`);
  return region;
}

/** The S3 refusal behind `err`, through its causes. */
function failureOf(err: unknown): S3Failure | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof S3Failure) return e;
  }
  return undefined;
}

/** Says what step failed; a missing bucket in Flux's words. */
function stepError(step: string, err: unknown, bucket: string): Error {
  if (err instanceof S3Failure && err.code === 'NoSuchBucket') {
    return new Error(`bucket '${bucket}' not found (${step}: ${err.message})`, { cause: err });
  }
  return new Error(`${step}: ${(err as Error).message}`, { cause: err });
}

/** Runs one phase under its own timeout; a timeout is said as such. */
async function phase<T>(name: string, timeoutMs: number, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    return await run(signal);
  } catch (err) {
    if (signal.aborted) throw new Error(`${name} timed out after ${timeoutMs / 1000}s`, { cause: err });
    throw err;
  }
}

/** Reads a response body into `path`, counting its bytes against `budget`. */
async function download(res: Response, path: string, budget: { left: number; max: number }): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const file = await open(path, 'wx');
  try {
    if (res.body === null) return;
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        budget.left -= value.byteLength;
        if (budget.left < 0) throw new Error(`the objects are larger than ${budget.max} bytes in all (the limit)`);
        await file.write(value);
      }
    } finally {
      // Stops the download when it ends early; a body read to its end is left as it is.
      await reader.cancel().catch(() => undefined);
    }
  } finally {
    await file.close();
  }
}

// ---- fetching -----------------------------------------------------------------------------------

/** Fetches `def` into a new temporary directory; throws a sentence naming it on failure. */
export async function fetchBucket(def: BucketDef, opts: BucketFetchOptions): Promise<Fetched> {
  const what = `Bucket ${def.namespace}/${def.name} (${def.file})`;
  const refusal = providerRefusal(def.provider) ?? endpointProblem(def.endpoint) ?? bucketNameProblem(def.bucketName);
  if (refusal !== undefined) throw new Error(`fetching ${what}: ${refusal}`);
  const target = s3Target(def);
  const from = `${target.scheme}://${target.endpoint}`;
  const bucket = `bucket '${def.bucketName}'`;
  let auth: Auth;
  try {
    auth = await authFor(def, def.provider === 'aws', opts);
  } catch (err) {
    throw new Error(`fetching ${what}: ${(err as Error).message}`, { cause: err });
  }
  const timeoutMs = opts.timeoutMs ?? BUCKET_TIMEOUT_MS;
  const maxObjects = opts.maxObjects ?? BUCKET_MAX_OBJECTS;
  const maxBytes = opts.maxBytes ?? BUCKET_MAX_BYTES;
  const prefix = def.prefix ?? '';
  const client = new Client(target, auth);

  const root = await mkdtemp(join(tmpdir(), 'kr-bucket-'));
  const cleanup = () => rm(root, { recursive: true, force: true });
  const budget = { left: maxBytes, max: maxBytes };
  try {
    const index = new Map<string, string>();
    await phase('listing the bucket', timeoutMs, async (signal) => {
      client.region = def.region || regionOfS3Host(hostnameOf(target.endpoint));
      if (!client.region) {
        try {
          client.region = await findRegion(client, signal, opts.log);
        } catch (err) {
          throw stepError('getting its location', err, def.bucketName);
        }
      }
      let sourceignore: string | undefined;
      try {
        const res = await client.get(s3Url(target, client.region, SOURCEIGNORE_FILE), signal, SOURCEIGNORE_FILE);
        await download(res, join(root, SOURCEIGNORE_FILE), budget);
        sourceignore = await readFile(join(root, SOURCEIGNORE_FILE), 'utf8');
      } catch (err) {
        if (!(err instanceof S3Failure && err.code === 'NoSuchKey')) {
          throw stepError(`getting ${SOURCEIGNORE_FILE}`, err, def.bucketName);
        }
      }
      const patterns = bucketPatterns(sourceignore, def.ignore);
      let bytes = 0;
      let token: string | undefined;
      const tokens = new Set<string>();
      const step = prefix ? `listing the objects under '${prefix}'` : 'listing the objects';
      for (;;) {
        let page: ListPage;
        try {
          const res = await client.get(
            s3Url(target, client.region, undefined, listQuery(prefix, token, opts.pageSize)),
            signal,
          );
          page = parseListObjectsV2(await res.text());
        } catch (err) {
          throw stepError(step, err, def.bucketName);
        }
        for (const o of page.objects) {
          if (judgeKey(patterns, o.key) !== 'fetch') continue;
          const problem = keyProblem(o.key);
          if (problem !== undefined) throw new Error(`object key ${JSON.stringify(o.key)} is refused: ${problem}`);
          if (!index.has(o.key)) bytes += o.size;
          index.set(o.key, o.etag);
          if (index.size > maxObjects) throw new Error(`more than ${maxObjects} objects to fetch (the limit)`);
          if (bytes > budget.left) throw new Error(`the objects are larger than ${maxBytes} bytes in all (the limit)`);
        }
        if (!page.truncated) break;
        if (page.nextToken === undefined)
          throw new Error(`${step}: the answer is truncated without a continuation token`);
        if (tokens.has(page.nextToken)) throw new Error(`${step}: the server repeats a continuation token`);
        tokens.add(page.nextToken);
        token = page.nextToken;
      }
    });

    const listed = [...index.keys()].sort(compareKeys);
    await phase('downloading the objects', timeoutMs, async (timeout) => {
      const failed = new AbortController();
      const signal = AbortSignal.any([timeout, failed.signal]);
      await mapLimit(listed, BUCKET_CONCURRENCY, async (key) => {
        try {
          const path = objectPath(root, key);
          let res: Response;
          try {
            res = await client.get(s3Url(target, client.region, key), signal, key);
          } catch (err) {
            if (err instanceof S3Failure && err.code === 'NoSuchKey') {
              opts.log?.(`Bucket ${def.namespace}/${def.name}: object '${key}' disappeared from the bucket`);
              index.delete(key);
              return;
            }
            throw err;
          }
          const etag = trimEtag(res.headers.get('etag') ?? '');
          await download(res, path, budget);
          if (etag !== '' && etag !== index.get(key)) index.set(key, etag);
        } catch (err) {
          failed.abort();
          throw stepError(`getting object '${key}'`, err, def.bucketName);
        }
      });
    });

    const revision = bucketRevision(index);
    const bytes = maxBytes - budget.left;
    opts.log?.(
      `Fetched Bucket ${def.namespace}/${def.name}: ${index.size} object(s), ${bytes} bytes of ${bucket} at ${from}` +
        `${prefix ? ` under '${prefix}'` : ''}, revision ${revision}`,
    );
    return { root, revision, cleanup };
  } catch (err) {
    await cleanup();
    const status = failureOf(err)?.status;
    const hint = status === 401 || status === 403 ? ` (${auth.note})` : '';
    const message = (err as Error).message;
    const said = message.startsWith(`${bucket} not found`) ? message : `${bucket}: ${message}`;
    throw new Error(`fetching ${what} from ${from}: ${said}${hint}`, { cause: err });
  }
}
