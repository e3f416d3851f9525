/**
 * The real Flux kustomize-controller (built by test/flux/build.sh) on a test cluster: install the CRDs it
 * needs, start it out of cluster, hand it sources as ExternalArtifacts served by a loopback HTTP server,
 * trigger reconciles and wait for them, and read its verdicts from its JSON log.
 *
 * Used by the parity suite (test/parity/) as an oracle, by bench/run.ts as a peer, and by test/flux/up.ts.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import https from 'node:https';
import { parse } from 'yaml';

const run = promisify(execFile);

/**
 * What this module needs of a Kubernetes client: the project's ClusterClient fits, and so does
 * `testClusterClient` (for scripts run by Node directly, which cannot import the TypeScript sources).
 */
export interface Api {
  request<T>(
    method: string,
    path: string,
    opts?: { body?: unknown; contentType?: string; query?: Record<string, string | boolean | number | undefined> },
  ): Promise<T>;
}

/** An error answer of the API server; `status` as in the project's ApiError. */
export class HttpError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

function isNotFound(err: unknown): boolean {
  return (err as { status?: unknown } | null)?.status === 404;
}

/** A client for a test cluster's admin kubeconfig (client certificate, inline data). */
export async function testClusterClient(kubeconfig: string): Promise<Api & { close(): void }> {
  const doc = parse(await readFile(kubeconfig, 'utf8')) as {
    'current-context'?: string;
    clusters?: { name: string; cluster: { server: string; 'certificate-authority-data'?: string } }[];
    contexts?: { name: string; context: { cluster: string; user: string } }[];
    users?: { name: string; user: { 'client-certificate-data'?: string; 'client-key-data'?: string } }[];
  };
  const ctx = doc.contexts?.find((c) => c.name === doc['current-context'])?.context;
  const cluster = doc.clusters?.find((c) => c.name === ctx?.cluster)?.cluster;
  const user = doc.users?.find((u) => u.name === ctx?.user)?.user;
  if (!cluster || !user) throw new Error(`${kubeconfig}: no current context with a cluster and a user`);
  const b64 = (s: string | undefined): Buffer | undefined => (s ? Buffer.from(s, 'base64') : undefined);
  const agent = new https.Agent({
    keepAlive: true,
    ca: b64(cluster['certificate-authority-data']),
    cert: b64(user['client-certificate-data']),
    key: b64(user['client-key-data']),
  });
  return {
    close: () => {
      agent.destroy();
    },
    request: <T>(
      method: string,
      path: string,
      opts: {
        body?: unknown;
        contentType?: string;
        query?: Record<string, string | boolean | number | undefined>;
      } = {},
    ) =>
      new Promise<T>((resolveP, reject) => {
        const url = new URL(cluster.server.replace(/\/$/, '') + path);
        for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
        const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
        const req = https.request(
          url,
          {
            method,
            agent,
            headers: {
              accept: 'application/json',
              ...(body !== undefined ? { 'content-type': opts.contentType ?? 'application/json' } : {}),
            },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => {
              const text = Buffer.concat(chunks).toString('utf8');
              const status = res.statusCode ?? 0;
              if (status >= 200 && status < 300) resolveP((text === '' ? undefined : JSON.parse(text)) as T);
              else reject(new HttpError(status, `${method} ${url.pathname}: ${status} ${text.slice(0, 500)}`));
            });
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.end(body);
      }),
  };
}

export const FLUX_DIR = resolve(import.meta.dirname);
export const FLUX_BIN = join(FLUX_DIR, 'bin', 'kustomize-controller');
export const FLUX_CRDS = join(FLUX_DIR, 'bin', 'crds');
export const KUSTOMIZE_API = 'kustomize.toolkit.fluxcd.io/v1';
export const SOURCE_API = 'source.toolkit.fluxcd.io/v1';

/** Server-side applies every CRD in test/flux/bin/crds (idempotent) and waits until each is served. */
export async function installFluxCrds(client: Api): Promise<void> {
  if (!existsSync(FLUX_CRDS)) throw new Error(`${FLUX_CRDS} is missing: run "bash test/flux/build.sh" first`);
  const files = (await readdir(FLUX_CRDS)).filter((f) => f.endsWith('.yaml')).sort();
  const names: string[] = [];
  for (const file of files) {
    for (const doc of parseAllDocuments(await readFile(join(FLUX_CRDS, file), 'utf8'))) {
      const crd = doc.toJS() as { metadata?: { name?: string } } | null;
      const name = crd?.metadata?.name;
      if (!name) continue;
      await client.request('PATCH', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`, {
        body: crd,
        contentType: 'application/apply-patch+yaml',
        query: { fieldManager: 'kr-flux-setup', force: true },
      });
      names.push(name);
    }
  }
  for (const name of names) {
    await until(`CRD ${name} to be established`, 60_000, async () => {
      const crd = await client.request<{ status?: { conditions?: Condition[] } }>(
        'GET',
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`,
      );
      return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ? true : undefined;
    });
  }
}

/** Creates namespace `name` when missing (server-side apply as `fieldManager`). */
export async function ensureNamespace(api: Api, name: string, fieldManager = 'kr-flux-setup'): Promise<void> {
  await api.request('PATCH', `/api/v1/namespaces/${name}`, {
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
    contentType: 'application/apply-patch+yaml',
    query: { fieldManager },
  });
}

export interface FluxOptions {
  kubeconfig: string;
  /** Where the log goes (`kustomize-controller.log`). */
  dir: string;
  /** --kube-api-qps / --kube-api-burst; Flux's defaults (50 / 300) when absent. */
  qps?: number;
  burst?: number;
  /** --requeue-dependency: how soon a Kustomization waiting on dependsOn looks again (Flux: 30s). */
  requeueDependency?: string;
  extraArgs?: string[];
}

/** One line of the controller's JSON log. */
export interface FluxLogLine {
  level?: string;
  ts?: string;
  msg?: string;
  name?: string;
  namespace?: string;
  revision?: string;
  output?: Record<string, string> | Record<string, string[]>;
  error?: string;
  [k: string]: unknown;
}

export class FluxController {
  readonly child: ChildProcess;
  readonly logFile: string;
  readonly args: string[];
  private constructor(child: ChildProcess, logFile: string, args: string[]) {
    this.child = child;
    this.logFile = logFile;
    this.args = args;
  }

  static async start(opts: FluxOptions): Promise<FluxController> {
    if (!existsSync(FLUX_BIN)) throw new Error(`${FLUX_BIN} is missing: run "bash test/flux/build.sh" first`);
    await mkdir(opts.dir, { recursive: true });
    const logFile = join(opts.dir, 'kustomize-controller.log');
    const args = [
      '--feature-gates=ExternalArtifact=true',
      '--metrics-addr=127.0.0.1:0',
      '--health-addr=127.0.0.1:0',
      '--enable-leader-election=false',
      '--log-encoding=json',
      '--log-level=info',
      '--watch-all-namespaces=true',
      `--requeue-dependency=${opts.requeueDependency ?? '30s'}`,
      ...(opts.qps !== undefined ? [`--kube-api-qps=${opts.qps}`] : []),
      ...(opts.burst !== undefined ? [`--kube-api-burst=${opts.burst}`] : []),
      ...(opts.extraArgs ?? []),
    ];
    const out = createWriteStream(logFile, { flags: 'a' });
    await new Promise((r) => out.on('open', r));
    // Its own temporary directory: at start the controller purges every /tmp/kustomization-* it finds,
    // which would pull the build directories from under another controller on the same machine.
    const tmp = join(opts.dir, 'tmp');
    await mkdir(tmp, { recursive: true });
    const child = spawn(FLUX_BIN, args, {
      env: { ...process.env, KUBECONFIG: opts.kubeconfig, RUNTIME_NAMESPACE: 'flux-system', TMPDIR: tmp },
      stdio: ['ignore', out, out],
    });
    const flux = new FluxController(child, logFile, args);
    // Ready when its informers have synced: it logs "Starting workers" for the kustomization controller.
    await until('kustomize-controller to start its workers', 60_000, async () => {
      if (child.exitCode !== null) {
        throw new Fatal(`kustomize-controller exited with ${child.exitCode}; log: ${logFile}`);
      }
      const lines = await flux.lines();
      return lines.some((l) => l.msg === 'Starting workers') ? true : undefined;
    });
    return flux;
  }

  get pid(): number {
    return this.child.pid ?? 0;
  }

  /** Every JSON line the controller has logged so far. */
  async lines(): Promise<FluxLogLine[]> {
    return parseLog(await readFile(this.logFile, 'utf8').catch(() => ''));
  }

  async stop(): Promise<void> {
    const c = this.child;
    if (c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((r) => c.on('exit', r));
    c.kill('SIGTERM');
    const timer = setTimeout(() => c.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}

/** The JSON lines of a controller log (a line being written, or not JSON, is left out). */
export function parseLog(text: string): FluxLogLine[] {
  const out: FluxLogLine[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      out.push(JSON.parse(line) as FluxLogLine);
    } catch {
      // a line being written
    }
  }
  return out;
}

/** A published revision of a tree. */
export interface Artifact {
  url: string;
  /** `sha256:<hex>` of the tarball. */
  digest: string;
  /** What Flux records as lastAppliedRevision. */
  revision: string;
  path: string;
  size: number;
}

/**
 * Serves tarballs of source trees over loopback HTTP, as source-controller serves its artifacts.
 * `publish` packs a directory (a `.tar.gz` of its files, `exclude`d names left out) under a new name.
 */
export class ArtifactServer {
  private readonly server: Server | undefined;
  readonly dir: string;
  readonly base: string;
  private constructor(server: Server | undefined, dir: string, base: string) {
    this.server = server;
    this.dir = dir;
    this.base = base;
  }

  static async start(dir: string): Promise<ArtifactServer> {
    await mkdir(dir, { recursive: true });
    const server = createServer((req, res) => {
      const name = decodeURIComponent((req.url ?? '/').slice(1));
      if (!/^[A-Za-z0-9._-]+\.tar\.gz$/.test(name)) {
        res.writeHead(404).end();
        return;
      }
      const file = join(dir, name);
      stat(file).then(
        (s) => {
          res.writeHead(200, { 'content-type': 'application/gzip', 'content-length': s.size });
          createReadStream(file).pipe(res);
        },
        () => res.writeHead(404).end(),
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    return new ArtifactServer(server, dir, `http://127.0.0.1:${port}`);
  }

  /** Publishes into the directory of a server running in another process (a test worker's view). */
  static attach(dir: string, base: string): ArtifactServer {
    return new ArtifactServer(undefined, dir, base);
  }

  /**
   * Packs `tree` as a new artifact: everything in it but the `exclude`d top-level names, or, given
   * `files` (paths relative to the tree), exactly those files, as source-controller archives what its
   * `.sourceignore` rules leave.
   */
  async publish(
    name: string,
    tree: string,
    exclude: readonly string[] = [],
    files?: readonly string[],
  ): Promise<Artifact> {
    const file = `${name}-${randomBytes(4).toString('hex')}.tar.gz`;
    const path = join(this.dir, file);
    const list = `${path}.files`;
    if (files) await writeFile(list, files.map((f) => `./${f}\n`).join(''));
    await run('tar', [
      '--sort=name',
      '--owner=0',
      '--group=0',
      '--numeric-owner',
      '--mtime=@0',
      ...exclude.map((e) => `--exclude=./${e}`),
      '-czf',
      path,
      '-C',
      tree,
      ...(files ? ['--verbatim-files-from', '--files-from', list] : ['.']),
    ]);
    if (files) await rm(list, { force: true });
    const bytes = await readFile(path);
    const hex = createHash('sha256').update(bytes).digest('hex');
    return {
      url: `${this.base}/${file}`,
      digest: `sha256:${hex}`,
      revision: `sha256:${hex}`,
      path: file,
      size: bytes.length,
    };
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    await new Promise((r) => server.close(r));
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** Creates the ExternalArtifact `namespace/name` when missing and points its status at `artifact`. */
export async function publishExternalArtifact(
  client: Api,
  namespace: string,
  name: string,
  artifact: Artifact,
): Promise<void> {
  const path = `/apis/${SOURCE_API}/namespaces/${namespace}/externalartifacts/${name}`;
  await client.request('PATCH', path, {
    body: { apiVersion: SOURCE_API, kind: 'ExternalArtifact', metadata: { name, namespace }, spec: {} },
    contentType: 'application/apply-patch+yaml',
    query: { fieldManager: 'kr-parity', force: true },
  });
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  await client.request('PATCH', `${path}/status`, {
    body: {
      apiVersion: SOURCE_API,
      kind: 'ExternalArtifact',
      metadata: { name, namespace },
      status: {
        artifact: { ...artifact, lastUpdateTime: now },
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'Succeeded',
            message: `stored artifact for revision '${artifact.revision}'`,
            lastTransitionTime: now,
          },
        ],
      },
    },
    contentType: 'application/apply-patch+yaml',
    query: { fieldManager: 'kr-parity', force: true },
  });
}

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  observedGeneration?: number;
}

export interface FluxKustomization {
  metadata: { name: string; namespace: string; generation?: number; annotations?: Record<string, string> };
  spec: Record<string, unknown>;
  status?: {
    observedGeneration?: number;
    lastAppliedRevision?: string;
    lastAttemptedRevision?: string;
    lastHandledReconcileAt?: string;
    conditions?: Condition[];
    inventory?: { entries?: { id: string; v: string }[] };
  };
}

export function kustomizationPath(namespace: string, name?: string): string {
  return `/apis/${KUSTOMIZE_API}/namespaces/${namespace}/kustomizations${name ? `/${name}` : ''}`;
}

/** Server-side applies a Flux Kustomization whose source is the ExternalArtifact `source`. */
export async function applyKustomization(
  client: Api,
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
  source: string,
): Promise<void> {
  await client.request('PATCH', kustomizationPath(namespace, name), {
    body: {
      apiVersion: KUSTOMIZE_API,
      kind: 'Kustomization',
      metadata: { name, namespace },
      spec: { interval: '60m', retryInterval: '60m', ...spec, sourceRef: { kind: 'ExternalArtifact', name: source } },
    },
    contentType: 'application/apply-patch+yaml',
    query: { fieldManager: 'kr-parity', force: true },
  });
}

/** Asks for a reconcile as `flux reconcile` does; returns the token to wait for. */
export async function requestReconcile(client: Api, namespace: string, name: string): Promise<string> {
  const token = new Date().toISOString() + '-' + randomBytes(3).toString('hex');
  await client.request('PATCH', kustomizationPath(namespace, name), {
    body: { metadata: { annotations: { 'reconcile.fluxcd.io/requestedAt': token } } },
    contentType: 'application/merge-patch+json',
  });
  return token;
}

/**
 * Waits until a reconcile of `namespace/name` has finished: Ready is True or False (not Unknown, not
 * waiting on dependencies) for the current generation, no Reconciling condition, and the revision (or
 * the requested reconcile token) is the one asked for. `lastHandledReconcileAt` alone is set when a
 * reconcile starts, so it is never enough.
 */
export async function waitForReconcile(
  client: Api,
  namespace: string,
  name: string,
  want: { revision?: string; token?: string },
  timeoutMs = 120_000,
): Promise<FluxKustomization> {
  return until(`Flux Kustomization ${namespace}/${name} to finish reconciling`, timeoutMs, async () => {
    const k = await client
      .request<FluxKustomization>('GET', kustomizationPath(namespace, name))
      .catch((err: unknown) => {
        if (isNotFound(err)) return undefined;
        throw err;
      });
    return k && finished(k, want) ? k : undefined;
  });
}

/**
 * Whether a Kustomization's status says the reconcile asked for is over; pure. A success sets Ready=True,
 * observedGeneration and drops Reconciling; a failure sets Ready=False for the generation and leaves
 * Reconciling=True with reason ProgressingWithRetry (and observedGeneration where it was). Waiting on
 * dependencies or on the source is not an end.
 */
export function finished(k: FluxKustomization, want: { revision?: string; token?: string }): boolean {
  const s = k.status;
  if (!s) return false;
  const ready = s.conditions?.find((c) => c.type === 'Ready');
  if (!ready || ready.status === 'Unknown') return false;
  if (ready.observedGeneration !== undefined && ready.observedGeneration !== k.metadata.generation) return false;
  if (ready.reason === 'DependencyNotReady' || ready.reason === 'ArtifactFailed') return false;
  const reconciling = s.conditions?.find((c) => c.type === 'Reconciling' && c.status === 'True');
  if (ready.status === 'True') {
    if (s.observedGeneration !== k.metadata.generation || reconciling) return false;
  } else if (reconciling && reconciling.reason !== 'ProgressingWithRetry') {
    return false;
  }
  if (want.token !== undefined && s.lastHandledReconcileAt !== want.token) return false;
  // lastAttemptedRevision is written when a reconcile starts, while Ready still says how the last one
  // ended: a success counts only once lastAppliedRevision has moved too.
  if (want.revision !== undefined) {
    const revision = ready.status === 'True' ? s.lastAppliedRevision : s.lastAttemptedRevision;
    if (revision !== want.revision || s.lastAttemptedRevision !== want.revision) return false;
  }
  return true;
}

/**
 * Whether the controller has logged the end of a reconcile of `name` since `since` (ms): the
 * "Reconciliation finished" line of a success, or an error line. The status alone can show the end of
 * the previous reconcile while a new one has started; the log line is written after the status.
 */
export function loggedEnd(lines: readonly FluxLogLine[], namespace: string, name: string, since: number): boolean {
  return lines.some(
    (l) =>
      l.name === name &&
      l.namespace === namespace &&
      Date.parse(l.ts ?? '') >= since &&
      (l.msg?.startsWith('Reconciliation finished') === true || l.level === 'error'),
  );
}

/** Thrown inside `until` to stop waiting at once. */
class Fatal extends Error {}

/** Polls `fn` every 200 ms until it returns a value, or fails after `timeoutMs` naming `what`. */
export async function until<T>(what: string, timeoutMs: number, fn: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      if (err instanceof Fatal) throw err;
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
