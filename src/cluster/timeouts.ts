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

/** A duration for a message: `1.5s`, `10s`, `2m`, `250ms`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  return `${Number((ms / 1000).toFixed(1))}s`;
}
