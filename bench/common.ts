// Shared by the benchmarks: a tier-a test cluster they start and stop themselves, and a TLS loopback
// proxy in front of its apiserver that counts requests. See bench/README.md.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const TESTCLUSTER = join(REPO, 'test', 'cluster', 'bin', 'testcluster');

// ---------------------------------------------------------------- the cluster

export interface Cluster {
  dir: string;
  kubeconfig: string;
  /** Process ids of the cluster's components (testcluster's cluster.json), for their CPU time. */
  pids: { apiserver?: number; etcd?: number };
  stop: () => Promise<void>;
}

/** Clock ticks per second, the unit of utime and stime in /proc/<pid>/stat. */
export const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** CPU time (user + system) a process has used so far, in ms; undefined when it cannot be read. */
export async function cpuMsOf(pid: number | undefined): Promise<number | undefined> {
  if (pid === undefined) return undefined;
  const stat = await readFile(`/proc/${String(pid)}/stat`, 'utf8').catch(() => undefined);
  if (stat === undefined) return undefined;
  // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
}

export async function startCluster(): Promise<Cluster> {
  if (!existsSync(TESTCLUSTER)) throw new Error(`${TESTCLUSTER} is missing: run "npm run cluster:build" first`);
  const dir = await mkdtemp(join(os.tmpdir(), 'kr-bench-cluster-'));
  const child: ChildProcess = spawn(TESTCLUSTER, ['up', '--tier', 'a', '--dir', dir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stderr: string[] = [];
  child.stderr?.on('data', (d: Buffer) => stderr.push(d.toString()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const kubeconfig = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`test cluster not ready after 120 s:\n${stderr.join('')}`));
      }, 120_000);
      createInterface({ input: child.stdout! }).on('line', (line) => {
        if (line.startsWith('KUBECONFIG=')) {
          clearTimeout(timer);
          resolve(line.slice('KUBECONFIG='.length));
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`test cluster exited with ${code} before it was ready:\n${stderr.join('')}`));
      });
    });
    const state = JSON.parse(await readFile(join(dir, 'cluster.json'), 'utf8')) as {
      components?: { name: string; pid: number }[];
    };
    const pid = (name: string) => state.components?.find((c) => c.name === name)?.pid;
    return { dir, kubeconfig, pids: { apiserver: pid('apiserver'), etcd: pid('etcd') }, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

// ---------------------------------------------------------------- a counting proxy

export interface CountingProxy {
  /** Writes a kubeconfig pointing at the proxy; `namespace` becomes the context's default namespace. */
  kubeconfig: (file: string, namespace?: string) => Promise<string>;
  counts: Map<string, number>;
  /** Requests by method and what they address: discovery, openapi, list, object, subresource. */
  targets: Map<string, number>;
  /** performance.now() of the first request since the last reset. */
  firstRequestAt: () => number | undefined;
  reset: () => void;
  total: () => number;
  /** A request straight to the apiserver, not counted (set-up only). */
  upstream: (method: string, path: string, body?: unknown) => Promise<{ status: number; body: string }>;
  /**
   * Watches the object `name` of the collection `listPath` straight on the apiserver (not counted) until
   * `done` holds for it; resolves with it, or with undefined after `timeoutMs`.
   */
  watchUntil: <T>(
    listPath: string,
    name: string,
    done: (obj: T) => boolean,
    timeoutMs: number,
  ) => Promise<T | undefined>;
  close: () => Promise<void>;
}

/** What a request path addresses: discovery, openapi, a collection (list) or one object. */
export function targetOf(path: string): string {
  if (path.startsWith('/openapi')) return 'openapi';
  const parts = path.split('/').filter((x) => x !== '');
  let rest: string[];
  if (parts[0] === 'api') rest = parts.slice(2);
  else if (parts[0] === 'apis') rest = parts.slice(3);
  else return 'other';
  if (rest.length === 0) return 'discovery';
  if (rest[0] === 'namespaces' && rest.length >= 3) rest = rest.slice(2);
  return rest.length === 1 ? 'list' : rest.length === 2 ? 'object' : 'subresource';
}

/** A TLS loopback proxy in front of the apiserver that counts requests by method (dry-runs apart). */
export async function startProxy(cluster: Cluster): Promise<CountingProxy> {
  const doc = parse(await readFile(cluster.kubeconfig, 'utf8')) as { clusters?: { cluster?: { server?: string } }[] };
  const upstreamUrl = new URL(doc.clusters?.[0]?.cluster?.server ?? '');
  const [ca, cert, key, serverCert, serverKey] = await Promise.all(
    ['ca.crt', 'admin.crt', 'admin.key', 'apiserver.crt', 'apiserver.key'].map((f) => readFile(join(cluster.dir, f))),
  );
  const agent = new https.Agent({ keepAlive: true, maxSockets: 128, ca, cert, key });
  const counts = new Map<string, number>();
  const targets = new Map<string, number>();
  let first: number | undefined;
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    first ??= performance.now();
    const url = new URL(req.url ?? '/', 'https://proxy.invalid');
    const kind = `${req.method ?? 'GET'}${url.searchParams.get('dryRun') === 'All' ? ' (dry-run)' : ''}`;
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
    const target = `${req.method ?? 'GET'} ${targetOf(url.pathname)}`;
    targets.set(target, (targets.get(target) ?? 0) + 1);
    const out = https.request(
      {
        hostname: upstreamUrl.hostname,
        port: upstreamUrl.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstreamUrl.host },
        agent,
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    out.on('error', (err) => {
      if (res.headersSent) res.destroy();
      else res.writeHead(502).end(`proxy: ${err.message}\n`);
    });
    req.pipe(out);
  };
  const upstream = (method: string, path: string, body?: unknown) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = https.request(
        `${upstreamUrl.origin}${path}`,
        { method, agent, headers: body === undefined ? {} : { 'content-type': 'application/json' } },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => {
            resolve({ status: res.statusCode ?? 0, body: text });
          });
        },
      );
      req.on('error', reject);
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
  const server = https.createServer({ cert: serverCert, key: serverKey }, handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    kubeconfig: async (file, namespace) => {
      await writeFile(
        file,
        stringify({
          apiVersion: 'v1',
          kind: 'Config',
          'current-context': 'bench',
          clusters: [{ name: 'bench', cluster: { server: url, 'certificate-authority': join(cluster.dir, 'ca.crt') } }],
          contexts: [
            { name: 'bench', context: { cluster: 'bench', user: 'admin', ...(namespace ? { namespace } : {}) } },
          ],
          users: [
            {
              name: 'admin',
              user: {
                'client-certificate': join(cluster.dir, 'admin.crt'),
                'client-key': join(cluster.dir, 'admin.key'),
              },
            },
          ],
        }),
      );
      return file;
    },
    counts,
    targets,
    firstRequestAt: () => first,
    reset: () => {
      counts.clear();
      targets.clear();
      first = undefined;
    },
    total: () => [...counts.values()].reduce((a, b) => a + b, 0),
    upstream,
    watchUntil: async <T>(listPath: string, name: string, done: (obj: T) => boolean, timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      const selector = `fieldSelector=${encodeURIComponent(`metadata.name=${name}`)}`;
      while (Date.now() < deadline) {
        const list = await upstream('GET', `${listPath}?${selector}`);
        if (list.status !== 200) throw new Error(`listing ${listPath}: ${list.status} ${list.body.slice(0, 300)}`);
        const { metadata, items } = JSON.parse(list.body) as { metadata: { resourceVersion: string }; items: T[] };
        const hit = items.find(done);
        if (hit) return hit;
        const seconds = Math.max(1, Math.ceil((deadline - Date.now()) / 1000));
        const query = `${selector}&watch=1&resourceVersion=${metadata.resourceVersion}&timeoutSeconds=${String(seconds)}`;
        const found = await new Promise<T | undefined>((resolve) => {
          const req = https.request(`${upstreamUrl.origin}${listPath}?${query}`, { agent }, (res) => {
            let buffer = '';
            res.on('data', (chunk: Buffer) => {
              buffer += chunk.toString();
              for (let i = buffer.indexOf('\n'); i >= 0; i = buffer.indexOf('\n')) {
                const line = buffer.slice(0, i).trim();
                buffer = buffer.slice(i + 1);
                if (line === '') continue;
                const event = JSON.parse(line) as { type: string; object: T };
                if ((event.type === 'ADDED' || event.type === 'MODIFIED') && done(event.object)) {
                  resolve(event.object);
                  req.destroy();
                  return;
                }
              }
            });
            // The watch ended (its timeout, or an ERROR event such as 410 Gone): list and watch again.
            res.on('end', () => {
              resolve(undefined);
            });
            res.on('error', () => {
              resolve(undefined);
            });
          });
          req.on('error', () => {
            resolve(undefined);
          });
          req.end();
        });
        if (found) return found;
      }
      return undefined;
    },
    close: async () => {
      agent.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

export async function createNamespace(proxy: CountingProxy, name: string): Promise<void> {
  const r = await proxy.upstream('POST', '/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name },
  });
  if (r.status !== 201 && r.status !== 409) throw new Error(`creating namespace ${name}: ${r.status} ${r.body}`);
}
