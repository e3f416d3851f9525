// The OCI registry client tries again after a 429 or a 5xx, as S3 and the KMS key services do
// (util/retry.ts's policy): against a registry on loopback that answers 429 (with Retry-After) or
// 503 once and then 200. The pauses are recorded, never waited.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { RegistryClient } from '../../src/source/registry.js';
import type { RetryPolicy } from '../../src/util/retry.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
});

/** A registry whose answers to /v2/app/manifests/x are `script`'s, one per request, then 200. */
async function registry(script: { status: number; headers?: Record<string, string> }[]) {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(req.url ?? '');
    const next = script.shift();
    if (next !== undefined) {
      res.writeHead(next.status, { 'content-type': 'application/json', ...next.headers });
      res.end(JSON.stringify({ errors: [{ code: 'BUSY', message: 'try later' }] }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { base, seen };
}

function client(base: string) {
  const paused: number[] = [];
  const policy: RetryPolicy = {
    attempts: 2,
    sleep: (ms) => {
      paused.push(ms);
      return Promise.resolve();
    },
  };
  const c = new RegistryClient(
    { registry: 'r', base, repository: 'app' },
    undefined,
    () => {},
    AbortSignal.timeout(10_000),
    () => Promise.resolve(),
    policy,
  );
  return { client: c, paused };
}

describe('RegistryClient retries', () => {
  it.each([
    { why: '429 with Retry-After, then 200', first: { status: 429, headers: { 'retry-after': '1' } }, pause: 1000 },
    { why: '503, then 200', first: { status: 503 }, pause: undefined },
  ])('$why', async ({ first, pause }) => {
    const reg = await registry([first]);
    const { client: c, paused } = client(reg.base);
    const { body } = await c.get('/v2/app/manifests/x', undefined, 1024, 'the manifest');
    expect(body.toString('utf8')).toBe('{"ok":true}');
    expect(reg.seen).toEqual(['/v2/app/manifests/x', '/v2/app/manifests/x']);
    expect(paused).toHaveLength(1);
    if (pause !== undefined) expect(paused[0]).toBe(pause);
    else expect(paused[0]).toBeLessThan(1000);
  });

  it('gives up after the second 503 and says the registry’s answer', async () => {
    const reg = await registry([{ status: 503 }, { status: 503 }]);
    const { client: c } = client(reg.base);
    await expect(c.get('/v2/app/manifests/x', undefined, 1024, 'the manifest')).rejects.toThrow(
      'the manifest: HTTP 503: try later (BUSY)',
    );
    expect(reg.seen).toHaveLength(2);
  });

  it('does not try a 404 again', async () => {
    const reg = await registry([{ status: 404 }]);
    const { client: c } = client(reg.base);
    await expect(c.get('/v2/app/manifests/x', undefined, 1024, 'the manifest')).rejects.toThrow('HTTP 404');
    expect(reg.seen).toHaveLength(1);
  });
});
