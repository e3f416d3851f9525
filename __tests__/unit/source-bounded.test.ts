// Bodies read with a byte cap (src/source/bounded.ts): a server a tree names may answer without end.
import { describe, expect, it } from 'vitest';
import { readBounded, readTruncated } from '../../src/source/bounded.js';

/** A response streaming `chunks` (each n bytes of 'x'), recording whether the reader cancelled it. */
function streamed(chunks: number[], headers: Record<string, string> = {}) {
  const state = { cancelled: false, pulled: 0 };
  let i = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i === chunks.length) {
        controller.close();
        return;
      }
      state.pulled++;
      controller.enqueue(new Uint8Array(chunks[i++]!).fill(0x78));
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { res: new Response(body, { headers }), state };
}

describe('readBounded', () => {
  it.each<[string, number[], number, number | string]>([
    ['under the cap', [10, 10], 100, 20],
    ['exactly the cap', [50, 50], 100, 100],
    ['one byte over', [50, 51], 100, 'the manifest: the server answered with more than 100 bytes'],
    ['an empty body', [], 100, 0],
  ])('%s', async (_, chunks, max, want) => {
    const { res } = streamed(chunks);
    if (typeof want === 'number') expect((await readBounded(res, max, 'the manifest')).length).toBe(want);
    else await expect(readBounded(res, max, 'the manifest')).rejects.toThrow(want);
  });

  it('stops reading an endless body at the cap and cancels it', async () => {
    const { res, state } = streamed(Array<number>(1000).fill(1024));
    await expect(readBounded(res, 4096, 'the page')).rejects.toThrow('more than 4096 bytes');
    expect(state.cancelled).toBe(true);
    expect(state.pulled).toBeLessThan(10);
  });

  it('refuses a declared length over the cap without reading', async () => {
    const { res, state } = streamed([10], { 'content-length': '1000000' });
    await expect(readBounded(res, 100, 'the token service')).rejects.toThrow(
      'the token service: the server answered with 1000000 bytes, more than the 100 allowed',
    );
    expect(state.pulled).toBeLessThanOrEqual(1);
  });
});

describe('readTruncated (error bodies)', () => {
  it.each<[string, number[], number, number]>([
    ['a short body whole', [10], 100, 10],
    ['a long body cut at the cap', [60, 60, 60], 100, 100],
  ])('%s', async (_, chunks, max, length) => {
    const { res } = streamed(chunks);
    expect((await readTruncated(res, max)).length).toBe(length);
  });

  it('an endless error body is cut and cancelled', async () => {
    const { res, state } = streamed(Array<number>(1000).fill(1024));
    expect(await readTruncated(res)).toBe('x'.repeat(64 * 1024));
    expect(state.cancelled).toBe(true);
  });

  it('a body that fails reads as empty', async () => {
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.error(new Error('reset'));
      },
    });
    expect(await readTruncated(new Response(body))).toBe('');
  });
});
