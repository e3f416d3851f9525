/**
 * Failures to reach a cluster (no connection, no answer in time, no credentials): which are worth
 * a retry, how they read, and the breaker that turns the first one retries could not fix into the
 * error of every later request.
 */
import { truncate } from '../util/truncate.js';
import type { ClusterTimeouts } from './timeouts.js';
import { formatDuration } from '../util/duration.js';

/** Attempts of one request at most (the first and its retries). */
export const MAX_ATTEMPTS = 5;

/** Socket errors worth a retry: the connection broke or was refused (a server restarting). */
const RETRY_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN', 'UND_ERR_SOCKET']);

/** TLS errors that mean the server's certificate is not trusted (or not for this name). */
const UNTRUSTED_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/**
 * A request stopped by a timeout: `setting` is the one that ran out (connect-timeout for opening a
 * connection, request-timeout for the whole request), `connected` whether a connection was open.
 */
export class TimeoutError extends Error {
  readonly code = 'KR_TIMEOUT';
  constructor(
    readonly setting: 'connect-timeout' | 'request-timeout',
    readonly ms: number,
    readonly connected: boolean,
  ) {
    super(connected ? `no answer within ${formatDuration(ms)}` : `could not connect within ${formatDuration(ms)}`);
    this.name = 'TimeoutError';
  }
}

/** The kubeconfig's credentials could not be had (an exec plugin failed, a file is unreadable). */
export class CredentialError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'CredentialError';
  }
}

/**
 * The cluster could not be reached, or did not accept the credentials; every request of the client
 * after the first fails with this message.
 */
export class ClusterUnreachableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ClusterUnreachableError';
  }
}

export function isUnreachable(err: unknown): err is ClusterUnreachableError {
  return err instanceof ClusterUnreachableError;
}

/** Whether a failed attempt (not an HTTP answer) is worth another. */
export function retryable(err: unknown, attempt: number): boolean {
  if (attempt >= MAX_ATTEMPTS || err instanceof CredentialError) return false;
  // A server that did not take a connection within connect-timeout gets one more chance, not four.
  if (err instanceof TimeoutError) return err.setting === 'connect-timeout' && attempt < 2;
  return RETRY_CODES.has((err as NodeJS.ErrnoException).code ?? '');
}

/** What went wrong, as the end of a sentence that begins with the request and the server. */
export function failureText(err: unknown, attempts: number, timeouts: ClusterTimeouts): string {
  const tries = attempts > 1 ? ` (${attempts} attempts)` : '';
  let text: string;
  if (err instanceof TimeoutError) {
    // The request timeout is shown as set, though a retry's share of it was less.
    const within = `within ${formatDuration(err.setting === 'request-timeout' ? timeouts.requestMs : err.ms)} (${err.setting})${tries}`;
    text = err.connected
      ? `no answer ${within}: the API server accepted the connection but did not answer`
      : `could not connect ${within}: check the server address in the kubeconfig and that the API server can be reached from here`;
  } else if (err instanceof CredentialError) {
    text = err.message;
  } else {
    const e = err as NodeJS.ErrnoException;
    const message = e.message || e.code || String(err);
    // Node's own advice (--use-system-ca) is not what fixes a kubeconfig.
    text = UNTRUSTED_CODES.has(e.code ?? '')
      ? `${message.replace(/; if the root CA is installed locally.*$/s, '')}: the server's certificate is not trusted; check the cluster's certificate-authority-data (or certificate-authority) and tls-server-name in the kubeconfig`
      : `${message}${tries}`;
  }
  return truncate(text);
}

/**
 * What a 401 means, after the API server's own word (`Unauthorized`): the credentials of the
 * kubeconfig user `user` (undefined: none, anonymous) were not accepted.
 */
export function unauthorizedText(serverMessage: string, user: string | undefined): string {
  return user === undefined
    ? `${serverMessage}: the API server does not accept anonymous requests, and the kubeconfig's context names no user: add a user with credentials`
    : `${serverMessage}: the API server did not accept the credentials of kubeconfig user ${JSON.stringify(user)}: check that its token, client certificate or exec plugin is current and meant for this cluster`;
}

/**
 * Opens on the first request that could not reach the server: requests in flight are stopped with
 * its error, and every later request fails at once with the same message.
 */
export class Breaker {
  /** The first failure, once there was one. */
  error: ClusterUnreachableError | undefined;
  private readonly inflight = new Set<(err: Error) => void>();

  /** Throws the first failure's error, if there was one. */
  check(): void {
    if (this.error) throw new ClusterUnreachableError(this.error.message, { cause: this.error });
  }

  /** Opens the breaker with `err` (if it is not open yet) and returns the error to throw. */
  trip(err: Error): ClusterUnreachableError {
    if (!this.error) {
      this.error = new ClusterUnreachableError(err.message, { cause: err.cause ?? err });
      for (const stop of [...this.inflight]) stop(this.error);
      this.inflight.clear();
      return this.error;
    }
    return new ClusterUnreachableError(this.error.message, { cause: this.error });
  }

  /** Registers a request in flight; `stop` ends it. Returns the function that unregisters it. */
  track(stop: (err: Error) => void): () => void {
    this.inflight.add(stop);
    return () => this.inflight.delete(stop);
  }
}
