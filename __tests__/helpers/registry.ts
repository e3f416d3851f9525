// A real OCI registry on loopback for the OCIRepository tests: the CNCF distribution registry that
// test/registry/build.sh builds, with filesystem storage in a temporary directory. Optionally behind
// an auth front that behaves as ghcr.io does: every /v2/ request without a valid bearer token gets a
// 401 with a `Bearer realm=…,service=…,scope=…` challenge; the realm hands out tokens for basic
// credentials it knows (anonymous and wrong ones are refused); a request with a token for its
// repository is proxied to the registry. `pushFluxArtifact` pushes a directory as
// `flux push artifact` does.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO } from './paths.js';
import { freePort } from './ports.js';

const run = promisify(execFile);
export const REGISTRY_BIN = join(REPO, 'test', 'registry', 'bin', 'registry');

export const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
export const FLUX_CONFIG = 'application/vnd.cncf.flux.config.v1+json';
export const FLUX_CONTENT = 'application/vnd.cncf.flux.content.v1.tar+gzip';

export interface TestRegistry {
  /** host:port to pull from: the auth front when there is one, else the registry. */
  host: string;
  /** host:port of the registry itself (no auth): push here. */
  registryHost: string;
  /** What the auth front saw: each token request's basic user (undefined: anonymous) and scope. */
  tokenRequests: { user: string | undefined; scope: string | null; service: string | null }[];
  stop: () => Promise<void>;
}

export interface RegistryOptions {
  /** Put the ghcr.io-like token front before the registry, accepting these logins. */
  auth?: { logins: { username: string; password: string }[]; service?: string };
}

/** Starts the registry (and the front when asked) and waits until `/v2/` answers. */
export async function startRegistry(opts: RegistryOptions = {}): Promise<TestRegistry> {
  if (!existsSync(REGISTRY_BIN)) throw new Error(`${REGISTRY_BIN} is missing: run "bash test/registry/build.sh" first`);
  const dir = await mkdtemp(join(tmpdir(), 'kr-registry-'));
  const port = await freePort();
  const config = [
    'version: 0.1',
    'log:',
    '  level: warn',
    '  accesslog:',
    '    disabled: true',
    'storage:',
    '  filesystem:',
    `    rootdirectory: ${join(dir, 'data')}`,
    '  delete:',
    '    enabled: true',
    'http:',
    `  addr: 127.0.0.1:${port}`,
    `  secret: ${randomBytes(16).toString('hex')}`,
    '',
  ].join('\n');
  await writeFile(join(dir, 'config.yml'), config);
  // No tracing exporter: the registry's OpenTelemetry would otherwise try an OTLP collector.
  const env = {
    ...process.env,
    OTEL_TRACES_EXPORTER: 'none',
    OTEL_METRICS_EXPORTER: 'none',
    OTEL_LOGS_EXPORTER: 'none',
  };
  const child: ChildProcess = spawn(REGISTRY_BIN, ['serve', join(dir, 'config.yml')], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const stderr: string[] = [];
  child.stderr?.on('data', (d: Buffer) => stderr.push(d.toString()));
  const registryHost = `127.0.0.1:${port}`;
  const stopChild = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.on('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
  };
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the registry exited with ${child.exitCode}:\n${stderr.join('')}`);
      try {
        const res = await fetch(`http://${registryHost}/v2/`);
        if (res.ok) break;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`the registry did not answer in 30s:\n${stderr.join('')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (err) {
    await stopChild();
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  const tokenRequests: TestRegistry['tokenRequests'] = [];
  const front = opts.auth ? await startFront(registryHost, opts.auth, tokenRequests) : undefined;
  return {
    host: front?.host ?? registryHost,
    registryHost,
    tokenRequests,
    stop: async () => {
      await front?.close();
      await stopChild();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The ghcr.io-like token front (see the file's comment). */
async function startFront(
  registryHost: string,
  auth: NonNullable<RegistryOptions['auth']>,
  tokenRequests: TestRegistry['tokenRequests'],
): Promise<{ host: string; close: () => Promise<void> }> {
  /** token → the repository it may pull. */
  const tokens = new Map<string, string>();
  let host = '';
  const service = auth.service ?? 'test-registry';
  const deny = (res: http.ServerResponse, status: number, code: string, message: string, challenge?: string) => {
    res
      .writeHead(status, {
        'content-type': 'application/json',
        ...(challenge !== undefined ? { 'www-authenticate': challenge } : {}),
      })
      .end(JSON.stringify({ errors: [{ code, message }] }));
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://${host}`);
    if (url.pathname === '/token') {
      const header = req.headers.authorization;
      let user: string | undefined;
      let password: string | undefined;
      if (header?.startsWith('Basic ')) {
        const decoded = Buffer.from(header.slice('Basic '.length), 'base64').toString('utf8');
        const colon = decoded.indexOf(':');
        user = decoded.slice(0, colon);
        password = decoded.slice(colon + 1);
      }
      const scope = url.searchParams.get('scope');
      tokenRequests.push({ user, scope, service: url.searchParams.get('service') });
      if (user === undefined) {
        deny(res, 401, 'UNAUTHORIZED', 'authentication required');
        return;
      }
      if (!auth.logins.some((l) => l.username === user && l.password === password)) {
        deny(res, 403, 'DENIED', 'requested access to the resource is denied');
        return;
      }
      const repo = /^repository:([^:]+):pull$/.exec(scope ?? '')?.[1];
      if (repo === undefined || url.searchParams.get('service') !== service) {
        deny(res, 400, 'INVALID_REQUEST', `bad scope ${scope} or service`);
        return;
      }
      const token = randomBytes(24).toString('base64url');
      tokens.set(token, repo);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token }));
      return;
    }
    const name = /^\/v2\/(.+?)\/(?:manifests|blobs|tags)\//.exec(url.pathname)?.[1];
    const challenge = `Bearer realm="http://${host}/token",service="${service}"${name !== undefined ? `,scope="repository:${name}:pull"` : ''}`;
    const bearer = req.headers.authorization?.startsWith('Bearer ') ? req.headers.authorization.slice(7) : undefined;
    const allowed = bearer === undefined ? undefined : tokens.get(bearer);
    if (allowed === undefined || (name !== undefined && allowed !== name)) {
      deny(res, 401, 'UNAUTHORIZED', 'authentication required', challenge);
      return;
    }
    const headers = { ...req.headers };
    delete headers.authorization;
    const upstream = http.request(
      { host: '127.0.0.1', port: Number(registryHost.split(':')[1]), method: req.method, path: req.url, headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', (err) => {
      res.writeHead(502).end(err.message);
    });
    req.pipe(upstream);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    host,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => {
          r();
        });
      }),
  };
}

const digestOf = (data: Buffer) => `sha256:${createHash('sha256').update(data).digest('hex')}`;

async function ok(res: Response, what: string, status: number): Promise<Response> {
  if (res.status !== status) throw new Error(`${what}: HTTP ${res.status} ${await res.text()}`);
  return res;
}

/** Uploads a blob (POST, then PUT ?digest=) unless the registry has it; returns its descriptor. */
export async function pushBlob(host: string, repo: string, data: Buffer, mediaType: string) {
  const digest = digestOf(data);
  const start = await ok(
    await fetch(`http://${host}/v2/${repo}/blobs/uploads/`, { method: 'POST' }),
    'starting an upload',
    202,
  );
  const location = new URL(start.headers.get('location')!, `http://${host}`);
  location.searchParams.set('digest', digest);
  await ok(
    await fetch(location, { method: 'PUT', body: data, headers: { 'content-type': 'application/octet-stream' } }),
    'finishing an upload',
    201,
  );
  return { mediaType, digest, size: data.length };
}

/** PUTs a manifest (any JSON) at `reference`; returns its digest, checked against the registry's. */
export async function putManifest(host: string, repo: string, reference: string, manifest: object, mediaType: string) {
  const body = Buffer.from(JSON.stringify(manifest));
  const res = await ok(
    await fetch(`http://${host}/v2/${repo}/manifests/${reference}`, {
      method: 'PUT',
      body,
      headers: { 'content-type': mediaType },
    }),
    `pushing the manifest ${repo}:${reference}`,
    201,
  );
  const digest = digestOf(body);
  const said = res.headers.get('docker-content-digest');
  if (said !== digest) throw new Error(`the registry says the manifest's digest is ${said}, not ${digest}`);
  return digest;
}

/** `dir` as a gzip tarball (the system's tar: fine for tests). */
export async function tarGz(dir: string): Promise<Buffer> {
  const { stdout } = await run('tar', ['-C', dir, '--sort=name', '--owner=0', '--group=0', '-czf', '-', '.'], {
    encoding: 'buffer',
    maxBuffer: 64 << 20,
  });
  return stdout;
}

export interface PushOptions {
  /** The layers, in order (default: `dir` as Flux's content layer). */
  layers?: { mediaType: string; data: Buffer }[];
  source?: string;
  revision?: string;
}

/**
 * Pushes `dir` as `flux push artifact` does: its tarball as a layer of Flux's content type, an
 * empty JSON config of Flux's config type, an OCI image manifest with the OpenContainers annotations
 * Flux sets (created, source, revision), tagged `tag`; returns the manifest's digest.
 */
export async function pushFluxArtifact(
  host: string,
  repo: string,
  tag: string,
  dir: string,
  opts: PushOptions = {},
): Promise<string> {
  const layers = opts.layers ?? [{ mediaType: FLUX_CONTENT, data: await tarGz(dir) }];
  const config = await pushBlob(host, repo, Buffer.from('{}'), FLUX_CONFIG);
  const descriptors = [];
  for (const l of layers) descriptors.push(await pushBlob(host, repo, l.data, l.mediaType));
  const manifest = {
    schemaVersion: 2,
    mediaType: OCI_MANIFEST,
    config,
    layers: descriptors,
    annotations: {
      'org.opencontainers.image.created': new Date().toISOString(),
      'org.opencontainers.image.source': opts.source ?? 'https://github.com/example/repo',
      'org.opencontainers.image.revision': opts.revision ?? `main@sha1:${'0'.repeat(40)}`,
    },
  };
  return putManifest(host, repo, tag, manifest, OCI_MANIFEST);
}
