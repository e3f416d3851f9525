import { describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import type { Report } from '../../src/report/model.js';
import { freshNamespace, writeTree } from '../helpers/cluster.js';
import { faultProxySuite, on, type FaultProxy, type RecordedRequest } from '../helpers/fault-proxy.js';
import { reconcileTree } from '../helpers/reconcile.js';

// The client's retry policy against a real apiserver behind a fault-injecting proxy: 429 (with
// Retry-After), 5xx and connection resets are retried up to 5 attempts; other 4xx are not.
describe('retries through a fault-injecting proxy', () => {
  let client: ClusterClient;
  let proxy: FaultProxy;
  faultProxySuite((c, p) => {
    client = c;
    proxy = p;
  });

  /** A tree with one ConfigMap in a fresh namespace; returns its root, namespace and the ConfigMap's URL path. */
  async function oneConfigMap(): Promise<{ root: string; ns: string; path: string }> {
    const ns = await freshNamespace(client, 'retry');
    const root = await writeTree({
      'app/cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: ${ns}\ndata:\n  a: "1"\n`,
    });
    return { root, ns, path: `/api/v1/namespaces/${ns}/configmaps/settings` };
  }

  /** Runs an apply through the proxy and returns the report and the requests the proxy saw during it. */
  async function applyThroughProxy(root: string): Promise<{ report: Report; seen: RecordedRequest[]; ms: number }> {
    const before = proxy.requests.length;
    const started = Date.now();
    const report = await reconcileTree(root, { kubeconfig: { kind: 'path', path: proxy.kubeconfig }, path: 'app' });
    return { report, seen: proxy.requests.slice(before), ms: Date.now() - started };
  }

  const statuses = (seen: RecordedRequest[], method: string, path: string, dryRun?: boolean) =>
    seen
      .filter(
        (r) =>
          r.method === method && r.path === path && (dryRun === undefined || r.query.includes('dryRun=All') === dryRun),
      )
      .map((r) => r.status);

  async function liveData(path: string): Promise<Record<string, string> | undefined> {
    const cm = await client.request<{ data?: Record<string, string> }>('GET', path);
    return cm.data;
  }

  it('retries dry-run PATCHes answered 429 after Retry-After, then applies', async () => {
    const { root, path } = await oneConfigMap();
    proxy.setRules([{ match: on('PATCH', path, { dryRun: true }), times: 2, fault: { status: 429, retryAfter: 1 } }]);
    const { report, seen, ms } = await applyThroughProxy(root);
    expect(report.error).toBeUndefined();
    expect(report.ok).toBe(true);
    expect(report.changeset.map((e) => e.action)).toEqual(['created']);
    expect(statuses(seen, 'PATCH', path, true)).toEqual([429, 429, 201]);
    expect(statuses(seen, 'PATCH', path, false)).toEqual([201]);
    // Retry-After: 1 was honoured twice (the client's own backoff would be ~0.2 s + ~0.4 s).
    expect(ms).toBeGreaterThanOrEqual(1900);
    expect(await liveData(path)).toEqual({ a: '1' });
  });

  it('retries a LIST answered 503', async () => {
    const { root, ns, path } = await oneConfigMap();
    const collection = `/api/v1/namespaces/${ns}/configmaps`;
    proxy.setRules([{ match: on('GET', collection), times: 1, fault: { status: 503 } }]);
    const { report, seen } = await applyThroughProxy(root);
    expect(report.error).toBeUndefined();
    expect(statuses(seen, 'GET', collection)).toEqual([503, 200]);
    expect(statuses(seen, 'GET', path)).toEqual([]);
    expect(report.changeset.map((e) => e.action)).toEqual(['created']);
    expect(await liveData(path)).toEqual({ a: '1' });
  });

  it('retries an apply PATCH whose connection was reset', async () => {
    const { root, path } = await oneConfigMap();
    proxy.setRules([{ match: on('PATCH', path, { dryRun: false }), times: 1, fault: { reset: true } }]);
    const { report, seen } = await applyThroughProxy(root);
    expect(report.error).toBeUndefined();
    expect(statuses(seen, 'PATCH', path, true)).toEqual([201]);
    expect(statuses(seen, 'PATCH', path, false)).toEqual(['reset', 201]);
    expect(report.changeset.map((e) => e.action)).toEqual(['created']);
    expect(await liveData(path)).toEqual({ a: '1' });
  });

  it('gives up on a permanent 503 after 5 attempts, naming the request and the status', async () => {
    const { root, path } = await oneConfigMap();
    proxy.setRules([{ match: () => true, fault: { status: 503, body: 'text' } }]);
    const { report, seen } = await applyThroughProxy(root);
    expect(report.ok).toBe(false);
    // An apply first checks the inventory's namespace (while discovery is read beside it and the
    // build runs); each is tried 5 times, then the run stops, having written nothing.
    expect(report.error).toContain('GET /api/v1/namespaces/flux-system');
    expect(report.error).toContain('HTTP 503');
    expect(statuses(seen, 'GET', '/api/v1/namespaces/flux-system')).toEqual([503, 503, 503, 503, 503]);
    const discovery = statuses(seen, 'GET', '/api');
    expect(discovery.length).toBeGreaterThanOrEqual(1);
    expect(new Set(discovery)).toEqual(new Set([503]));
    expect(seen).toHaveLength(5 + discovery.length);
    expect(report.changeset).toEqual([]);
    await expect(liveData(path)).rejects.toMatchObject({ status: 404 });
  });

  it('does not retry a 422', async () => {
    const { root, path } = await oneConfigMap();
    proxy.setRules([{ match: on('PATCH', path, { dryRun: true }), fault: { status: 422 } }]);
    const { report, seen } = await applyThroughProxy(root);
    expect(report.ok).toBe(false);
    expect(report.error).toContain('dry-run failed');
    expect(report.error).toContain('injected fault: HTTP 422');
    expect(statuses(seen, 'PATCH', path)).toEqual([422]);
    await expect(liveData(path)).rejects.toMatchObject({ status: 404 });
  });
});
