/**
 * The one retry policy of the HTTP clients (the cluster's, S3's and the KMS key services'): which
 * answers are worth another try. How many tries and how long to wait between them is each client's
 * (the cluster client backs off within its request timeout; S3 and KMS try once more). Pure.
 */

/** Statuses worth another try: the server was busy (429) or broke on its side (5xx but 501). */
export const RETRY_STATUS: ReadonlySet<number> = new Set([429, 500, 502, 503, 504]);

/** Whether an answer with `status` is worth another try. */
export function retryable(status: number): boolean {
  return RETRY_STATUS.has(status);
}
