// Fetching a Flux Bucket (src/source/bucket.ts) from an S3 emulator: moto's server on loopback
// (helpers/s3.ts; installed by test/kms/setup.sh). No cluster is used: Secrets come from a stub
// readSecret. moto checks nothing about signatures until `requireAuth`; then it checks each one
// against the key of its IAM user (the last describe, on a server of its own).
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BucketDef } from '../../src/flux/source-defs.js';
import { fetchBucket, type BucketFetchOptions } from '../../src/source/bucket.js';
import type { Fetched } from '../../src/source/git.js';
import { startS3, type S3Emulator } from '../helpers/s3.js';

let s3: S3Emulator;
let n = 0;

beforeAll(async () => {
  s3 = await startS3();
});

afterAll(async () => {
  await s3.stop();
});

/** A fresh bucket name. */
const bucketName = () => `kr-bucket-${process.pid}-${++n}`;

function def(bucket: string, spec: Partial<BucketDef> = {}): BucketDef {
  return {
    kind: 'Bucket',
    namespace: 'flux-system',
    name: 'apps',
    file: 'clusters/ci/bucket.yaml',
    provider: 'generic',
    bucketName: bucket,
    endpoint: s3.endpoint,
    insecure: true,
    ...spec,
  };
}

/** Options that record what is masked and logged. */
function recorder(extra: Partial<BucketFetchOptions> = {}) {
  const masked: string[] = [];
  const logged: string[] = [];
  const opts: BucketFetchOptions = {
    secret: (v) => masked.push(v),
    log: (l) => logged.push(l),
    env: {},
    ...extra,
  };
  return { masked, logged, opts };
}

/** The files below `root`, relative, sorted. */
async function files(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(root.length + 1))
    .sort();
}

/** The revision computed here from the format (source-controller's index digest), independently of the module. */
function expectedRevision(index: Record<string, string>): string {
  const keys = Object.keys(index).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const text = keys.map((k) => `${k} ${index[k]}\n`).join('');
  return `sha256:${createHash('sha256').update(text).digest('hex')}`;
}

async function withFetched<T>(d: BucketDef, opts: BucketFetchOptions, fn: (f: Fetched) => T | Promise<T>): Promise<T> {
  const fetched = await fetchBucket(d, opts);
  try {
    return await fn(fetched);
  } finally {
    await fetched.cleanup();
  }
}

async function failure(p: Promise<unknown>): Promise<Error> {
  return p.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e as Error,
  );
}

describe('fetching a Bucket from moto', () => {
  it('fetches the objects under spec.prefix, each at its key, with the revision of their ETags', async () => {
    const b = bucketName();
    await s3.createBucket(b);
    const etags: Record<string, string> = {};
    for (const [key, body] of [
      ['apps/a.yaml', 'kind: ConfigMap # a\n'],
      ['apps/sub dir/b+c.yaml', 'kind: ConfigMap # b\n'],
      ['apps/ünï/c.yaml', 'kind: ConfigMap # c\n'],
      ['other/d.yaml', 'kind: ConfigMap # d\n'],
      ['apps-not/e.yaml', 'kind: ConfigMap # e\n'],
    ] as const) {
      etags[key] = await s3.put(b, key, body, { publicRead: true });
    }
    const { opts, logged } = recorder();
    await withFetched(def(b, { prefix: 'apps/' }), opts, async ({ root, revision }) => {
      expect(await files(root)).toEqual(['apps/a.yaml', 'apps/sub dir/b+c.yaml', 'apps/ünï/c.yaml']);
      expect(await readFile(join(root, 'apps/a.yaml'), 'utf8')).toBe('kind: ConfigMap # a\n');
      expect(await readFile(join(root, 'apps/sub dir/b+c.yaml'), 'utf8')).toBe('kind: ConfigMap # b\n');
      expect(await readFile(join(root, 'apps/ünï/c.yaml'), 'utf8')).toBe('kind: ConfigMap # c\n');
      expect(revision).toBe(
        expectedRevision({
          'apps/a.yaml': etags['apps/a.yaml']!,
          'apps/sub dir/b+c.yaml': etags['apps/sub dir/b+c.yaml']!,
          'apps/ünï/c.yaml': etags['apps/ünï/c.yaml']!,
        }),
      );
      expect(etags['apps/a.yaml']).toBe(createHash('md5').update('kind: ConfigMap # a\n').digest('hex'));
    });
    expect(logged.some((l) => l.includes('3 object(s)') && l.includes("under 'apps/'"))).toBe(true);
  });

  it('lists every page: 23 objects four to a page give the same tree and revision as one page', async () => {
    const b = bucketName();
    await s3.createBucket(b);
    const keys = Array.from({ length: 23 }, (_, i) => `k/${String(i).padStart(2, '0')}.yaml`);
    for (const key of keys) await s3.put(b, key, `n: ${key}\n`, { publicRead: true });
    const paged = await withFetched(def(b), recorder({ pageSize: 4 }).opts, async ({ root, revision }) => {
      expect(await files(root)).toEqual(keys);
      expect(await readFile(join(root, 'k/22.yaml'), 'utf8')).toBe('n: k/22.yaml\n');
      return revision;
    });
    const whole = await withFetched(def(b), recorder().opts, ({ revision }) => revision);
    expect(paged).toBe(whole);
  });

  it('.sourceignore at the bucket root, then spec.ignore, choose the keys; no default exclusion applies', async () => {
    const b = bucketName();
    await s3.createBucket(b);
    const sourceignore = '# docs are not deployed\n*.md\n!keep.md\n/apps/drafts/\n';
    await s3.put(b, '.sourceignore', sourceignore, { publicRead: true });
    const etags: Record<string, string> = {};
    for (const key of [
      'apps/a.yaml',
      'apps/README.md',
      'apps/keep.md',
      'apps/drafts/x.yaml',
      'apps/secret-1.yaml',
      'apps/logo.png',
      'apps/.sops.yaml',
      'apps/.github/workflows/ci.yaml',
      'apps/dir/',
    ]) {
      etags[key] = await s3.put(b, key, key.endsWith('/') ? '' : `# ${key}\n`, { publicRead: true });
    }
    const spec = { prefix: 'apps/', ignore: 'secret-*.yaml\n!apps/keep.md\n' };
    await withFetched(def(b, spec), recorder().opts, async ({ root, revision }) => {
      const kept = [
        'apps/.github/workflows/ci.yaml',
        'apps/.sops.yaml',
        'apps/a.yaml',
        'apps/keep.md',
        'apps/logo.png',
      ];
      expect(await files(root)).toEqual(['.sourceignore', ...kept]);
      // Kept in the artifact as source-controller keeps it, but not in the index.
      expect(await readFile(join(root, '.sourceignore'), 'utf8')).toBe(sourceignore);
      expect(revision).toBe(expectedRevision(Object.fromEntries(kept.map((k) => [k, etags[k]!]))));
    });
  });

  it('the revision is stable, changes when a fetched object changes, and not when an ignored one does', async () => {
    const b = bucketName();
    await s3.createBucket(b);
    await s3.put(b, 'a.yaml', 'v: 1\n', { publicRead: true });
    await s3.put(b, 'notes.txt', 'one\n', { publicRead: true });
    const d = def(b, { ignore: '*.txt\n' });
    const revisionOf = () => withFetched(d, recorder().opts, ({ revision }) => revision);
    const first = await revisionOf();
    expect(await revisionOf()).toBe(first);
    await s3.put(b, 'notes.txt', 'two\n', { publicRead: true });
    expect(await revisionOf()).toBe(first);
    await s3.put(b, 'a.yaml', 'v: 2\n', { publicRead: true });
    const changed = await revisionOf();
    expect(changed).not.toBe(first);
    await withFetched(d, recorder().opts, async ({ root }) => {
      expect(await readFile(join(root, 'a.yaml'), 'utf8')).toBe('v: 2\n');
    });
    await s3.put(b, 'b.yaml', 'new\n', { publicRead: true });
    expect(await revisionOf()).not.toBe(changed);
  });

  it('private objects: refused unsigned, with the missing credential named; fetched with spec.secretRef', async () => {
    const b = bucketName();
    await s3.createBucket(b);
    await s3.put(b, 'app/cm.yaml', 'kind: ConfigMap\n');
    const err = await failure(fetchBucket(def(b), recorder().opts));
    expect(err.message).toBe(
      `fetching Bucket flux-system/apps (clusters/ci/bucket.yaml) from http://${s3.endpoint}: bucket '${b}': ` +
        "getting object 'app/cm.yaml': HTTP 403 (AccessDenied) (the requests were unsigned: no spec.secretRef)",
    );

    const data = { accesskey: 'AKIDBUCKETREADER', secretkey: 'bucket-secret-key-0123456789' };
    const asked: string[] = [];
    const { opts, masked } = recorder({
      readSecret: (namespace, name) => {
        asked.push(`${namespace}/${name}`);
        return Promise.resolve(data);
      },
    });
    await withFetched(def(b, { secretRef: 'minio-credentials' }), opts, async ({ root }) => {
      expect(await readFile(join(root, 'app/cm.yaml'), 'utf8')).toBe('kind: ConfigMap\n');
    });
    expect(asked).toEqual(['flux-system/minio-credentials']);
    expect(masked).toEqual(expect.arrayContaining([data.accesskey, data.secretkey]));
  });

  it('a spec.secretRef that cannot be read: the error says so when the server refuses', async () => {
    const b = bucketName();
    await s3.createBucket(b);
    await s3.put(b, 'x.yaml', 'x\n');
    const { opts } = recorder({ readSecret: () => Promise.reject(new Error('secrets "creds" is forbidden')) });
    const err = await failure(fetchBucket(def(b, { secretRef: 'creds' }), opts));
    expect(err.message).toMatch(
      /HTTP 403 \(AccessDenied\) \(the requests were unsigned: spec\.secretRef creds could not be read: secrets "creds" is forbidden\)$/,
    );
  });

  it('a Secret without accesskey and secretkey is refused in Flux’s words', async () => {
    const b = bucketName();
    const { opts, masked } = recorder({ readSecret: () => Promise.resolve({ accesskey: 'AKIDONLYACCESS' }) });
    const err = await failure(fetchBucket(def(b, { secretRef: 'half' }), opts));
    expect(err.message).toBe(
      "fetching Bucket flux-system/apps (clusters/ci/bucket.yaml): invalid 'half' secret data: required fields 'accesskey' and 'secretkey'",
    );
    expect(masked).toEqual(['AKIDONLYACCESS']);
  });

  it('provider aws takes the AWS_* variables, masked; the bucket’s location gives the region', async () => {
    const b = bucketName();
    await s3.createBucket(b, 'eu-west-1');
    await s3.put(b, 'cm.yaml', 'aws\n');
    const env = {
      AWS_ACCESS_KEY_ID: 'AKIDFROMTHEENV',
      AWS_SECRET_ACCESS_KEY: 'env-secret-access-key-012345',
      AWS_SESSION_TOKEN: 'env-session-token-0123456789',
    };
    // The emulator is admitted as Amazon S3 by the test-only KR_TEST_S3_ENDPOINTS (the runner's environment).
    const { opts, masked, logged } = recorder({ env: { ...env, KR_TEST_S3_ENDPOINTS: s3.endpoint } });
    await withFetched(def(b, { provider: 'aws' }), opts, async ({ root }) => {
      expect(await readFile(join(root, 'cm.yaml'), 'utf8')).toBe('aws\n');
    });
    expect(masked).toEqual(expect.arrayContaining(Object.values(env)));
    expect(logged).toContain(`Bucket ${b}: region eu-west-1 (its location)`);

    // Without it, an endpoint that is not Amazon S3 never gets them: unsigned, refused, saying why.
    const unsigned = recorder({ env });
    const refused = await failure(fetchBucket(def(b, { provider: 'aws' }), unsigned.opts));
    expect(refused.message).toContain("the environment's AWS credentials are not sent");
    expect(unsigned.masked).not.toContain(env.AWS_SECRET_ACCESS_KEY);

    // The generic provider never reads them: unsigned, refused.
    const err = await failure(fetchBucket(def(b), recorder({ env }).opts));
    expect(err.message).toMatch(/HTTP 403 \(AccessDenied\) \(the requests were unsigned: no spec\.secretRef\)$/);
  });

  it('a missing bucket is not found, in Flux’s words', async () => {
    const err = await failure(fetchBucket(def('no-such-bucket-here'), recorder().opts));
    expect(err.message).toBe(
      `fetching Bucket flux-system/apps (clusters/ci/bucket.yaml) from http://${s3.endpoint}: bucket 'no-such-bucket-here' not found ` +
        '(getting its location: HTTP 404 (NoSuchBucket: The specified bucket does not exist))',
    );
    const withRegion = await failure(fetchBucket(def('no-such-bucket-here', { region: 'us-east-1' }), recorder().opts));
    expect(withRegion.message).toMatch(
      /bucket 'no-such-bucket-here' not found \(getting \.sourceignore: HTTP 404 \(NoSuchBucket/,
    );
  });

  it.each([
    ['gcp', /provider gcp \(the Google Cloud Storage API\) is not supported: only providers generic and aws/],
    ['azure', /provider azure \(the Azure Blob Storage API\) is not supported/],
  ])('provider %s is refused before any request', async (provider, message) => {
    const err = await failure(
      fetchBucket(def('any-bucket', { provider, endpoint: 'storage.example' }), recorder().opts),
    );
    expect(err.message).toMatch(/^fetching Bucket flux-system\/apps \(clusters\/ci\/bucket\.yaml\): /);
    expect(err.message).toMatch(message);
  });

  describe('limits, and the temporary directory removed on failure', () => {
    let tmp: string;
    const before = process.env['TMPDIR'];
    beforeAll(async () => {
      tmp = await mkdtemp(join(tmpdir(), 'kr-bucket-test-'));
      process.env['TMPDIR'] = tmp;
    });
    afterAll(async () => {
      if (before === undefined) delete process.env['TMPDIR'];
      else process.env['TMPDIR'] = before;
      await rm(tmp, { recursive: true, force: true });
    });

    it.each([
      ['objects', { maxObjects: 3 }, /: more than 3 objects to fetch \(the limit\)$/],
      ['bytes', { maxBytes: 25 }, /: the objects are larger than 25 bytes in all \(the limit\)$/],
    ])('more %s than the limit', async (_, limits, message) => {
      const b = bucketName();
      await s3.createBucket(b);
      for (const key of ['a', 'b', 'c', 'd']) await s3.put(b, `${key}.yaml`, '0123456789', { publicRead: true });
      const err = await failure(fetchBucket(def(b), recorder(limits).opts));
      expect(err.message).toMatch(message);
      expect(await readdir(tmp)).toEqual([]);
    });

    it('a key naming a path outside the root is refused, unless ignored', async () => {
      const b = bucketName();
      await s3.createBucket(b);
      await s3.put(b, 'ok.yaml', 'ok\n', { publicRead: true });
      // fetch() would resolve `..` in the URL: put through node:http, which sends the path as given.
      await rawPut(`/${b}/a/%2E%2E/%2E%2E/escaped.yaml`, 'no\n');
      const err = await failure(fetchBucket(def(b), recorder().opts));
      expect(err.message).toMatch(/: object key "a\/\.\.\/\.\.\/escaped\.yaml" is refused: it has a \.\. segment$/);
      expect(await readdir(tmp)).toEqual([]);
      expect(existsSync(join(tmp, '..', 'escaped.yaml'))).toBe(false);
      await withFetched(def(b, { ignore: '/a/\n' }), recorder().opts, async ({ root }) => {
        expect(await files(root)).toEqual(['ok.yaml']);
      });
    });
  });

  it('a server that does not answer: the phase times out, said as such', async () => {
    const sockets = new Set<import('node:net').Socket>();
    const server: Server = createServer(() => {
      // never answers
    });
    server.on('connection', (s) => sockets.add(s));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const endpoint = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const err = await failure(
        fetchBucket(def('stalled-bucket', { endpoint, region: 'us-east-1' }), recorder({ timeoutMs: 300 }).opts),
      );
      expect(err.message).toBe(
        `fetching Bucket flux-system/apps (clusters/ci/bucket.yaml) from http://${endpoint}: bucket 'stalled-bucket': listing the bucket timed out after 0.3s`,
      );
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    }
  });
});

/** PUTs an object with the path sent exactly as given (moto accepts unsigned writes to a bucket of its account). */
async function rawPut(path: string, body: string): Promise<void> {
  const { request } = await import('node:http');
  const u = new URL(s3.url);
  await new Promise<void>((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        method: 'PUT',
        path,
        headers: { 'content-type': 'application/octet-stream', 'x-amz-acl': 'public-read' },
      },
      (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode === 200) resolve();
          else reject(new Error(`raw PUT ${path}: HTTP ${res.statusCode}`));
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('fetching from moto with its authentication on', () => {
  let strict: S3Emulator;
  let key: { accessKeyId: string; secretAccessKey: string };
  const b = 'kr-bucket-signed';

  beforeAll(async () => {
    strict = await startS3();
    await strict.createBucket(b);
    key = await strict.requireAuth();
    await strict.put(b, 'apps/sub dir/a+b (1).yaml', 'signed: true\n');
    await strict.put(b, 'apps/ü.yaml', 'unicode: true\n');
  });
  afterAll(async () => {
    await strict.stop();
  });

  const signedDef = (secretRef: string) => ({ ...def(b, { secretRef, prefix: 'apps/' }), endpoint: strict.endpoint });

  it('moto verifies every signature made with spec.secretRef’s key: listing, pages and odd keys', async () => {
    const { opts } = recorder({
      pageSize: 1,
      readSecret: () => Promise.resolve({ accesskey: key.accessKeyId, secretkey: key.secretAccessKey }),
    });
    await withFetched(signedDef('good'), opts, async ({ root }) => {
      expect(await files(root)).toEqual(['apps/sub dir/a+b (1).yaml', 'apps/ü.yaml']);
      expect(await readFile(join(root, 'apps/sub dir/a+b (1).yaml'), 'utf8')).toBe('signed: true\n');
    });
  });

  it('a wrong secret key: SignatureDoesNotMatch, and which credentials were used', async () => {
    const { opts } = recorder({
      readSecret: () => Promise.resolve({ accesskey: key.accessKeyId, secretkey: 'not-the-secret-key-000000' }),
    });
    const err = await failure(fetchBucket(signedDef('wrong'), opts));
    expect(err.message).toMatch(
      /: HTTP 403 \(SignatureDoesNotMatch: The request signature we calculated does not match/,
    );
    expect(err.message).toMatch(/\(signed with the accesskey and secretkey of spec\.secretRef wrong\)$/);
    expect(err.message).not.toContain('not-the-secret-key-000000');
  });
});
