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
 * The requests go through s3.ts: addressing as minio-go's, signed with AWS Signature Version 4 when
 * there are credentials. Region: spec.region, else that of an Amazon S3 host name, else the bucket's
 * location (GetBucketLocation), `us-east-1` when it has none. The credentials (bucket-auth.ts): spec.secretRef's
 * `accesskey` and `secretkey`, else for provider aws the AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
 * AWS_SESSION_TOKEN variables, but only for an Amazon S3 endpoint over https (s3.ts
 * envCredentialsRefusal: spec.endpoint is the tree's to choose; elsewhere a note says why they were
 * not sent); else the requests go unsigned.
 *
 * Credential values are masked (opts.secret) as soon as they are read; signatures are never logged
 * nor put in a message (S3's error bodies are read for Code, Message and Region only).
 *
 * Keys must stay below the root: `..`, `.` and empty segments and absolute keys are refused. Limits:
 * 20,000 objects and 256 MiB, within the run's budget (budget.ts), listing pages of 16 MiB; each
 * phase (listing, downloading) has the timeout (60 s by default). Errors name the Bucket, its file,
 * the endpoint and bucket, the step, the HTTP status with S3's code and message, and on 401/403
 * which credentials were used or why there were none. The scratch directory is removed on failure.
 */
import { createHash } from 'node:crypto';
import { mkdir, open, readFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { byBytes } from '../util/order.js';
import type { BucketDef } from '../flux/source-defs.js';
import { isIgnored, readPatterns, SOURCEIGNORE_FILE, type IgnorePattern } from '../kustomize/sourceignore.js';
import { mapLimit } from '../util/concurrency.js';
import type { RetryPolicy } from '../util/retry.js';
import { scratchDir } from '../util/scratch.js';
import { MAX_LIST_BYTES, readBounded } from './bounded.js';
import type { ExtractBudget } from './budget.js';
import type { Fetched } from './git.js';
import { authFor, type Auth, type BucketAuthOptions } from './bucket-auth.js';
import {
  bucketNameProblem,
  endpointProblem,
  failureOf,
  findRegion,
  hostnameOf,
  listQuery,
  parseListObjectsV2,
  regionOfS3Host,
  S3Client,
  S3Failure,
  s3Target,
  s3Url,
  trimEtag,
  type ListPage,
} from './s3.js';

export const BUCKET_MAX_OBJECTS = 20_000;
export const BUCKET_MAX_BYTES = 256 * 1024 * 1024;
export const BUCKET_TIMEOUT_MS = 60_000;
/** Downloads in flight at once (source-controller allows 100; a runner has 2 cores). */
export const BUCKET_CONCURRENCY = 16;

export interface BucketFetchOptions extends BucketAuthOptions {
  /** Each phase's timeout (listing, then downloading); 60 s, Flux's default spec.timeout. */
  timeoutMs?: number;
  /** `max-keys` of each ListObjectsV2 page; the server's default (1,000 on S3) when unset. */
  pageSize?: number;
  /** At most this many objects (20,000). */
  maxObjects?: number;
  /** At most this many bytes in all (256 MiB). */
  maxBytes?: number;
  /** The run's budget for extracted files, shared with every other source (budget.ts). */
  budget?: ExtractBudget;
  /** How often a request is tried (util/retry.ts's HTTP_RETRY by default). */
  retry?: RetryPolicy;
}

// ---- providers ----------------------------------------------------------------------------------

/** Why a Bucket of `provider` is not fetched here; undefined for generic (or unset) and aws. */
export function providerRefusal(provider: string): string | undefined {
  const p = provider.trim() === '' ? 'generic' : provider;
  if (p === 'generic' || p === 'aws') return undefined;
  const only = 'only providers generic and aws (the S3 API) are fetched here';
  if (p === 'gcp') return `provider gcp (the Google Cloud Storage API) is not supported: ${only}`;
  if (p === 'azure') return `provider azure (the Azure Blob Storage API) is not supported: ${only}`;
  return `provider ${p} is not one of Flux's (generic, aws, gcp, azure)`;
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

/** The text digested for the revision: `<key> <etag>\n` per key, keys in byte order. */
export function indexText(index: ReadonlyMap<string, string>): string {
  return [...index.keys()]
    .sort(byBytes)
    .map((k) => `${k} ${index.get(k) ?? ''}\n`)
    .join('');
}

/** Flux's Bucket revision: `sha256:<hex>` of {@link indexText}. */
export function bucketRevision(index: ReadonlyMap<string, string>): string {
  return `sha256:${createHash('sha256').update(indexText(index), 'utf8').digest('hex')}`;
}

// ---- steps --------------------------------------------------------------------------------------

/**
 * A step of the fetch that failed, in parts: the step, the bucket, and whether the bucket is
 * missing (S3's NoSuchBucket), which is said in Flux's words: `bucket 'name' not found (step: …)`.
 */
export class BucketStepError extends Error {
  readonly missing: boolean;
  constructor(
    readonly step: string,
    readonly bucketName: string,
    cause: unknown,
  ) {
    const missing = cause instanceof S3Failure && cause.code === 'NoSuchBucket';
    const said = `${step}: ${(cause as Error).message}`;
    super(missing ? `bucket '${bucketName}' not found (${said})` : said, { cause });
    this.name = 'BucketStepError';
    this.missing = missing;
  }
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

/** What a download counts against: this Bucket's bytes, and the run's budget (budget.ts) when there is one. */
interface Limits {
  left: number;
  max: number;
  run?: ExtractBudget;
  /** `Bucket ns/name`, for the run's budget's message. */
  what: string;
}

/** Reads a response body into `path` (object `key`), counting its bytes against `budget`. */
async function download(res: Response, path: string, budget: Limits, key: string): Promise<void> {
  const what = `${budget.what}, object '${key}'`;
  budget.run?.take(0, 1, what);
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
        budget.run?.take(value.byteLength, 0, what);
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

/** One fetch of one Bucket: what every step needs. */
interface BucketFetch {
  def: BucketDef;
  opts: BucketFetchOptions;
  /** `Bucket ns/name (file)`, and `scheme://endpoint`: what a failure names. */
  what: string;
  from: string;
  /** Where the credentials came from, or why there were none (said on a 401 or 403). */
  note: string;
  client: S3Client;
  /** The scratch directory the objects are written to, and its removal. */
  root: string;
  cleanup: () => Promise<void>;
  /** `Bucket ns/name`. */
  name: string;
  prefix: string;
  /** Each phase's timeout. */
  timeoutMs: number;
  maxObjects: number;
  budget: Limits;
}

/** Key → ETag of every object to fetch. */
type BucketIndex = Map<string, string>;

/** The region: spec.region, else that of an Amazon S3 host name, else the bucket's location. */
async function locate(f: BucketFetch, signal: AbortSignal): Promise<void> {
  const { client, def } = f;
  client.region = def.region || regionOfS3Host(hostnameOf(client.target.endpoint));
  if (client.region) return;
  try {
    client.region = await findRegion(client, signal, f.opts.log);
  } catch (err) {
    throw new BucketStepError('getting its location', def.bucketName, err);
  }
}

/** The root `.sourceignore`, downloaded into the artifact, and with spec.ignore the patterns that decide which keys count. */
async function ignorePatterns(f: BucketFetch, signal: AbortSignal): Promise<IgnorePattern[]> {
  let sourceignore: string | undefined;
  try {
    const res = await f.client.get(
      s3Url(f.client.target, f.client.region, SOURCEIGNORE_FILE),
      signal,
      SOURCEIGNORE_FILE,
    );
    await download(res, join(f.root, SOURCEIGNORE_FILE), f.budget, SOURCEIGNORE_FILE);
    sourceignore = await readFile(join(f.root, SOURCEIGNORE_FILE), 'utf8');
  } catch (err) {
    if (!(err instanceof S3Failure && err.code === 'NoSuchKey')) {
      throw new BucketStepError(`getting ${SOURCEIGNORE_FILE}`, f.def.bucketName, err);
    }
  }
  return bucketPatterns(sourceignore, f.def.ignore);
}

/** The keys under spec.prefix to fetch, page by page, within the limits on objects and bytes. */
async function listObjects(
  f: BucketFetch,
  patterns: readonly IgnorePattern[],
  signal: AbortSignal,
): Promise<BucketIndex> {
  const { client, prefix, maxObjects, budget } = f;
  const index: BucketIndex = new Map();
  let bytes = 0;
  let token: string | undefined;
  const tokens = new Set<string>();
  const step = prefix ? `listing the objects under '${prefix}'` : 'listing the objects';
  for (;;) {
    let page: ListPage;
    try {
      const res = await client.get(
        s3Url(client.target, client.region, undefined, listQuery(prefix, token, f.opts.pageSize)),
        signal,
      );
      page = parseListObjectsV2((await readBounded(res, MAX_LIST_BYTES, 'the page')).toString('utf8'));
    } catch (err) {
      throw new BucketStepError(step, f.def.bucketName, err);
    }
    for (const o of page.objects) {
      if (judgeKey(patterns, o.key) !== 'fetch') continue;
      const problem = keyProblem(o.key);
      if (problem !== undefined) throw new Error(`object key ${JSON.stringify(o.key)} is refused: ${problem}`);
      if (!index.has(o.key)) bytes += o.size;
      index.set(o.key, o.etag);
      if (index.size > maxObjects) throw new Error(`more than ${maxObjects} objects to fetch (the limit)`);
      if (bytes > budget.left) throw new Error(`the objects are larger than ${budget.max} bytes in all (the limit)`);
    }
    f.opts.budget?.check(bytes, index.size, `${f.name}, its ${index.size} objects to fetch`);
    if (!page.truncated) return index;
    if (page.nextToken === undefined) throw new Error(`${step}: the answer is truncated without a continuation token`);
    if (tokens.has(page.nextToken)) throw new Error(`${step}: the server repeats a continuation token`);
    tokens.add(page.nextToken);
    token = page.nextToken;
  }
}

/**
 * Downloads every key of `index` (in byte order, a few at once), the first failure stopping the
 * rest; an ETag the download answers replaces the listed one, and a key gone by then is dropped.
 */
async function downloadObjects(f: BucketFetch, index: BucketIndex, timeout: AbortSignal): Promise<void> {
  const { client } = f;
  const failed = new AbortController();
  const signal = AbortSignal.any([timeout, failed.signal]);
  await mapLimit([...index.keys()].sort(byBytes), BUCKET_CONCURRENCY, async (key) => {
    try {
      const path = objectPath(f.root, key);
      let res: Response;
      try {
        res = await client.get(s3Url(client.target, client.region, key), signal, key);
      } catch (err) {
        if (err instanceof S3Failure && err.code === 'NoSuchKey') {
          f.opts.log?.(`${f.name}: object '${key}' disappeared from the bucket`);
          index.delete(key);
          return;
        }
        throw err;
      }
      const etag = trimEtag(res.headers.get('etag') ?? '');
      await download(res, path, f.budget, key);
      if (etag !== '' && etag !== index.get(key)) index.set(key, etag);
    } catch (err) {
      failed.abort();
      throw new BucketStepError(`getting object '${key}'`, f.def.bucketName, err);
    }
  });
}

/** Fetches `def` into a new temporary directory; throws a sentence naming it on failure. */
export async function fetchBucket(def: BucketDef, opts: BucketFetchOptions): Promise<Fetched> {
  const f = await start(def, opts);
  try {
    const index = await phase('listing the bucket', f.timeoutMs, async (signal) => {
      await locate(f, signal);
      return listObjects(f, await ignorePatterns(f, signal), signal);
    });
    await phase('downloading the objects', f.timeoutMs, (signal) => downloadObjects(f, index, signal));
    return fetched(f, index);
  } catch (err) {
    await f.cleanup();
    throw fetchError(f, err);
  }
}

/** The fetch of `def` set up: refused (provider, endpoint, bucket name), else its credentials found and its scratch directory made. */
async function start(def: BucketDef, opts: BucketFetchOptions): Promise<BucketFetch> {
  const what = `Bucket ${def.namespace}/${def.name} (${def.file})`;
  const refusal = providerRefusal(def.provider) ?? endpointProblem(def.endpoint) ?? bucketNameProblem(def.bucketName);
  if (refusal !== undefined) throw new Error(`fetching ${what}: ${refusal}`);
  let auth: Auth;
  try {
    auth = await authFor(def, def.provider === 'aws', opts);
  } catch (err) {
    throw new Error(`fetching ${what}: ${(err as Error).message}`, { cause: err });
  }
  const target = s3Target(def);
  const maxBytes = opts.maxBytes ?? BUCKET_MAX_BYTES;
  const name = `Bucket ${def.namespace}/${def.name}`;
  const { dir: root, remove: cleanup } = await scratchDir('kr-bucket-');
  return {
    def,
    opts,
    what,
    from: `${target.scheme}://${target.endpoint}`,
    note: auth.note,
    client: new S3Client(target, auth, opts.retry),
    root,
    cleanup,
    name,
    prefix: def.prefix ?? '',
    timeoutMs: opts.timeoutMs ?? BUCKET_TIMEOUT_MS,
    maxObjects: opts.maxObjects ?? BUCKET_MAX_OBJECTS,
    budget: { left: maxBytes, max: maxBytes, what: name, ...(opts.budget ? { run: opts.budget } : {}) },
  };
}

/** The artifact: its revision from the index, said in the log. */
function fetched(f: BucketFetch, index: BucketIndex): Fetched {
  const revision = bucketRevision(index);
  f.opts.log?.(
    `Fetched ${f.name}: ${index.size} object(s), ${f.budget.max - f.budget.left} bytes of bucket '${f.def.bucketName}' at ${f.from}` +
      `${f.prefix ? ` under '${f.prefix}'` : ''}, revision ${revision}`,
  );
  return { root: f.root, revision, cleanup: f.cleanup };
}

/**
 * A failed fetch as one sentence: the Bucket, the endpoint, the bucket (unless a missing bucket
 * says it in Flux's words), what failed, and on a 401 or 403 which credentials were used.
 */
function fetchError(f: BucketFetch, err: unknown): Error {
  const status = failureOf(err)?.status;
  const hint = status === 401 || status === 403 ? ` (${f.note})` : '';
  const message = (err as Error).message;
  const said = err instanceof BucketStepError && err.missing ? message : `bucket '${f.def.bucketName}': ${message}`;
  return new Error(`fetching ${f.what} from ${f.from}: ${said}${hint}`, { cause: err });
}
