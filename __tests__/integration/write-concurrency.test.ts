// The writes of one stage go concurrently (src/ssa/write.ts), seen from a proxy in front of the real
// API server: the objects of one kind overlap in time, at most `concurrency` at once, the next kind
// starts once the kind before is answered, and once the checkpoint refuses (a lost lock) no write
// starts: those in flight finish and are in the change set.
import { describe, expect, it } from 'vitest';
import { ClusterClient } from '../../src/cluster/client.js';
import { Discovery } from '../../src/cluster/discovery.js';
import { loadKubeConfig } from '../../src/cluster/kubeconfig.js';
import type { KubeObject } from '../../src/objects/kube.js';
import { ApplyError, type ApplyOptions } from '../../src/ssa/apply.js';
import { ResourceManager } from '../../src/ssa/manager.js';
import { exists, freshNamespace } from '../helpers/cluster.js';
import { faultProxySuite, type FaultProxy, type RecordedRequest } from '../helpers/fault-proxy.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const object = (kind: 'ConfigMap' | 'Secret', ns: string, name: string): KubeObject => ({
  apiVersion: 'v1',
  kind,
  metadata: { name, namespace: ns },
  data: {},
});

describe('concurrent writes within a stage', () => {
  let admin: ClusterClient;
  let proxy: FaultProxy;
  faultProxySuite((c, p) => {
    admin = c;
    proxy = p;
  });

  /** A manager through the proxy (3 writes at once), its lines to `log`. */
  async function throughProxy(log: string[]) {
    const client = new ClusterClient(await loadKubeConfig({ kind: 'path', path: proxy.kubeconfig }));
    const manager = new ResourceManager(client, new Discovery(client), {
      fieldManager: 'write-concurrency-test',
      concurrency: 3,
      log: (l) => log.push(l),
    });
    return { client, manager };
  }

  /** A write (not a dry-run) of an object in `ns`. */
  const isWrite = (ns: string) => (r: { method: string; path: string; query: string | URLSearchParams }) =>
    r.method === 'PATCH' && r.path.startsWith(`/api/v1/namespaces/${ns}/`) && !String(r.query).includes('dryRun');

  const options = (extra: Partial<ApplyOptions> = {}): ApplyOptions => ({ dryRunOnly: false, ...extra });

  it('overlaps the writes of one kind, at most `concurrency` at once, and writes the next kind after', async () => {
    const ns = await freshNamespace(admin, 'wc');
    const names = ['a', 'b', 'c', 'd', 'e', 'f'];
    const objects = [
      ...names.map((n) => object('Secret', ns, `s-${n}`)),
      ...names.map((n) => object('ConfigMap', ns, n)),
    ];
    let inFlight = 0;
    let most = 0;
    /** For each write once a Secret write arrived: the ConfigMap writes not yet answered. */
    const unansweredAtSecret: RecordedRequest[][] = [];
    const hold = (ms: number) => async () => {
      if (proxy.requests.some((r) => isWrite(ns)(r) && r.path.includes('/secrets/'))) {
        unansweredAtSecret.push(
          proxy.requests.filter((r) => isWrite(ns)(r) && r.path.includes('/configmaps/') && r.status === 0),
        );
      }
      most = Math.max(most, ++inFlight);
      await sleep(ms);
      inFlight--;
    };
    proxy.setRules([
      // The last ConfigMap is held longest: a Secret write that did not wait for it would overlap it.
      { match: (r) => isWrite(ns)(r) && r.path.endsWith('/configmaps/f'), fault: { beforeForward: hold(600) } },
      // Held long enough that sequential writes could never overlap.
      { match: (r) => isWrite(ns)(r), fault: { beforeForward: hold(150) } },
    ]);
    const log: string[] = [];
    const { client, manager } = await throughProxy(log);
    try {
      const changeset = await manager.apply(objects, options());
      expect(changeset.map((e) => `${e.kind}/${e.name} ${e.action}`)).toEqual([
        ...names.map((n) => `ConfigMap/${n} created`),
        ...names.map((n) => `Secret/s-${n} created`),
      ]);
      expect(log).toEqual(changeset.map((e) => `${e.subject} created`));
    } finally {
      client.close();
    }
    expect(most).toBe(3);
    const writes = proxy.requests.filter((r) => isWrite(ns)(r));
    expect(writes.map((r) => r.path.split('/')[5])).toEqual([
      ...names.map(() => 'configmaps'),
      ...names.map(() => 'secrets'),
    ]);
    expect(unansweredAtSecret).toHaveLength(names.length);
    expect(unansweredAtSecret.flat()).toEqual([]);
  });

  it('starts no write once the checkpoint refuses; the writes in flight finish and are in the change set', async () => {
    const ns = await freshNamespace(admin, 'wc');
    const names = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
    let lost = false;
    let passed = 0;
    proxy.setRules([
      {
        match: (r) => isWrite(ns)(r),
        times: 1,
        fault: {
          beforeForward: async () => {
            // The lock is lost while the first write is on its way; the writes in flight go on.
            lost = true;
            await sleep(300);
          },
        },
      },
    ]);
    const log: string[] = [];
    const { client, manager } = await throughProxy(log);
    let error: unknown;
    try {
      await manager.apply(
        names.map((n) => object('ConfigMap', ns, n)),
        options({
          checkpoint: () => {
            if (lost) return Promise.reject(new Error('lost the lock'));
            passed++;
            return Promise.resolve();
          },
        }),
      );
    } catch (err) {
      error = err;
    } finally {
      client.close();
    }
    expect(error).toBeInstanceOf(ApplyError);
    expect((error as ApplyError).message).toBe('lost the lock');
    // One checkpoint for the stage, then one per write; the writes were in flight together.
    const started = passed - 1;
    expect(started).toBeGreaterThanOrEqual(2);
    expect(started).toBeLessThanOrEqual(3);
    await sleep(500);
    const writes = proxy.requests.filter((r) => isWrite(ns)(r));
    expect(writes).toHaveLength(started);
    expect(writes.every((r) => r.status === 201)).toBe(true);
    const written = names.slice(0, started);
    expect((error as ApplyError).changeset.map((e) => `${e.name} ${e.action}`)).toEqual(
      written.map((n) => `${n} created`),
    );
    expect(log).toEqual(written.map((n) => `ConfigMap/${ns}/${n} created`));
    for (const n of names) {
      expect(await exists(admin, `/api/v1/namespaces/${ns}/configmaps/${n}`)).toBe(written.includes(n));
    }
  });
});
