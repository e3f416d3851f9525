/**
 * The S3 API as minio-go speaks it, for reading one bucket (a Flux Bucket's: bucket.ts): where the
 * bucket is (spec.endpoint and spec.bucketName checked; path-style `scheme://endpoint/bucket/key`
 * except for Amazon S3, Google and Aliyun endpoints, virtual-host `bucket.host` unless the name has
 * a dot over HTTPS; Amazon S3 hosts replaced by the region's dual-stack endpoint), keys and queries
 * encoded as Signature Version 4 wants them, the ListObjectsV2 query, the region (that of an Amazon
 * S3 host name, else the bucket's location from GetBucketLocation, `us-east-1` when it has none),
 * the XML answers (s3-xml.ts: ListObjectsV2 pages, `<Error>`, the location), and a GET signed with AWS Signature
 * Version 4 (sops/kms/aws.ts's signer) when there are credentials, retried by util/retry.ts's policy
 * after a network error, a 429 or a 5xx. S3's error bodies are read for Code, Message and Region only, the message scrubbed
 * of the credentials; signatures are never logged nor put in a message.
 */
import type { BucketDef } from '../flux/source-defs.js';
import { scrub } from '../objects/secret.js';
import { signV4, type AwsCredentials } from '../aws/sigv4.js';
import { readBounded, readTruncated } from './bounded.js';
import { DEFAULT_REGION, parseLocation, parseS3Error, type S3ErrorBody } from './s3-xml.js';

export {
  parseListObjectsV2,
  parseLocation,
  parseS3Error,
  trimEtag,
  xmlText,
  type ListedObject,
  type ListPage,
  type S3ErrorBody,
} from './s3-xml.js';
import { againByStatus, HTTP_RETRY, retrying, type RetryPolicy } from '../util/retry.js';

/** The SHA-256 of an empty payload, sent as `x-amz-content-sha256` with every signed GET. */
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
/** A GetBucketLocation answer is a few dozen bytes. */
const MAX_LOCATION_BYTES = 64 << 10;

// ---- endpoints, names, URLs ---------------------------------------------------------------------

/** Why spec.endpoint is not `host[:port]`, or undefined. */
export function endpointProblem(endpoint: string): string | undefined {
  if (endpoint.length > 262) return `spec.endpoint is ${endpoint.length} characters long, more than host[:port] can be`;
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

/** The host name of `host[:port]` (an IPv6 literal without its brackets). */
export const hostnameOf = (endpoint: string): string => endpoint.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');

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

/** A region's name: `us-east-1`, `us-gov-west-1`, `cn-north-1`, `ap-southeast-2`. */
const REGION_NAME = /^[a-z]{2,4}(?:-[a-z]+)+-\d{1,2}$/;

/**
 * Whether `hostname` is Amazon S3's, where the environment's AWS credentials may be sent:
 * `s3.amazonaws.com`, `s3-external-1.amazonaws.com`, `s3-<region>.amazonaws.com`, and
 * `s3[-fips][.dualstack].<region>.amazonaws.com` (`s3[.dualstack].cn-….amazonaws.com.cn` in China),
 * each also after a bucket's name (`<bucket>.s3.<region>.amazonaws.com`), and S3's PrivateLink
 * names. No other `amazonaws.com` host: a load balancer's, an API gateway's or an EC2 instance's
 * name there belongs to whoever made it, and an S3 website or Object Lambda endpoint serves what a
 * bucket's owner puts there.
 */
export function isAwsS3Endpoint(hostname: string): boolean {
  const h = hostname.toLowerCase();
  if (h.length > 253 || !/^[a-z0-9.-]+$/.test(h)) return false;
  const labels = h.split('.');
  if (labels.some((l) => l === '' || l.length > 63)) return false;
  const china = h.endsWith('.amazonaws.com.cn');
  if (!china && !h.endsWith('.amazonaws.com')) return false;
  const rest = labels.slice(0, china ? -3 : -2);
  if (!china && rest.at(-1) === 'vpce') return regionOfS3Host(h) !== undefined;
  const region = (r: string | undefined) => r !== undefined && REGION_NAME.test(r) && r.startsWith('cn-') === china;
  const [last, prev, prev2] = [rest.at(-1), rest.at(-2), rest.at(-3)];
  if (!china && (last === 's3' || last === 's3-external-1' || (last?.startsWith('s3-') && region(last.slice(3))))) {
    return true;
  }
  if (!region(last)) return false;
  const s3 = (label: string | undefined) => label === 's3' || (!china && label === 's3-fips');
  return s3(prev) || (prev === 'dualstack' && s3(prev2));
}

/**
 * Why the environment's AWS credentials may not sign the requests to a Bucket's endpoint, or
 * undefined when it is Amazon S3's over https (its default port): a pull request may point
 * spec.endpoint at any host.
 */
export function envCredentialsRefusal(endpoint: string, insecure: boolean): string | undefined {
  if (insecure) return 'spec.insecure is true, and they are never sent over plain http';
  const port = /:(\d+)$/.exec(endpoint)?.[1];
  if (port !== undefined && port !== '443') return `spec.endpoint ${endpoint} names port ${port}`;
  if (!isAwsS3Endpoint(hostnameOf(endpoint))) {
    return `spec.endpoint ${endpoint} is not an Amazon S3 endpoint (s3.amazonaws.com, s3.<region>.amazonaws.com and the like)`;
  }
  return undefined;
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

// ---- requests -----------------------------------------------------------------------------------

/** How requests are signed: with these credentials, or unsigned without any. */
export interface S3Auth {
  creds?: AwsCredentials;
  /** Values to scrub from server messages. */
  secrets: string[];
}

/** A refusal of the S3 server. */
export class S3Failure extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    readonly body: S3ErrorBody,
    detail: string,
  ) {
    super(detail);
  }
}

function networkReason(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message;
}

/** GETs from one bucket, signed when there are credentials, in the region set once it is known. */
export class S3Client {
  region: string | undefined;
  constructor(
    readonly target: S3Target,
    readonly auth: S3Auth,
    private readonly retry: RetryPolicy = HTTP_RETRY,
  ) {}

  /**
   * GETs `url`; returns the response when it is 2xx (its body unread), else throws an S3Failure
   * (`objectKey` says what a bodiless 404 means). Tries again (util/retry.ts) after a network error or
   * an answer worth it (a 429 or a 5xx), after its Retry-After or the backoff.
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
    let res: Response;
    try {
      res = await retrying(() => fetch(url, { headers, signal, redirect: 'manual' }), {
        again: againByStatus,
        againAfter: () => true,
        drop: async (r) => r.body?.cancel(),
        signal,
        policy: this.retry,
      });
    } catch (err) {
      if (signal.aborted) throw err;
      throw new Error(`${url.host}: ${networkReason(err)}`, { cause: err });
    }
    if (res.ok) return res;
    const body = parseS3Error(await readTruncated(res));
    // What minio-go makes of a body-less answer.
    const code =
      body.code ??
      (res.status === 404 ? (objectKey === undefined ? 'NoSuchBucket' : 'NoSuchKey') : undefined) ??
      (res.status === 403 ? 'AccessDenied' : undefined);
    const parts = [code, body.message && scrub(body.message, this.auth.secrets)].filter(Boolean).join(': ');
    throw new S3Failure(res.status, code, body, `HTTP ${res.status}${parts ? ` (${parts.replace(/\s+/g, ' ')})` : ''}`);
  }
}

export async function findRegion(client: S3Client, signal: AbortSignal, log?: (line: string) => void): Promise<string> {
  let region: string;
  try {
    const res = await client.get(s3Url(client.target, undefined, undefined, [['location', '']]), signal);
    region = parseLocation((await readBounded(res, MAX_LOCATION_BYTES, 'the bucket location')).toString('utf8'));
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
export function failureOf(err: unknown): S3Failure | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof S3Failure) return e;
  }
  return undefined;
}
