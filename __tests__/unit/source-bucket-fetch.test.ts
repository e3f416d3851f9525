// fetchBucket against a small S3 server on this machine: the environment's AWS credentials are not
// sent to an endpoint that is not Amazon S3's, and the objects are taken from the run's budget.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BucketDef } from '../../src/flux/source-defs.js';
import { fetchBucket } from '../../src/source/bucket.js';
import { ExtractBudget } from '../../src/source/budget.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

const OBJECTS: Record<string, string> = { 'a.yaml': 'a'.repeat(1000), 'b.yaml': 'b'.repeat(1000), 'c.yaml': 'c' };

let server: Server;
let endpoint: string;
const seen: IncomingMessage[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req);
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.searchParams.get('list-type') === '2') {
      const contents = Object.entries(OBJECTS)
        .map(([k, v]) => `<Contents><Key>${k}</Key><ETag>"e-${k}"</ETag><Size>${v.length}</Size></Contents>`)
        .join('');
      res.end(`<ListBucketResult>${contents}<IsTruncated>false</IsTruncated></ListBucketResult>`);
      return;
    }
    const key = url.pathname.replace(/^\/bucket\//, '');
    const body = OBJECTS[key];
    if (body === undefined) {
      res.statusCode = 404;
      res.end('<Error><Code>NoSuchKey</Code></Error>');
      return;
    }
    res.setHeader('etag', `"e-${key}"`);
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

const def = (extra: Partial<BucketDef> = {}): BucketDef => ({
  kind: 'Bucket',
  namespace: 'ns',
  name: 'b',
  file: 'clusters/b.yaml',
  provider: 'generic',
  bucketName: 'bucket',
  endpoint,
  insecure: true,
  region: 'us-east-1',
  ...extra,
});

const AWS_ENV = { AWS_ACCESS_KEY_ID: 'AKIDCANARY', AWS_SECRET_ACCESS_KEY: 'secretcanary', AWS_SESSION_TOKEN: 'tok' };

describe('fetchBucket provider aws with the environment credentials', () => {
  it('an endpoint that is not Amazon S3 is fetched unsigned, with a note saying why', async () => {
    seen.length = 0;
    const lines: string[] = [];
    const masked: string[] = [];
    const got = await fetchBucket(def({ provider: 'aws' }), {
      secret: (v) => masked.push(v),
      env: AWS_ENV,
      log: (l) => lines.push(l),
    });
    await got.cleanup();
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.filter((r) => r.headers.authorization !== undefined || r.headers['x-amz-security-token'])).toEqual([]);
    expect(lines).toContain(
      `Bucket ns/b: the environment's AWS credentials are not sent: spec.insecure is true, and they are never sent over plain http; give the Bucket a spec.secretRef for this endpoint; fetching it unsigned`,
    );
    expect(masked).toEqual([]);
  });

  it('withheld by the trust rule, neither the environment nor the Secret is used', async () => {
    seen.length = 0;
    const masked: string[] = [];
    let read = 0;
    const got = await fetchBucket(def({ provider: 'aws', secretRef: 'keys' }), {
      secret: (v) => masked.push(v),
      env: AWS_ENV,
      readSecret: () => {
        read++;
        return Promise.resolve({ accesskey: 'AKIDSECRET', secretkey: 'sk' });
      },
      anonymous: 'its definition is not the same on the base commit',
    }).catch((err: unknown) => err as Error);
    if ('cleanup' in got) await got.cleanup();
    expect(read).toBe(0);
    expect(masked).toEqual([]);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.filter((r) => r.headers.authorization !== undefined || r.headers['x-amz-security-token'])).toEqual([]);
  });

  it('a generic provider never reads them', async () => {
    seen.length = 0;
    const got = await fetchBucket(def(), { secret: () => undefined, env: AWS_ENV });
    await got.cleanup();
    expect(seen.some((r) => r.headers.authorization !== undefined)).toBe(false);
  });
});

describe('fetchBucket under the run budget', () => {
  it.each<[string, ExtractBudget, string | undefined]>([
    ['within the budget', new ExtractBudget(10_000, 10), undefined],
    [
      'more files than the budget has',
      new ExtractBudget(10_000, 2),
      'Bucket ns/b, its 3 objects to fetch would pass the 2 files',
    ],
    [
      'more bytes than the budget has',
      new ExtractBudget(1500, 10),
      'Bucket ns/b, its 3 objects to fetch would pass the 1,500 bytes',
    ],
  ])('%s', async (_, budget, error) => {
    const run = fetchBucket(def(), { secret: () => undefined, budget });
    if (error === undefined) {
      const got = await run;
      await got.cleanup();
      expect(budget.spent).toEqual({ bytes: 2001, files: 3 });
    } else {
      await expect(run).rejects.toThrow(`the run's budget for extracted files is spent`);
      await expect(run).rejects.toThrow(error);
    }
  });

  it('a budget already spent by other sources stops the download', async () => {
    const budget = new ExtractBudget(3000, 10);
    budget.take(1500, 0, 'an OCI layer');
    await expect(fetchBucket(def(), { secret: () => undefined, budget })).rejects.toThrow('would pass the 3,000 bytes');
  });
});
