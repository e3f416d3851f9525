/** Go's string order (and so Flux's, kustomize's and S3's): byte-wise over UTF-8, not by UTF-16 code units. */
export function byBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}
