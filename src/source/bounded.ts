/**
 * Reading an HTTP answer's body with a byte cap: a server a tree names (a registry, an S3 endpoint)
 * may answer without end, so no body is read whole. The caps the sources use are here too.
 */

/** A ListObjectsV2 page or a tags list page. */
export const MAX_LIST_BYTES = 16 << 20;
/** An image manifest or index. */
export const MAX_MANIFEST_BYTES = 4 << 20;
/** A token service's answer. */
export const MAX_TOKEN_BYTES = 1 << 20;
/** An error answer: read this far, the rest is cut off. */
export const MAX_ERROR_BYTES = 64 << 10;

/** Reads the body up to `max` bytes; `truncated` when there was more (the rest is not read). */
async function readUpTo(res: Response, max: number): Promise<{ body: Buffer; truncated: boolean }> {
  if (res.body === null) return { body: Buffer.alloc(0), truncated: false };
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { body: Buffer.concat(chunks), truncated: false };
      if (total + value.byteLength > max) {
        chunks.push(value.subarray(0, max - total));
        return { body: Buffer.concat(chunks), truncated: true };
      }
      total += value.byteLength;
      chunks.push(value);
    }
  } finally {
    // Stops the download when it ends early; a body read to its end is left as it is.
    await reader.cancel().catch(() => undefined);
  }
}

/**
 * The body of `res`, at most `max` bytes; throws "`what`: the server answered with more than `max`
 * bytes" (the stream cancelled) when it declares or sends more.
 */
export async function readBounded(res: Response, max: number, what: string): Promise<Buffer> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > max) {
    await res.body?.cancel().catch(() => undefined);
    throw new Error(`${what}: the server answered with ${declared} bytes, more than the ${max} allowed`);
  }
  const { body, truncated } = await readUpTo(res, max);
  if (truncated) throw new Error(`${what}: the server answered with more than ${max} bytes`);
  return body;
}

/** The body of an error answer as text, cut at `max` bytes (never throws: an unreadable body is empty). */
export async function readTruncated(res: Response, max: number = MAX_ERROR_BYTES): Promise<string> {
  try {
    return (await readUpTo(res, max)).body.toString('utf8');
  } catch {
    return '';
  }
}
