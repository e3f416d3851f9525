// ClusterClient.guarded: a write (not a read, not a dry run) awaits the view's guard before every
// attempt, the first and each retry after a 429; a guard that throws stops it before it is sent,
// and the retry after a 429 is not sent either. The unguarded client, and the client the view was
// made from, are not guarded. Against a local HTTP server.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterClient, isWrite } from '../../src/cluster/client.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

describe('isWrite', () => {
  it.each<[string, string, Parameters<typeof isWrite>[1], boolean]>([
    ['GET', 'GET', {}, false],
    ['POST', 'POST', {}, true],
    ['PUT', 'PUT', {}, true],
    ['PATCH', 'PATCH', {}, true],
    ['DELETE', 'DELETE', {}, true],
    ['server-side apply, dry run', 'PATCH', { query: { dryRun: 'All', force: true } }, false],
    ['server-side apply, not a dry run (dryRun undefined)', 'PATCH', { query: { dryRun: undefined } }, true],
    ['DELETE with DeleteOptions dryRun [All]', 'DELETE', { body: { kind: 'DeleteOptions', dryRun: ['All'] } }, false],
    [
      'DELETE with DeleteOptions, no dry run',
      'DELETE',
      { body: { kind: 'DeleteOptions', propagationPolicy: 'Background' } },
      true,
    ],
  ])('%s', (_name, method, opts, write) => {
    expect(isWrite(method, opts)).toBe(write);
  });
});

describe('ClusterClient.guarded', () => {
  let server: http.Server;
  let base: ClusterClient;
  /** Requests the server got, `METHOD path`. */
  const got: string[] = [];
  /** How many of the next requests get 429 (Retry-After 1s would be slow: no header, the client's backoff). */
  let throttle = 0;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      got.push(`${req.method} ${req.url}`);
      req.resume();
      req.on('end', () => {
        if (throttle > 0) {
          throttle--;
          res.writeHead(429, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ kind: 'Status', code: 429, reason: 'TooManyRequests', message: 'slow down' }));
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [
        { name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true },
      ],
      contexts: [{ name: 'c', cluster: 'c' }],
      currentContext: 'c',
    });
    base = new ClusterClient(kc);
  });
  afterAll(async () => {
    base.close();
    await new Promise((r) => server.close(r));
  });

  it('checks every attempt of a write, retries included, and nothing else', async () => {
    got.length = 0;
    const calls: string[] = [];
    const client = base.guarded(() => {
      calls.push(`check ${got.length}`);
      return Promise.resolve();
    });
    await client.request('GET', '/api/v1/namespaces/ns/configmaps/a');
    await client.request('PATCH', '/api/v1/namespaces/ns/configmaps/a', {
      body: {},
      query: { dryRun: 'All' },
      contentType: 'application/apply-patch+yaml',
    });
    expect(calls).toEqual([]);
    throttle = 2;
    await client.request('PUT', '/api/v1/namespaces/ns/configmaps/a', { body: {} });
    // Three attempts (two answered 429), each checked just before it was sent.
    expect(calls).toEqual(['check 2', 'check 3', 'check 4']);
    expect(got.slice(2)).toEqual(Array(3).fill('PUT /api/v1/namespaces/ns/configmaps/a'));
  });

  it('sends nothing more once the guard throws: not the write, not its retry', async () => {
    got.length = 0;
    let allowed = 1;
    const client = base.guarded(() => (allowed-- > 0 ? Promise.resolve() : Promise.reject(new Error('lock lost'))));
    throttle = 1;
    await expect(client.request('DELETE', '/api/v1/namespaces/ns/configmaps/b')).rejects.toThrow('lock lost');
    // The first attempt went (and got 429); its retry was refused before it was sent.
    expect(got).toEqual(['DELETE /api/v1/namespaces/ns/configmaps/b']);
    await expect(client.request('POST', '/api/v1/namespaces/ns/configmaps', { body: {} })).rejects.toThrow('lock lost');
    expect(got).toHaveLength(1);
    // Reads go on; a refused write is not the cluster's failure (the client is not broken).
    await client.request('GET', '/api/v1/namespaces/ns/configmaps/b');
    expect(client.unreachable).toBeUndefined();
    // The lock's own writes, and the client the view was made from, are not guarded.
    await client.unguarded().request('PUT', '/apis/coordination.k8s.io/v1/namespaces/ns/leases/l', { body: {} });
    await base.request('PUT', '/api/v1/namespaces/ns/configmaps/b', { body: {} });
    expect(got).toHaveLength(4);
  });

  it('keeps its guards when it impersonates, and adds a view’s to its own', async () => {
    got.length = 0;
    const calls: string[] = [];
    const guard = (name: string) => () => {
      calls.push(name);
      return Promise.resolve();
    };
    const outer = base.guarded(guard('outer'));
    await outer.impersonating('system:serviceaccount:ns:deployer').request('POST', '/api/v1/namespaces/ns/configmaps', {
      body: {},
    });
    await outer.guarded(guard('inner')).request('POST', '/api/v1/namespaces/ns/configmaps', { body: {} });
    expect(calls).toEqual(['outer', 'outer', 'inner']);
    // The views share the client's connections and its count of requests.
    expect(outer.requestCount).toBe(base.requestCount);
  });
});
