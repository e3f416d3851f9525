import type { KubeConfig } from '@kubernetes/client-node';
import http from 'node:http';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { TLSSocket } from 'node:tls';
import { apiErrorFrom } from './errors.js';
import { impersonationHeaders, type Impersonation } from './kubeconfig-auth.js';
import { kubeconfigImpersonation } from './kubeconfig.js';
import {
  Breaker,
  CredentialError,
  failureText,
  MAX_ATTEMPTS,
  retryable,
  TimeoutError,
  unauthorizedText,
} from './failure.js';
import { DEFAULT_TIMEOUTS, type ClusterTimeouts } from './timeouts.js';
import { sleep } from '../util/poll.js';
import { backoffMs, retryable as retryableStatus, retryAfterMs } from '../util/retry.js';

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

/**
 * Called before every attempt of a write (the first and each retry): resolves to let it go, throws
 * to stop it (the error is the request's). See ClusterClient.guarded.
 */
export type WriteGuard = () => Promise<void>;

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Whether a request persists something: a POST, PUT, PATCH or DELETE that is not a server-side dry
 * run (`dryRun=All` in the query, or in a DELETE's DeleteOptions body).
 */
export function isWrite(method: string, opts: Pick<RequestOptions, 'query' | 'body'> = {}): boolean {
  if (!WRITES.has(method.toUpperCase())) return false;
  if (opts.query?.['dryRun'] === 'All') return false;
  const body = opts.body as { dryRun?: unknown } | null | undefined;
  return !(Array.isArray(body?.dryRun) && body.dryRun.includes('All'));
}

/** What the views of one client share: its connections and the count of requests sent. */
interface Pool {
  agent?: http.Agent | undefined;
  /** The client certificate and key the agent was made with: an exec plugin's may change. */
  agentCredentials?: readonly unknown[];
  /** Agents replaced by one with new credentials: closed with the client. */
  retired?: http.Agent[];
  requests: number;
}

/**
 * A thin client for the Kubernetes API over a kubeconfig: raw JSON in and out, no typed
 * models. client-node's KubeConfig resolves credentials (certificates, tokens, exec plugins)
 * and proxies; requests go over one keep-alive agent so connections are reused.
 *
 * Every request is bounded in time (see ClusterTimeouts). When a request cannot reach the server
 * (no connection, no answer, no credentials) and its retries did not help, the client is broken:
 * requests in flight stop and every later request fails at once with the same error, so a run that
 * cannot reach its cluster stops with one error instead of one per object.
 */
export class ClusterClient {
  private readonly timeouts: ClusterTimeouts;
  /** Shared with the impersonating clients made from this one: they reach the same server. */
  private readonly breaker: Breaker;
  private readonly pool: Pool;
  /** Checked before every attempt of every write (see guarded). */
  private readonly guards: readonly WriteGuard[];
  /** Who the kubeconfig's user acts as (its `as` fields): replaced by an impersonating client's user. */
  private readonly actAs: Impersonation | undefined;

  constructor(
    private readonly kc: KubeConfig,
    private readonly options: {
      userAgent?: string;
      /** Act as this user (and groups) through impersonation headers, as Flux's serviceAccountName does. */
      impersonate?: { user: string; groups?: string[] };
      timeouts?: Partial<ClusterTimeouts>;
    } = {},
    breaker?: Breaker,
    view?: { pool: Pool; guards: readonly WriteGuard[] },
  ) {
    this.timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
    this.breaker = breaker ?? new Breaker();
    this.pool = view?.pool ?? { requests: 0 };
    this.guards = view?.guards ?? [];
    this.actAs = options.impersonate ?? kubeconfigImpersonation(kc);
  }

  /** Requests sent, retries included, by this client and its guarded views; the benchmarks read it. */
  get requestCount(): number {
    return this.pool.requests;
  }

  /** A client for the same cluster and credentials that impersonates `user` (with this client's guards). */
  impersonating(user: string, groups?: string[]): ClusterClient {
    return new ClusterClient(
      this.kc,
      { ...this.options, impersonate: { user, ...(groups ? { groups } : {}) } },
      this.breaker,
      { pool: { requests: 0 }, guards: this.guards },
    );
  }

  /**
   * A view of this client (same cluster, credentials, connections and breaker) whose writes (see
   * isWrite: not reads, not dry runs) each await `guard` before every attempt, the first and every
   * retry alike; what it throws fails the request, with no retry. One Kustomization's writes go
   * through such a view with its lock's checkpoint as the guard, so that a run that lost its lock
   * writes nothing more, not even a retry of a write it started before. Impersonating clients made
   * from the view keep its guards; a view of a view has both.
   */
  guarded(guard: WriteGuard): ClusterClient {
    return new ClusterClient(this.kc, this.options, this.breaker, {
      pool: this.pool,
      guards: [...this.guards, guard],
    });
  }

  /** This client without its guards: for the lock's own writes (acquire, renew, release). */
  unguarded(): ClusterClient {
    return this.guards.length === 0
      ? this
      : new ClusterClient(this.kc, this.options, this.breaker, { pool: this.pool, guards: [] });
  }

  /**
   * The error of the request that found the server unreachable, once one did: every request of this
   * client (and of its impersonating clients) fails with it from then on.
   */
  get unreachable(): Error | undefined {
    return this.breaker.error;
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
    this.breaker.check();
    const guarded = this.guards.length > 0 && isWrite(method, opts);
    const deadline = Date.now() + this.timeouts.requestMs;
    for (let attempt = 1; ; attempt++) {
      // Every attempt of a write, retries included, first passes the guards (a lost lock stops it).
      if (guarded) for (const guard of this.guards) await guard();
      let answer: { status: number; body: string; retryAfter?: number };
      try {
        answer = await this.send(method, url, payload, opts, deadline);
      } catch (err) {
        // Another request found the server unreachable meanwhile: this one fails with its error.
        this.breaker.check();
        const wait = backoffMs(attempt);
        if (retryable(err, attempt) && Date.now() + wait < deadline) {
          await sleep(wait);
          this.breaker.check();
          continue;
        }
        // A credential error names the kubeconfig user already; the request is not what failed.
        const where = err instanceof CredentialError ? '' : `${what} to ${this.server}: `;
        throw this.breaker.trip(new Error(where + failureText(err, attempt, this.timeouts), { cause: err }));
      }
      const { status, body, retryAfter } = answer;
      if (status >= 200 && status < 300) {
        return (body === '' ? undefined : JSON.parse(body)) as T;
      }
      const err = apiErrorFrom(status, body, what);
      // Credentials the server does not accept fail every request alike: one error for the run.
      if (status === 401) {
        const text = unauthorizedText(err.said ?? err.message, this.kc.getCurrentUser()?.name);
        throw this.breaker.trip(new Error(`${what} to ${this.server}: ${text}`, { cause: err }));
      }
      const wait = retryAfter ?? backoffMs(attempt);
      if (
        !retryableStatus(status) ||
        attempt >= MAX_ATTEMPTS ||
        (status === 429 && opts.noWaitOn429) ||
        Date.now() + wait >= deadline
      ) {
        throw err;
      }
      await sleep(wait);
      this.breaker.check();
    }
  }

  /** Closes the connections (shared with this client's guarded views). */
  close(): void {
    this.pool.agent?.destroy();
    for (const agent of this.pool.retired ?? []) agent.destroy();
  }

  private async send(
    method: string,
    url: URL,
    payload: string | undefined,
    opts: RequestOptions,
    deadline: number,
  ): Promise<{ status: number; body: string; retryAfter?: number }> {
    const reqOpts: https.RequestOptions = {};
    // Before client-node's options: a proxy agent it makes takes the TLS settings from them.
    if (!this.kc.getCurrentUser()) anonymousTls(this.kc, reqOpts);
    try {
      await this.kc.applyToHTTPSOptions(reqOpts);
    } catch (err) {
      throw new CredentialError((err as Error).message, { cause: err });
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries((reqOpts.headers ?? {}) as Record<string, string>)) {
      if (!/^impersonate-/i.test(k)) headers[k] = v;
    }
    headers['accept'] = opts.accept ?? 'application/json';
    headers['user-agent'] = this.options.userAgent ?? 'kustomize-reconcile';
    if (payload !== undefined) {
      headers['content-type'] = opts.contentType ?? 'application/json';
      headers['content-length'] = String(Buffer.byteLength(payload));
    }
    const isHttps = url.protocol === 'https:';
    const proxied = Boolean(this.kc.getCurrentCluster()?.proxyUrl);
    const agent = proxied ? reqOpts.agent : this.ownAgent(reqOpts, isHttps);
    // Through a proxy agent, the TLS settings go with each request too (a SOCKS agent reads them there).
    const tlsOpts: https.RequestOptions =
      proxied && isHttps
        ? {
            ca: reqOpts.ca,
            cert: reqOpts.cert,
            key: reqOpts.key,
            ...(reqOpts.servername !== undefined ? { servername: reqOpts.servername } : {}),
            ...(reqOpts.rejectUnauthorized !== undefined ? { rejectUnauthorized: reqOpts.rejectUnauthorized } : {}),
          }
        : {};
    this.pool.requests++;
    const allHeaders: http.OutgoingHttpHeaders = {
      ...headers,
      ...(this.actAs ? impersonationHeaders(this.actAs) : {}),
    };
    const { connectMs } = this.timeouts;
    return new Promise<{ status: number; body: string; retryAfter?: number }>((resolve, reject) => {
      // Why this request was stopped, if it was: the error to report, whatever the socket says after.
      let stopped: Error | undefined;
      const stop = (err: Error) => {
        stopped ??= err;
        req.destroy(err);
      };
      const fail = (err: Error) => {
        reject(stopped ?? err);
      };
      const req = (isHttps ? https : http).request(
        url,
        { method, headers: allHeaders, agent, auth: reqOpts.auth, ...tlsOpts },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', fail);
          res.on('end', () => {
            resolve({
              status: res.statusCode ?? 0,
              body: Buffer.concat(chunks).toString('utf8'),
              retryAfter: retryAfterMs(res.headers['retry-after']),
            });
          });
        },
      );
      // The whole request (connecting, sending, the answer) ends by the deadline.
      const overall = setTimeout(
        () => {
          stop(new TimeoutError('request-timeout', this.timeouts.requestMs, connected));
        },
        Math.max(0, deadline - Date.now()),
      );
      // A new connection (not one kept alive) must be open, TLS included, within connect-timeout.
      let connected = false;
      req.on('socket', (socket) => {
        if (!socket.connecting) {
          connected = true;
          return;
        }
        const timer = setTimeout(() => {
          stop(new TimeoutError('connect-timeout', connectMs, false));
        }, connectMs);
        socket.once(socket instanceof TLSSocket ? 'secureConnect' : 'connect', () => {
          connected = true;
          clearTimeout(timer);
        });
        socket.once('close', () => {
          clearTimeout(timer);
        });
      });
      const untrack = this.breaker.track(stop);
      req.on('close', () => {
        clearTimeout(overall);
        untrack();
      });
      req.on('error', fail);
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  }

  private ownAgent(o: https.RequestOptions, isHttps: boolean): http.Agent {
    const credentials = [o.cert, o.key];
    const same = (a: readonly unknown[] | undefined) =>
      a?.every((v, i) => v === credentials[i] || sameBytes(v, credentials[i]));
    if (this.pool.agent && isHttps && !same(this.pool.agentCredentials)) {
      // A new client certificate (an exec plugin's, renewed): new connections; those in use finish.
      (this.pool.retired ??= []).push(this.pool.agent);
      this.pool.agent = undefined;
    }
    if (!this.pool.agent) {
      this.pool.agentCredentials = credentials;
      this.pool.agent = isHttps
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
    return this.pool.agent;
  }
}

function sameBytes(a: unknown, b: unknown): boolean {
  const bytes = (v: unknown) => (typeof v === 'string' ? Buffer.from(v) : Buffer.isBuffer(v) ? v : undefined);
  const x = bytes(a);
  const y = bytes(b);
  return x !== undefined && y !== undefined && x.equals(y);
}

/**
 * For a context without a user (anonymous access): the cluster's TLS settings, which client-node
 * applies only together with a user's credentials.
 */
function anonymousTls(kc: KubeConfig, o: https.RequestOptions): void {
  const cluster = kc.getCurrentCluster();
  if (!cluster) return;
  if (cluster.skipTLSVerify) o.rejectUnauthorized = false;
  if (cluster.tlsServerName) o.servername = cluster.tlsServerName;
  if (cluster.caFile) o.ca = readFileSync(cluster.caFile);
  else if (cluster.caData) o.ca = Buffer.from(cluster.caData, 'base64');
}
