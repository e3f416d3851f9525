// The resource manager (src/ssa/manager.ts) holds the field manager and the concurrency once: every
// apply it runs, also through a manager derived from it (another client, as a Kustomization's lock
// or its account gives it), writes as that field manager, with at most that many requests at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterClient, type RequestOptions } from '../../src/cluster/client.js';
import { Discovery } from '../../src/cluster/discovery.js';
import { loadKubeConfig } from '../../src/cluster/kubeconfig.js';
import type { KubeObject } from '../../src/objects/kube.js';
import { ResourceManager } from '../../src/ssa/manager.js';
import { adminClient, freshNamespace, kubeconfigPath } from '../helpers/cluster.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const configMap = (ns: string, name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns },
  data: { v: name },
});

/** A client that counts the applies (PATCH) of `ns` in flight, each held a little so that they can overlap. */
class Counting extends ClusterClient {
  inFlight = 0;
  most = { dryRun: 0, write: 0 };
  ns = '';

  override async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    if (method !== 'PATCH' || !path.startsWith(`/api/v1/namespaces/${this.ns}/`))
      return super.request(method, path, opts);
    const kind = opts.query?.['dryRun'] === undefined ? 'write' : 'dryRun';
    this.most[kind] = Math.max(this.most[kind], ++this.inFlight);
    try {
      await sleep(100);
      return await super.request(method, path, opts);
    } finally {
      this.inFlight--;
    }
  }
}

describe('the resource manager', () => {
  let admin: ClusterClient;
  beforeAll(async () => {
    admin = await adminClient();
  });
  afterAll(() => {
    admin.close();
  });

  it('applies as its field manager, also through a manager derived from it', async () => {
    const ns = await freshNamespace(admin, 'rm');
    const lines: string[] = [];
    const manager = new ResourceManager(admin, new Discovery(admin), {
      fieldManager: 'kr-manager-test',
      concurrency: 4,
      log: (l) => lines.push(l),
    });
    // As a Kustomization's lock gives it: a guarded view of the client.
    const derived = manager.with({ client: admin.guarded(() => Promise.resolve()) });
    const changeset = await derived.apply([configMap(ns, 'a')], { dryRunOnly: false });
    expect(changeset.map((e) => `${e.subject} ${e.action}`)).toEqual([`ConfigMap/${ns}/a created`]);
    expect(lines).toEqual([`ConfigMap/${ns}/a created`]);
    const live = await admin.request<{ metadata: { managedFields?: { manager: string; operation: string }[] } }>(
      'GET',
      `/api/v1/namespaces/${ns}/configmaps/a`,
    );
    expect(live.metadata.managedFields?.map((f) => `${f.manager} ${f.operation}`)).toEqual(['kr-manager-test Apply']);
  });

  it('has at most its concurrency of dry-runs and writes in flight', async () => {
    const client = new Counting(await loadKubeConfig({ kind: 'path', path: kubeconfigPath() }));
    try {
      client.ns = await freshNamespace(admin, 'rm');
      const manager = new ResourceManager(client, new Discovery(client), {
        fieldManager: 'kr-manager-test',
        concurrency: 2,
        log: () => undefined,
      });
      const names = ['a', 'b', 'c', 'd', 'e', 'f'];
      const changeset = await manager.apply(
        names.map((n) => configMap(client.ns, n)),
        { dryRunOnly: false },
      );
      expect(changeset.map((e) => e.action)).toEqual(names.map(() => 'created'));
      expect(client.most).toEqual({ dryRun: 2, write: 2 });
    } finally {
      client.close();
    }
  });
});
