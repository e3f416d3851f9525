// A TLS-terminating reverse proxy in front of the test cluster's kube-apiserver that injects
// faults (429 with Retry-After, 5xx, 4xx, connection resets) by rule and records every request.
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { parse, stringify } from 'yaml';
import type { ClusterClient } from '../../src/cluster/client.js';
import { adminClient, kubeconfigPath } from './cluster.js';

/** What the proxy sees of a request, for matching rules. */
export interface SeenRequest {
  method: string;
  /** The URL path without the query. */
  path: string;
  query: URLSearchParams;
}

/**
 * A fault answered instead of forwarding: an HTTP status (optionally with Retry-After seconds), or a
 * reset socket; or something done (a concurrent change to the cluster) before the request is forwarded.
 */
export type Fault =
  | { status: number; retryAfter?: number; body?: 'status' | 'text' }
  | { reset: true }
  /** Called once the whole request has arrived, before it is forwarded. */
  | { beforeForward: () => Promise<void> };

export interface FaultRule {
  /** Which requests the rule is for. */
  match: (req: SeenRequest) => boolean;
  /** How many matching requests get the fault; the rest are forwarded. Default: all of them. */
  times?: number;
  fault: Fault;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: string;
  /** The status the client got, or 'reset' when the proxy destroyed the connection. */
  status: number | 'reset';
  /** True when the proxy answered itself (a fault) instead of the apiserver. */
  injected: boolean;
}

export interface FaultProxy {
  /** https://127.0.0.1:PORT */
  url: string;
  /** A kubeconfig (admin credentials, the cluster's CA) whose server is the proxy. */
  kubeconfig: string;
  /** Every request so far, in arrival order (status filled in when answered). */
  requests: RecordedRequest[];
  /** Replaces the fault rules (their counters start again). */
  setRules: (rules: FaultRule[]) => void;
  close: () => Promise<void>;
}

/** Matches a method and a path (exact string or pattern), and optionally whether it is a server-side dry-run. */
export function on(method: string, path: string | RegExp, opts: { dryRun?: boolean } = {}): FaultRule['match'] {
  return (r) =>
    r.method === method &&
    (typeof path === 'string' ? r.path === path : path.test(r.path)) &&
    (opts.dryRun === undefined || (r.query.get('dryRun') === 'All') === opts.dryRun);
}

const REASONS: Record<number, string> = {
  403: 'Forbidden',
  409: 'Conflict',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

function statusBody(status: number, path: string): string {
  return JSON.stringify({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `injected fault: HTTP ${status} for ${path}`,
    reason: REASONS[status] ?? '',
    code: status,
  });
}

/**
 * Starts the proxy for the cluster of `kubeconfigPath` (a testcluster kubeconfig: its directory holds
 * ca.crt, apiserver.crt/.key and admin.crt/.key). Listens on 127.0.0.1 with the apiserver's own
 * serving certificate, so the cluster's CA verifies it.
 */
export async function startFaultProxy(kubeconfigPath: string, rules: FaultRule[] = []): Promise<FaultProxy> {
  const dir = dirname(kubeconfigPath);
  const doc = parse(await readFile(kubeconfigPath, 'utf8')) as { clusters?: { cluster?: { server?: string } }[] };
  const server = doc.clusters?.[0]?.cluster?.server;
  if (!server) throw new Error(`${kubeconfigPath}: no cluster server`);
  const upstream = new URL(server);
  const [ca, cert, key, serverCert, serverKey] = await Promise.all(
    ['ca.crt', 'admin.crt', 'admin.key', 'apiserver.crt', 'apiserver.key'].map((f) => readFile(join(dir, f))),
  );
  const agent = new https.Agent({ keepAlive: true, maxSockets: 64, ca, cert, key });

  let active: { rule: FaultRule; used: number }[] = [];
  const setRules = (next: FaultRule[]) => {
    active = next.map((rule) => ({ rule, used: 0 }));
  };
  setRules(rules);
  const requests: RecordedRequest[] = [];

  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? '/', 'https://proxy.invalid');
    const method = req.method ?? 'GET';
    const seen: SeenRequest = { method, path: url.pathname, query: url.searchParams };
    const record: RecordedRequest = { method, path: url.pathname, query: url.search, status: 0, injected: false };
    requests.push(record);
    const hit = active.find((a) => a.used < (a.rule.times ?? Infinity) && a.rule.match(seen));
    if (hit) {
      hit.used++;
      const fault = hit.rule.fault;
      if ('beforeForward' in fault) {
        // The whole request first: the client has sent all of it when beforeForward runs.
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          fault.beforeForward().then(
            () => {
              forward(req, res, record, Buffer.concat(chunks));
            },
            (err: unknown) => {
              record.status = 502;
              res.writeHead(502, { 'content-type': 'text/plain' });
              res.end(`proxy: beforeForward failed: ${(err as Error).message}\n`);
            },
          );
        });
        return;
      }
      record.injected = true;
      if ('reset' in fault) {
        record.status = 'reset';
        req.socket.destroy();
        return;
      }
      record.status = fault.status;
      // Read the request body first, as a server would, so the client is not cut off mid-write.
      req.resume();
      req.on('end', () => {
        const text = fault.body === 'text';
        const body = text ? `injected fault: HTTP ${fault.status}\n` : statusBody(fault.status, url.pathname);
        res.writeHead(fault.status, {
          'content-type': text ? 'text/plain' : 'application/json',
          'content-length': Buffer.byteLength(body),
          ...(fault.retryAfter !== undefined ? { 'retry-after': String(fault.retryAfter) } : {}),
        });
        res.end(body);
      });
      return;
    }
    forward(req, res, record);
  };

  const forward = (req: http.IncomingMessage, res: http.ServerResponse, record: RecordedRequest, body?: Buffer) => {
    const method = req.method ?? 'GET';
    const headers = { ...req.headers, host: upstream.host };
    const out = https.request(
      { protocol: 'https:', hostname: upstream.hostname, port: upstream.port, method, path: req.url, headers, agent },
      (up) => {
        record.status = up.statusCode ?? 0;
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    out.on('error', (err) => {
      record.status = 502;
      if (!res.headersSent) {
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`proxy: upstream error: ${err.message}\n`);
      } else {
        res.destroy();
      }
    });
    if (body) out.end(body);
    else req.pipe(out);
  };

  const proxy = https.createServer({ cert: serverCert, key: serverKey }, handler);
  await new Promise<void>((resolve, reject) => {
    proxy.once('error', reject);
    proxy.listen(0, '127.0.0.1', () => {
      resolve();
    });
  });
  const port = (proxy.address() as AddressInfo).port;
  const url = `https://127.0.0.1:${port}`;

  const kcDir = await mkdtemp(join(tmpdir(), 'kr-fault-proxy-'));
  const kubeconfig = join(kcDir, 'kubeconfig');
  await writeFile(
    kubeconfig,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'proxy',
      clusters: [{ name: 'proxy', cluster: { server: url, 'certificate-authority': join(dir, 'ca.crt') } }],
      contexts: [{ name: 'proxy', context: { cluster: 'proxy', user: 'admin' } }],
      users: [
        {
          name: 'admin',
          user: { 'client-certificate': join(dir, 'admin.crt'), 'client-key': join(dir, 'admin.key') },
        },
      ],
    }),
  );

  return {
    url,
    kubeconfig,
    requests,
    setRules,
    close: async () => {
      agent.destroy();
      proxy.closeAllConnections();
      await new Promise<void>((resolve) => {
        proxy.close(() => {
          resolve();
        });
      });
    },
  };
}

/**
 * For a describe block: an admin client and a fault proxy in front of the test cluster, made before
 * its tests and closed after them, with the proxy's rules cleared after each test. `use` receives
 * both once they exist.
 */
export function faultProxySuite(use: (client: ClusterClient, proxy: FaultProxy) => void): void {
  let client: ClusterClient | undefined;
  let proxy: FaultProxy | undefined;
  beforeAll(async () => {
    client = await adminClient();
    proxy = await startFaultProxy(kubeconfigPath());
    use(client, proxy);
  });
  afterAll(async () => {
    client?.close();
    await proxy?.close();
  });
  afterEach(() => {
    proxy?.setRules([]);
  });
}
