// Issue 33 item 7: a run whose writes are throttled (429 with Retry-After) and that stalls while one
// waits for its retry must write nothing once another run took its lock over: not the retries of the
// object writes it had started, and not the retries of its inventory record. Run A is the engine in
// a process of its own through a fault proxy that throttles a share of its writes; it is stopped
// (SIGSTOP) while throttled writes wait for their retry; run B takes the lock over and finishes; then
// A resumes (SIGCONT). Nothing A sends after that may land: every ConfigMap keeps B's value and
// resourceVersion, and the inventory stays B's record.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import type { InventoryRecord } from '../../src/inventory/codec.js';
import { InventoryStore } from '../../src/inventory/store.js';
import type { Report } from '../../src/report/model.js';
import { stopped } from '../helpers/child.js';
import { freshNamespace, writeTree } from '../helpers/cluster.js';
import { faultProxySuite, type FaultProxy, type RecordedRequest, type SeenRequest } from '../helpers/fault-proxy.js';
import {
  KS,
  LEASE as HEAD,
  lockSettings,
  resumeA,
  runZero,
  startThroughProxy,
  takeOverAsB,
  untilA,
  SOURCE,
} from '../helpers/lock-runs.js';

const NAMES = ['c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c8'];

const cm = (ns: string, name: string, value: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}, namespace: ${ns}}\ndata: {value: ${value}}\n`;

/** `root`/app: a ConfigMap per name, each holding `value`. */
async function tree(root: string, ns: string, value: string, names: readonly string[]): Promise<void> {
  await rm(join(root, 'app'), { recursive: true, force: true });
  const files: Record<string, string> = {
    'app/kustomization.yaml': `resources: [${names.map((n) => `${n}.yaml`).join(', ')}]\n`,
  };
  for (const n of names) files[`app/${n}.yaml`] = cm(ns, n, value);
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, rel)), { recursive: true });
    await writeFile(join(root, rel), text);
  }
}

/** A write that persists (not a dry run) to a ConfigMap of `ns`: an object's or the inventory's. */
const isWrite =
  (ns: string) =>
  (r: { method: string; path: string; query: string | URLSearchParams }): boolean =>
    ['POST', 'PUT', 'PATCH', 'DELETE'].includes(r.method) &&
    r.path.startsWith(`/api/v1/namespaces/${ns}/configmaps`) &&
    !String(r.query).includes('dryRun');

interface Live {
  resourceVersion: string;
  data: Record<string, string>;
  managers: string[];
}

describe('a run that lost its lock while its writes were throttled writes nothing more', () => {
  let client: ClusterClient;
  let proxy: FaultProxy;
  faultProxySuite((c, p) => {
    client = c;
    proxy = p;
  });

  /** Every ConfigMap of `ns` (the inventory's included): resourceVersion, data, field managers. */
  async function snapshot(ns: string): Promise<Record<string, Live>> {
    const list = await client.request<{
      items: {
        metadata: { name: string; resourceVersion: string; managedFields?: { manager?: string; time?: string }[] };
        data?: Record<string, string>;
      }[];
    }>('GET', `/api/v1/namespaces/${ns}/configmaps`);
    return Object.fromEntries(
      list.items
        .filter((i) => i.metadata.name !== 'kube-root-ca.crt')
        .map((i) => [
          i.metadata.name,
          {
            resourceVersion: i.metadata.resourceVersion,
            data: i.data ?? {},
            managers: (i.metadata.managedFields ?? []).map((f) => `${f.manager ?? ''}@${f.time ?? ''}`),
          },
        ]),
    );
  }

  /**
   * Starts run A (its own process, through the proxy) with `throttle` deciding which of its writes
   * get 429 (Retry-After 2s); A is stopped (SIGSTOP) 300 ms after the answer to the write `stopAt`
   * says is the one, while that write (and any other throttled one) waits for its retry.
   */
  async function startA(
    root: string,
    ns: string,
    throttle: (r: SeenRequest) => boolean,
    stopAt: (r: SeenRequest) => boolean,
  ) {
    let pid = 0;
    let stop: Promise<void> | undefined;
    proxy.setRules([
      {
        match: (r) => {
          if (!throttle(r)) return false;
          if (stop === undefined && stopAt(r)) {
            stop = new Promise<void>((resolve, reject) => {
              setTimeout(() => {
                process.kill(pid, 'SIGSTOP');
                stopped(pid).then(resolve, reject);
              }, 300);
            });
          }
          return true;
        },
        fault: { status: 429, retryAfter: 2 },
      },
    ]);
    const a = await startThroughProxy(proxy, lockSettings(root, ns, { run: { holder: 'run-A', source: SOURCE } }));
    pid = a.process.pid!;
    await untilA(a, () => stop !== undefined, 'the write it is stopped at', 900);
    await stop;
    return {
      lines: a.lines,
      /** Resumes A (SIGCONT) and waits for it to end; `after` is what it sent once resumed. */
      resume: () => resumeA(proxy, a),
    };
  }

  /** A fresh namespace and a tree whose ConfigMaps hold v0, reconciled by run 0. */
  async function seeded(): Promise<{ ns: string; root: string }> {
    const ns = await freshNamespace(client, 'llw');
    const root = await writeTree({});
    await tree(root, ns, 'v0', NAMES);
    await runZero(root, ns);
    return { ns, root };
  }

  /**
   * Once A resumed (`resumed`, then `afterA`): every ConfigMap and the inventory are as B left them
   * (`afterB`, `inventoryB`), and A says, in its own report (it records nothing), that it lost the lock.
   */
  async function expectBsState(
    ns: string,
    s: {
      resumed: { code: number; report?: Report };
      afterA: Record<string, Live>;
      afterB: Record<string, Live>;
      inventoryB: InventoryRecord | undefined;
    },
  ): Promise<void> {
    expect(s.afterA).toEqual(s.afterB);
    expect(s.resumed.code).toBe(1);
    expect(s.resumed.report?.error).toMatch(
      new RegExp(`^lost the lock ${ns}/${HEAD.replace(/\./g, '\\.')}: it was taken over`),
    );
    const inventory = (await new InventoryStore(client, ns, KS).read()).record;
    expect(inventory).toEqual(s.inventoryB);
    expect(inventory?.status).toMatchObject({ result: 'Succeeded', runUrl: 'https://ci.test/run-B' });
  }

  /** A's writes, once resumed, that the API server took (not answered by the proxy, 2xx). */
  const landed = (ns: string, after: RecordedRequest[]) =>
    after
      .filter((r) => isWrite(ns)(r) && !r.injected && typeof r.status === 'number' && r.status < 300)
      .map((r) => `${r.method} ${r.path} ${r.status}`);

  it('drops the retries of throttled object writes once the lock was taken over', async () => {
    const { ns, root } = await seeded();

    // A writes vA; three in ten of its object writes are throttled, and it stalls while the third
    // of those waits for its retry.
    await tree(root, ns, 'vA', NAMES);
    let writes = 0;
    let throttled = 0;
    const objectWrite = (r: SeenRequest) => isWrite(ns)(r) && !r.path.endsWith(`/configmaps/${HEAD}`);
    const a = await startA(
      root,
      ns,
      (r) => objectWrite(r) && [1, 4, 7].includes(writes++ % 10) && ++throttled > 0,
      () => throttled === 3,
    );

    // Meanwhile B writes vB to every ConfigMap and records its inventory.
    await tree(root, ns, 'vB', NAMES);
    const inventoryB = await takeOverAsB(client, root, ns);
    const afterB = await snapshot(ns);
    for (const n of NAMES) expect(afterB[n]?.data).toEqual({ value: 'vB' });

    const resumed = await a.resume();
    const afterA = await snapshot(ns);
    const atA = NAMES.filter((n) => afterA[n]?.data['value'] === 'vA');
    const moved = Object.keys(afterB).filter((n) => afterA[n]?.resourceVersion !== afterB[n]?.resourceVersion);
    expect({ landed: landed(ns, resumed.after), atA, moved }).toEqual({ landed: [], atA: [], moved: [] });
    await expectBsState(ns, { resumed, afterA, afterB, inventoryB });
  }, 120_000);

  it('drops the retries of a throttled inventory record once the lock was taken over', async () => {
    const { ns, root } = await seeded();

    // A adds a-only and records its end: that write (its second to the inventory head) is throttled,
    // and A stalls while it waits for the retry.
    await tree(root, ns, 'vA', [...NAMES, 'a-only']);
    let heads = 0;
    const headPut = (r: SeenRequest) =>
      r.method === 'PUT' && r.path === `/api/v1/namespaces/${ns}/configmaps/${HEAD}` && ++heads === 2;
    const a = await startA(root, ns, headPut, () => true);

    // B's tree has b-only instead: it prunes a-only and records a Succeeded inventory.
    await tree(root, ns, 'vB', [...NAMES, 'b-only']);
    const inventoryB = await takeOverAsB(client, root, ns);
    expect(inventoryB?.entries.map((e) => e.id)).not.toContain(`${ns}_a-only__ConfigMap`);
    const afterB = await snapshot(ns);

    const resumed = await a.resume();
    const afterA = await snapshot(ns);
    expect({
      landed: landed(ns, resumed.after),
      head: afterA[HEAD]?.resourceVersion,
    }).toEqual({ landed: [], head: afterB[HEAD]?.resourceVersion });
    await expectBsState(ns, { resumed, afterA, afterB, inventoryB });
  }, 120_000);
});
