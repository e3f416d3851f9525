import type { KubeConfig } from '@kubernetes/client-node';
import http from 'node:http';
import https from 'node:https';
import { apiErrorFrom, ApiError } from './errors.js';

export interface RequestOptions {
  query?: Record<string, string | boolean | number | undefined>;
  /** JSON body; sent as `contentType` (default application/json). */
  body?: unknown;
  contentType?: string;
  accept?: string;
  /**
   * Give up on 429 at once instead of waiting (Retry-After) and trying again: for a request the
   * caller can do without, such as a list that GETs can stand in for.
   */
  noWaitOn429?: boolean;
}

/** Statuses and socket errors worth a retry: the server was busy or the connection broke. */
const RETRY_STATUS = new Set([429, 500, 502, 503, 504]);
const RETRY_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN', 'UND_ERR_SOCKET']);
const MAX_ATTEMPTS = 5;

/**
 * A thin client for the Kubernetes API over a kubeconfig: raw JSON in and out, no typed
 * models. client-node's KubeConfig resolves credentials (certificates, tokens, exec plugins)
 * and proxies; requests go over one keep-alive agent so connections are reused.
 */
export class ClusterClient {
  private agent: http.Agent | undefined;
  /** Requests sent, retries included; the benchmarks read it. */
  requestCount = 0;

  constructor(
    private readonly kc: KubeConfig,
    private readonly options: {
      userAgent?: string;
      /** Act as this user (and groups) through impersonation headers, as Flux's serviceAccountName does. */
      impersonate?: { user: string; groups?: string[] };
    } = {},
  ) {}

  /** A client for the same cluster and credentials that impersonates `user`. */
  impersonating(user: string, groups?: string[]): ClusterClient {
    return new ClusterClient(this.kc, { ...this.options, impersonate: { user, ...(groups ? { groups } : {}) } });
  }

  get server(): string {
    return this.kc.getCurrentCluster()?.server ?? '';
  }

  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const url = new URL(this.server.replace(/\/$/, '') + path);
    for (const [k, v] of Object.entries(opts.query ?? {})) {
      if (v !== undefined) url.searchParams.set(k, String(v));
    }
    const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const what = `${method} ${url.pathname}`;
    for (let attempt = 1; ; attempt++) {
      try {
        const { status, body, retryAfter } = await this.send(method, url, payload, opts);
        if (status >= 200 && status < 300) {
          return (body === '' ? undefined : JSON.parse(body)) as T;
        }
        const err = apiErrorFrom(status, body, what);
        if (!RETRY_STATUS.has(status) || attempt >= MAX_ATTEMPTS || (status === 429 && opts.noWaitOn429)) throw err;
        await sleep(retryAfter ?? backoff(attempt));
      } catch (err) {
        if (err instanceof ApiError) throw err;
        const code = (err as NodeJS.ErrnoException).code ?? '';
        if (!RETRY_CODES.has(code) || attempt >= MAX_ATTEMPTS) {
          throw new Error(`${what} to ${this.server}: ${(err as Error).message}`, { cause: err });
        }
        await sleep(backoff(attempt));
      }
    }
  }

  close(): void {
    this.agent?.destroy();
  }

  private async send(method: string, url: URL, payload: string | undefined, opts: RequestOptions) {
    const reqOpts: https.RequestOptions = {};
    await this.kc.applyToHTTPSOptions(reqOpts);
    const headers: Record<string, string> = { ...(reqOpts.headers as Record<string, string> | undefined) };
    headers['accept'] = opts.accept ?? 'application/json';
    headers['user-agent'] = this.options.userAgent ?? 'kustomize-reconcile';
    const impersonate = this.options.impersonate;
    if (payload !== undefined) {
      headers['content-type'] = opts.contentType ?? 'application/json';
      headers['content-length'] = String(Buffer.byteLength(payload));
    }
    const isHttps = url.protocol === 'https:';
    const agent = this.kc.getCurrentCluster()?.proxyUrl ? reqOpts.agent : this.ownAgent(reqOpts, isHttps);
    this.requestCount++;
    const allHeaders: http.OutgoingHttpHeaders = { ...headers };
    if (impersonate) {
      allHeaders['impersonate-user'] = impersonate.user;
      if (impersonate.groups?.length) allHeaders['impersonate-group'] = impersonate.groups;
    }
    return new Promise<{ status: number; body: string; retryAfter?: number }>((resolve, reject) => {
      const req = (isHttps ? https : http).request(
        url,
        { method, headers: allHeaders, agent, auth: reqOpts.auth, timeout: 60_000 },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const ra = Number(res.headers['retry-after']);
            resolve({
              status: res.statusCode ?? 0,
              body: Buffer.concat(chunks).toString('utf8'),
              retryAfter: Number.isFinite(ra) && ra > 0 ? Math.min(ra, 30) * 1000 : undefined,
            });
          });
        },
      );
      req.on('timeout', () =>
        req.destroy(Object.assign(new Error('request timed out after 60s'), { code: 'ETIMEDOUT' })),
      );
      req.on('error', reject);
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  }

  private ownAgent(o: https.RequestOptions, isHttps: boolean): http.Agent {
    if (!this.agent) {
      this.agent = isHttps
        ? new https.Agent({
            keepAlive: true,
            maxSockets: 16,
            ca: o.ca,
            cert: o.cert,
            key: o.key,
            pfx: o.pfx,
            passphrase: o.passphrase,
            servername: o.servername,
            rejectUnauthorized: o.rejectUnauthorized,
          })
        : new http.Agent({ keepAlive: true, maxSockets: 16 });
    }
    return this.agent;
  }
}

function backoff(attempt: number): number {
  return Math.min(200 * 2 ** (attempt - 1), 5000) + Math.floor(Math.random() * 100);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
