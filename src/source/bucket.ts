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
 * location (GetBucketLocation), `us-east-1` when it has none. The credentials: spec.secretRef's
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
import { environmentCredentials } from '../aws/sigv4.js';
import { byBytes } from '../util/order.js';
import type { BucketDef } from '../flux/source-defs.js';
import { isIgnored, readPatterns, SOURCEIGNORE_FILE, type IgnorePattern } from '../kustomize/sourceignore.js';
import { mapLimit } from '../util/concurrency.js';
import { scratchDir } from '../util/scratch.js';
import { MAX_LIST_BYTES, readBounded } from './bounded.js';
import type { ExtractBudget } from './budget.js';
import type { Fetched } from './git.js';
import {
  bucketNameProblem,
  endpointProblem,
  envCredentialsRefusal,
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
  type S3Auth,
} from './s3.js';

export const BUCKET_MAX_OBJECTS = 20_000;
export const BUCKET_MAX_BYTES = 256 * 1024 * 1024;
export const BUCKET_TIMEOUT_MS = 60_000;
/** Downloads in flight at once (source-controller allows 100; a runner has 2 cores). */
export const BUCKET_CONCURRENCY = 16;

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
  /** The run's budget for extracted files, shared with every other source (budget.ts). */
  budget?: ExtractBudget;
  /** Why no credential at all may be used (the trust rule, trust.ts): the requests are unsigned. */
  anonymous?: string;
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

// ---- credentials --------------------------------------------------------------------------------

interface Auth extends S3Auth {
  /** Where the credentials come from, or why there are none: said when the server refuses. */
  note: string;
}

async function authFor(def: BucketDef, aws: boolean, opts: BucketFetchOptions): Promise<Auth> {
  if (opts.anonymous !== undefined) return { note: `the requests were unsigned: ${opts.anonymous}`, secrets: [] };
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
    const fromEnv = environmentCredentials(env);
    // The runner's credentials go to Amazon S3 only: spec.endpoint is the pull request's to choose.
    // Tests admit their loopback S3 emulator by name (KR_TEST_S3_ENDPOINTS, the runner's environment, never the tree's).
    const admitted =
      (env['KR_TEST_S3_ENDPOINTS'] ?? '').split(',').includes(def.endpoint) &&
      /^(127\.\d+\.\d+\.\d+|localhost)(:\d+)?$/.test(def.endpoint);
    const refusal = admitted ? undefined : envCredentialsRefusal(def.endpoint, def.insecure === true);
    if (fromEnv && refusal !== undefined) {
      const note = `the environment's AWS credentials are not sent: ${refusal}; give the Bucket a spec.secretRef for this endpoint`;
      opts.log?.(`Bucket ${def.namespace}/${def.name}: ${note}; fetching it unsigned`);
      notes.push(note);
    } else if (fromEnv) {
      const { accessKeyId, secretAccessKey, sessionToken } = fromEnv;
      for (const v of [accessKeyId, secretAccessKey, sessionToken]) if (v) opts.secret(v);
      return {
        creds: fromEnv,
        note: 'signed with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY',
        secrets: [secretAccessKey, sessionToken ?? ''],
      };
    }
    notes.push('AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set');
  } else if (def.secretRef === undefined) {
    notes.push('no spec.secretRef');
  }
  return { note: `the requests were unsigned: ${notes.join('; ')}`, secrets: [] };
}

// ---- steps --------------------------------------------------------------------------------------

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
  const client = new S3Client(target, auth);

  const { dir: root, remove: cleanup } = await scratchDir('kr-bucket-');
  const name = `Bucket ${def.namespace}/${def.name}`;
  const budget: Limits = { left: maxBytes, max: maxBytes, what: name, ...(opts.budget ? { run: opts.budget } : {}) };
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
        await download(res, join(root, SOURCEIGNORE_FILE), budget, SOURCEIGNORE_FILE);
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
          page = parseListObjectsV2((await readBounded(res, MAX_LIST_BYTES, 'the page')).toString('utf8'));
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
        opts.budget?.check(bytes, index.size, `${name}, its ${index.size} objects to fetch`);
        if (!page.truncated) break;
        if (page.nextToken === undefined)
          throw new Error(`${step}: the answer is truncated without a continuation token`);
        if (tokens.has(page.nextToken)) throw new Error(`${step}: the server repeats a continuation token`);
        tokens.add(page.nextToken);
        token = page.nextToken;
      }
    });

    const listed = [...index.keys()].sort(byBytes);
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
          await download(res, path, budget, key);
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
