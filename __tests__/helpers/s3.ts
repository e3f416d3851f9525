// An S3 emulator on loopback for the Bucket source tests: moto's server (installed by
// test/kms/setup.sh, as for the KMS tests), on a free port, path-style (`http://127.0.0.1:PORT/bucket/key`).
// Objects are put with requests of this helper's own (signed with Signature Version 4: moto
// accepts any credentials until `requireAuth` makes it check them against its IAM).
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { signV4, type AwsCredentials } from '../../src/aws/sigv4.js';
import { REPO } from './paths.js';
import { freePort } from './ports.js';

export const MOTO = join(REPO, 'test', 'kms', 'bin', 'moto_server');
const REGION = 'us-east-1';

export interface S3Emulator {
  /** `127.0.0.1:PORT`, as a Bucket's spec.endpoint names it (with spec.insecure). */
  endpoint: string;
  /** `http://127.0.0.1:PORT`. */
  url: string;
  /** Creates a bucket, in `region` when given (a LocationConstraint). */
  createBucket: (bucket: string, region?: string) => Promise<void>;
  /** Puts an object (private unless `publicRead`); returns the ETag moto answered, quotes trimmed. */
  put: (bucket: string, key: string, body: string, opts?: { publicRead?: boolean }) => Promise<string>;
  remove: (bucket: string, key: string) => Promise<void>;
  /**
   * Makes an IAM user allowed s3:* and turns moto's authentication on: from then on every request
   * must be signed with a key of its IAM, and moto checks the signature. Returns that user's key.
   */
  requireAuth: () => Promise<AwsCredentials>;
  stop: () => Promise<void>;
}

/**
 * A key as a URL path, each segment percent-encoded as RFC 3986 says (`!'()*` too): moto checks a
 * signature against the path as sent, so it must be the canonical one.
 */
const keyPath = (key: string): string =>
  key
    .split('/')
    .map((s) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`))
    .join('/');

const xmlValue = (xml: string, tag: string): string | undefined =>
  new RegExp(`<${tag}>([^<]*)</${tag}>`).exec(xml)?.[1];

export async function startS3(): Promise<S3Emulator> {
  if (!existsSync(MOTO)) throw new Error(`${MOTO} is missing: run "bash test/kms/setup.sh" first`);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(MOTO, ['-H', '127.0.0.1', '-p', String(port)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const stderr: string[] = [];
  child.stderr?.on('data', (d: Buffer) => {
    if (stderr.length < 200) stderr.push(d.toString());
  });
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.on('exit', r));
    child.kill('SIGTERM');
    await exited;
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`moto_server exited with ${child.exitCode}:\n${stderr.join('')}`);
    try {
      const res = await fetch(`${url}/moto-api/data.json`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`moto_server did not answer in 60s:\n${stderr.join('')}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }

  let creds: AwsCredentials = { accessKeyId: 'AKIDS3HELPER', secretAccessKey: 'moto-s3-helper-secret' };

  const send = async (
    method: string,
    path: string,
    body: string,
    headers: Record<string, string>,
    service = 's3',
  ): Promise<{ status: number; text: string; etag: string }> => {
    const target = new URL(`${url}${path}`);
    const signed = signV4(
      {
        method,
        url: target,
        headers: { ...headers, 'x-amz-content-sha256': createHash('sha256').update(body, 'utf8').digest('hex') },
        body,
      },
      creds,
      REGION,
      service,
    );
    const res = await fetch(target, { method, headers: signed, ...(body ? { body } : {}) });
    const text = await res.text();
    if (!res.ok) throw new Error(`moto ${method} ${path}: HTTP ${res.status} ${text}`);
    return { status: res.status, text, etag: (res.headers.get('etag') ?? '').replace(/^"|"$/g, '') };
  };

  const iam = async (params: Record<string, string>): Promise<string> =>
    (
      await send(
        'POST',
        '/',
        new URLSearchParams({ ...params, Version: '2010-05-08' }).toString(),
        { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
        'iam',
      )
    ).text;

  return {
    endpoint: `127.0.0.1:${port}`,
    url,
    stop,
    createBucket: async (bucket, region) => {
      const body = region
        ? `<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><LocationConstraint>${region}</LocationConstraint></CreateBucketConfiguration>`
        : '';
      await send('PUT', `/${bucket}`, body, {});
    },
    put: async (bucket, key, body, opts) => {
      const headers: Record<string, string> = { 'content-type': 'application/octet-stream' };
      if (opts?.publicRead) headers['x-amz-acl'] = 'public-read';
      return (await send('PUT', `/${bucket}/${keyPath(key)}`, body, headers)).etag;
    },
    remove: async (bucket, key) => {
      await send('DELETE', `/${bucket}/${keyPath(key)}`, '', {});
    },
    requireAuth: async () => {
      const user = 'bucket-reader';
      await iam({ Action: 'CreateUser', UserName: user });
      const created = await iam({ Action: 'CreateAccessKey', UserName: user });
      const accessKeyId = xmlValue(created, 'AccessKeyId');
      const secretAccessKey = xmlValue(created, 'SecretAccessKey');
      if (!accessKeyId || !secretAccessKey) throw new Error(`moto CreateAccessKey: no key in ${created}`);
      await iam({
        Action: 'PutUserPolicy',
        UserName: user,
        PolicyName: 's3-all',
        PolicyDocument: JSON.stringify({
          Version: '2012-10-17',
          Statement: [{ Effect: 'Allow', Action: 's3:*', Resource: '*' }],
        }),
      });
      const res = await fetch(`${url}/moto-api/reset-auth`, { method: 'POST', body: '0' });
      if (!res.ok) throw new Error(`moto reset-auth: HTTP ${res.status}`);
      creds = { accessKeyId, secretAccessKey };
      return creds;
    },
  };
}
