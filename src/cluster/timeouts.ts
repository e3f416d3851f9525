/** How long talking to a cluster may take. */
export interface ClusterTimeouts {
  /** Opening a connection: TCP and the TLS handshake. */
  connectMs: number;
  /**
   * One request, its retries included (no retry starts past it); also the longest an exec
   * credential plugin may run.
   */
  requestMs: number;
}

export const DEFAULT_TIMEOUTS: ClusterTimeouts = { connectMs: 10_000, requestMs: 60_000 };
