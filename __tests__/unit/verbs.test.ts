// The cluster verbs against a recording client: the request each one sends (method, path, options),
// and how many (list: one per page; waitGone: one GET per object per look).
import { describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { ApiError } from '../../src/cluster/errors.js';
import {
  apply,
  CONFIGMAPS,
  create,
  exists,
  find,
  LEASES,
  list,
  NAMESPACES,
  patch,
  remove,
  replace,
  resourceOf,
  waitGone,
  type Resource,
} from '../../src/cluster/verbs.js';
import type { Clock } from '../../src/util/poll.js';

type Sent = [string, string, Record<string, unknown>?];

/** A client that records each request and answers with `answer` (a thrown ApiError rejects). */
function recording(answer: (method: string, path: string, n: number) => unknown = () => ({})) {
  const sent: Sent[] = [];
  const client = {
    request: (method: string, path: string, opts?: Record<string, unknown>) => {
      sent.push(opts && Object.keys(opts).length > 0 ? [method, path, opts] : [method, path]);
      return new Promise((resolve) => {
        resolve(answer(method, path, sent.length));
      });
    },
  } as unknown as ClusterClient;
  return { client, sent };
}

const DEPLOYMENTS: Resource = { group: 'apps', version: 'v1', resource: 'deployments', namespaced: true };
const CRDS: Resource = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  resource: 'customresourcedefinitions',
  namespaced: false,
};
const notFound = () => new ApiError(404, 'NotFound', 'not found');

describe('cluster verbs', () => {
  it.each<[string, (c: ClusterClient) => Promise<unknown>, Sent]>([
    [
      'create in a namespace',
      (c) => create(c, { resource: CONFIGMAPS, namespace: 'ns' }, { a: 1 }),
      ['POST', '/api/v1/namespaces/ns/configmaps', { body: { a: 1 } }],
    ],
    [
      'create cluster-scoped',
      (c) => create(c, { resource: NAMESPACES }, { b: 2 }),
      ['POST', '/api/v1/namespaces', { body: { b: 2 } }],
    ],
    [
      'replace, the name encoded',
      (c) => replace(c, { resource: LEASES, namespace: 'ns', name: 'a b' }, {}),
      ['PUT', '/apis/coordination.k8s.io/v1/namespaces/ns/leases/a%20b', { body: {} }],
    ],
    [
      'patch',
      (c) =>
        patch(c, { resource: DEPLOYMENTS, namespace: 'ns', name: 'd' }, [], 'application/json-patch+json', {
          fieldManager: 'm',
        }),
      [
        'PATCH',
        '/apis/apps/v1/namespaces/ns/deployments/d',
        { body: [], contentType: 'application/json-patch+json', query: { fieldManager: 'm' } },
      ],
    ],
    [
      'server-side apply, dry run',
      (c) => apply(c, { resource: CRDS, name: 'x.example.com' }, { o: 1 }, { fieldManager: 'm', dryRun: true }),
      [
        'PATCH',
        '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x.example.com',
        {
          query: { fieldManager: 'm', force: true, dryRun: 'All' },
          body: { o: 1 },
          contentType: 'application/apply-patch+yaml',
        },
      ],
    ],
    [
      'remove without options',
      (c) => remove(c, { resource: CONFIGMAPS, namespace: 'ns', name: 'c' }),
      ['DELETE', '/api/v1/namespaces/ns/configmaps/c'],
    ],
    [
      'remove with DeleteOptions',
      (c) => remove(c, { resource: CONFIGMAPS, namespace: 'ns', name: 'c' }, { kind: 'DeleteOptions' }),
      ['DELETE', '/api/v1/namespaces/ns/configmaps/c', { body: { kind: 'DeleteOptions' } }],
    ],
    [
      'a Flux Kustomization by its apiVersion',
      (c) =>
        find(c, {
          resource: resourceOf('kustomize.toolkit.fluxcd.io/v1', 'kustomizations'),
          namespace: 'f',
          name: 'k',
        }),
      ['GET', '/apis/kustomize.toolkit.fluxcd.io/v1/namespaces/f/kustomizations/k'],
    ],
    [
      'list in all namespaces',
      (c) => list(c, { resource: CONFIGMAPS }, { query: { labelSelector: 'a=b' } }),
      ['GET', '/api/v1/configmaps', { query: { labelSelector: 'a=b' } }],
    ],
  ])('%s', async (_, call, want) => {
    const { client, sent } = recording();
    await call(client);
    expect(sent).toEqual([want]);
  });

  it('list reads every page, one request each', async () => {
    const pages = [
      { items: [1, 2], metadata: { continue: 't1' } },
      { items: [3], metadata: { continue: 't2' } },
      { items: [], metadata: { continue: '' } },
    ];
    const { client, sent } = recording((_m, _p, n) => pages[n - 1]);
    const items = await list<number>(
      client,
      { resource: DEPLOYMENTS, namespace: 'ns' },
      { pageSize: 2, noWaitOn429: true },
    );
    expect(items).toEqual([1, 2, 3]);
    expect(sent.map(([, , o]) => o?.['query'])).toEqual([
      { limit: 2, continue: undefined },
      { limit: 2, continue: 't1' },
      { limit: 2, continue: 't2' },
    ]);
    expect(sent[0]![2]).toMatchObject({ noWaitOn429: true });
  });

  it('find and exists say undefined/false on 404 and throw any other error', async () => {
    const ref = { resource: CONFIGMAPS, namespace: 'ns', name: 'c' };
    const failing = (err: Error) =>
      recording(() => {
        throw err;
      }).client;
    expect(await find(failing(notFound()), ref)).toBeUndefined();
    expect(await exists(failing(notFound()), ref)).toBe(false);
    expect(await exists(recording().client, ref)).toBe(true);
    const forbidden = new ApiError(403, 'Forbidden', 'no');
    await expect(find(failing(forbidden), ref)).rejects.toBe(forbidden);
  });

  it('waitGone looks until each object is gone, or returns those left at the timeout', async () => {
    let t = 0;
    const clock: Clock = {
      now: () => t,
      sleep: (ms) => {
        t += ms;
        return Promise.resolve();
      },
    };
    const a = { resource: CONFIGMAPS, namespace: 'ns', name: 'a' };
    const b = { resource: CONFIGMAPS, namespace: 'ns', name: 'b' };
    // a goes after the second look; b stays.
    let looksAtA = 0;
    const { client, sent } = recording((_m, path) => {
      if (path.endsWith('/a') && ++looksAtA >= 2) throw notFound();
      return {};
    });
    expect(await waitGone(client, [a, b], { timeoutMs: 500, intervalMs: 200, clock })).toEqual([b]);
    expect(sent.map(([, p]) => p.slice(-1)).join('')).toBe('abab' + 'b' + 'b');
    const gone = recording(() => {
      throw notFound();
    });
    expect(await waitGone(gone.client, [a, b], { timeoutMs: 500, intervalMs: 200, clock })).toEqual([]);
    expect(gone.sent).toHaveLength(2);
  });
});
