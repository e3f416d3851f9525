// Issue #17 finding 7: a run that stalls past its lease (SIGSTOP, a suspended runner, a long GC) and
// whose lock another run took over must stop when it resumes: no more applies, no prune, and the
// inventory the other run wrote is left as it is, so that it still matches the cluster.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { InventoryStore } from '../../src/inventory/store.js';
import type { OptionValues } from '../../src/options/settings.js';
import { stopped } from '../helpers/child.js';
import { exists, freshNamespace, writeTree } from '../helpers/cluster.js';
import { faultProxySuite, on, type FaultProxy, type FaultRule, type RecordedRequest } from '../helpers/fault-proxy.js';
import {
  inProcess,
  KS,
  LEASE,
  lockSettings as settings,
  resumeA,
  runZero,
  SOURCE,
  startThroughProxy,
  takeOverAsB,
  untilA,
} from '../helpers/lock-runs.js';
import { configMap, kustomizationYaml } from '../helpers/manifests.js';
import { testRawSettings } from '../helpers/reconcile.js';

const OWNER = 'kustomize.toolkit.fluxcd.io/name=app,kustomize.toolkit.fluxcd.io/namespace=flux-system';

/** A Deployment that never becomes ready: no node matches its selector. */
const stuckDeployment = (ns: string, name: string) => `apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}, namespace: ${ns}}
spec:
  replicas: 1
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      nodeSelector: {no-such-node: "true"}
      containers: [{name: web, image: "nginx:1.27"}]
`;

/** Writes `root`/app with a ConfigMap per name (and `other` files by name) and a kustomization.yaml listing them. */
async function tree(root: string, ns: string, names: string[], other: Record<string, string> = {}): Promise<void> {
  await rm(join(root, 'app'), { recursive: true, force: true });
  const all = [...names, ...Object.keys(other)];
  const files: Record<string, string> = {
    'app/kustomization.yaml': `resources: [${all.map((n) => `${n}.yaml`).join(', ')}]\n`,
  };
  for (const n of names) files[`app/${n}.yaml`] = configMap(ns, n);
  for (const [n, text] of Object.entries(other)) files[`app/${n}.yaml`] = text;
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, rel)), { recursive: true });
    await writeFile(join(root, rel), text);
  }
}

describe('losing the lock stops the run', () => {
  let client: ClusterClient;
  let proxy: FaultProxy;
  faultProxySuite((c, p) => {
    client = c;
    proxy = p;
  });

  /**
   * Starts run A (the engine in its own process, through the proxy) with the tree `root` holds now,
   * and stops it for real (SIGSTOP) the moment it sends the request `stopOn`. That request reaches
   * the API server at once, or with `late` only when A resumes (a write already on the wire).
   */
  async function stallA(
    root: string,
    ns: string,
    stopOn: FaultRule['match'],
    late = false,
    extra: Partial<OptionValues> = {},
  ) {
    let pid = 0;
    let held: RecordedRequest | undefined;
    let release = () => {};
    const released = new Promise<void>((r) => {
      release = r;
    });
    proxy.setRules([
      {
        match: stopOn,
        times: 1,
        fault: {
          beforeForward: async () => {
            held = proxy.requests.findLast((r) =>
              stopOn({ method: r.method, path: r.path, query: new URLSearchParams(r.query) }),
            );
            process.kill(pid, 'SIGSTOP');
            await stopped(pid);
            if (late) await released;
          },
        },
      },
    ]);
    const a = await startThroughProxy(
      proxy,
      settings(root, ns, { ...extra, run: { holder: 'run-A', source: SOURCE } }),
    );
    pid = a.process.pid!;
    const stoppedAt = 'the request it is stopped at';
    const answered = () => untilA(a, () => held?.status !== undefined && held.status !== 0, stoppedAt);
    if (late) await untilA(a, () => held !== undefined, stoppedAt);
    else await answered();
    return {
      /** Lets the held request through (late), resumes A (SIGCONT), and waits for it to end. */
      resume: () =>
        resumeA(proxy, a, () => {
          release();
          return answered();
        }),
    };
  }

  /** The objects A wrote or deleted among `after` (its requests once resumed). */
  const writesOf = (ns: string, after: RecordedRequest[]) =>
    after.filter(
      (r) =>
        r.path.startsWith(`/api/v1/namespaces/${ns}/configmaps/`) &&
        !r.path.includes(LEASE) &&
        (r.method === 'DELETE' || (r.method === 'PATCH' && !r.query.includes('dryRun'))),
    );

  /** The inventory's entries are exactly the objects in the cluster that carry the owner labels. */
  async function expectInventoryMatchesCluster(ns: string) {
    const inventory = (await new InventoryStore(client, ns, KS).read()).record;
    const live = await client.request<{ items: { metadata: { name: string } }[] }>(
      'GET',
      `/api/v1/namespaces/${ns}/configmaps`,
      { query: { labelSelector: OWNER } },
    );
    expect(inventory?.entries.map((e) => e.id).sort()).toEqual(
      live.items.map((i) => `${ns}_${i.metadata.name}__ConfigMap`).sort(),
    );
    return inventory;
  }

  const lost = (ns: string) =>
    `^lost the lock ${ns}/${LEASE.replace(/\./g, '\\.')}: it was taken over by run-B( \\(released since\\))?, ` +
    `while this run did not renew it for [0-9.]+s \\(its lease lasts 2s\\)\\. This run stopped: `;

  it('stops a run that resumes after another run took its lock over: nothing more applied, nothing pruned', async () => {
    const ns = await freshNamespace(client);
    const cmPath = (name: string) => `/api/v1/namespaces/${ns}/configmaps/${name}`;
    const root = await writeTree({});
    // The inventory before: c1 and keep.
    await tree(root, ns, ['c1', 'keep']);
    await runZero(root, ns);

    // Run A would add c2 and c3 and prune keep; it stalls between the applies of c2 and c3.
    await tree(root, ns, ['c1', 'c2', 'c3']);
    // One write at a time (--concurrency 1), so that c3's write is not already in flight beside c2's:
    // the concurrent case is write-concurrency.test.ts.
    const a = await stallA(root, ns, on('PATCH', cmPath('c2'), { dryRun: false }), false, { concurrency: '1' });
    expect(await exists(client, cmPath('c2'))).toBe(true);

    // Meanwhile Git went back to c1 and keep: B prunes c2, pending in A's record, and keeps keep.
    await tree(root, ns, ['c1', 'keep']);
    const inventoryB = await takeOverAsB(client, root, ns);

    const { code, report, after } = await a.resume();
    expect(code).toBe(1);
    expect(report?.error).toMatch(
      new RegExp(
        lost(ns) +
          `it applied nothing more and pruned nothing\\. It had applied 1 object\\(s\\): ConfigMap/${ns}/c2 created; ` +
          'the run that holds the lock now may have changed or pruned them since\\.',
      ),
    );
    expect(writesOf(ns, after)).toEqual([]);
    expect(await exists(client, cmPath('c3'))).toBe(false);
    expect(await exists(client, cmPath('keep'))).toBe(true);
    expect(await exists(client, cmPath('c2'))).toBe(false);
    // The inventory is B's, untouched.
    const inventory = await expectInventoryMatchesCluster(ns);
    expect(inventory).toEqual(inventoryB);
    expect(inventory?.status).toMatchObject({ result: 'Succeeded', runUrl: 'https://ci.test/run-B' });
    expect(inventory?.pending).toEqual([]);
  }, 90_000);

  it('names an object whose write was already on the wire, and leaves the new holder’s inventory as it is', async () => {
    const ns = await freshNamespace(client);
    const cmPath = (name: string) => `/api/v1/namespaces/${ns}/configmaps/${name}`;
    const root = await writeTree({});
    await tree(root, ns, ['c1', 'keep']);
    await runZero(root, ns);

    // A's apply of c2 is stuck on the wire while A is stopped: it lands after B has finished.
    await tree(root, ns, ['c1', 'c2', 'c3']);
    const a = await stallA(root, ns, on('PATCH', cmPath('c2'), { dryRun: false }), true, { concurrency: '1' });
    await tree(root, ns, ['c1', 'keep']);
    const inventoryB = await takeOverAsB(client, root, ns);
    expect(inventoryB?.pending).toEqual([]);

    const { code, report, after } = await a.resume();
    expect(code).toBe(1);
    expect(report?.error).toMatch(new RegExp(lost(ns) + 'it applied nothing more and pruned nothing\\.'));
    // Nothing after the write that was already on the wire.
    expect(writesOf(ns, after)).toEqual([]);
    expect(await exists(client, cmPath('c2'))).toBe(true);
    expect(await exists(client, cmPath('c3'))).toBe(false);
    // c2 exists and is A's: a run that lost its lock records nothing (issue 33), so its report names it.
    expect(report?.error).toContain(
      `1 object(s) it wrote exist but are in no inventory (a write already on its way when the lock was taken over), ` +
        `so no run prunes them: ConfigMap/${ns}/c2;`,
    );
    const inventory = (await new InventoryStore(client, ns, KS).read()).record;
    expect(inventory).toEqual(inventoryB);
  }, 90_000);

  it('a fan-out job that lost its lock does not write its failure over the new holder’s record', async () => {
    const ns = await freshNamespace(client);
    const cmPath = (name: string) => `/api/v1/namespaces/${ns}/configmaps/${name}`;
    const root = await writeTree({ 'ks.yaml': kustomizationYaml({ name: 'app', prune: true }) });
    // The matrix job of flux-system/app (select), as the README's fan-out runs it, at commit A.
    const job = (commit: string, holder: string): Partial<OptionValues> => ({
      path: undefined,
      name: undefined,
      prune: undefined,
      kustomizations: ['ks.yaml'],
      select: ['flux-system/app'],
      run: { holder, source: SOURCE, commit, revision: commit },
    });
    await tree(root, ns, ['c1', 'keep']);
    expect((await inProcess({ ...settings(root, ns, job('0'.repeat(40), 'run-0')) }, [])).error).toBeUndefined();

    await tree(root, ns, ['c1', 'c2', 'c3']);
    const a = await stallA(root, ns, on('PATCH', cmPath('c2'), { dryRun: false }), false, {
      concurrency: '1',
      ...job('a'.repeat(40), 'run-A'),
    });
    // B, the next commit's job, takes the lock over and succeeds.
    await tree(root, ns, ['c1', 'keep']);
    const log: string[] = [];
    const b = await inProcess(settings(root, ns, { lockTimeout: '1m', ...job('b'.repeat(40), 'run-B') }), log);
    expect(b.error).toBeUndefined();
    expect(log).toContain(`Taking over the expired lock ${ns}/${LEASE} from run-A`);
    const inventoryB = (await new InventoryStore(client, ns, KS).read()).record;
    expect(inventoryB?.status).toMatchObject({ result: 'Succeeded', commit: 'b'.repeat(40) });

    const { code, report, after } = await a.resume();
    expect(code).toBe(1);
    expect(report?.error).toMatch(new RegExp(lost(ns)));
    expect(writesOf(ns, after)).toEqual([]);
    // No "Failed at commit A" record over B's, and the lock was not taken again to write one (a
    // renewal sent before A saw the takeover is refused with 409).
    expect((await new InventoryStore(client, ns, KS).read()).record).toEqual(inventoryB);
    expect(
      after.filter(
        (r) => r.path.includes(LEASE) && r.method !== 'GET' && typeof r.status === 'number' && r.status < 300,
      ),
    ).toEqual([]);
  }, 90_000);

  it('stops pruning at the next delete once the lock was taken over', async () => {
    const ns = await freshNamespace(client);
    const cmPath = (name: string) => `/api/v1/namespaces/${ns}/configmaps/${name}`;
    const root = await writeTree({});
    await tree(root, ns, ['c1', 'old1', 'old2']);
    await runZero(root, ns);

    // A prunes old1 and old2; it stalls at its first delete.
    await tree(root, ns, ['c1']);
    const a = await stallA(root, ns, on('DELETE', new RegExp(`^${cmPath('old[12]')}$`)));
    // Git brought them back: B recreates the one A deleted.
    await tree(root, ns, ['c1', 'old1', 'old2']);
    const inventoryB = await takeOverAsB(client, root, ns);

    const { code, report, after } = await a.resume();
    expect(code).toBe(1);
    expect(report?.error).toMatch(
      new RegExp(
        lost(ns) +
          `it applied nothing more and pruned nothing more\\. It had applied nothing\\. ` +
          `It had pruned 1 object\\(s\\): ConfigMap/${ns}/old[12]\\.`,
      ),
    );
    expect(writesOf(ns, after)).toEqual([]);
    expect(await exists(client, cmPath('old1'))).toBe(true);
    expect(await exists(client, cmPath('old2'))).toBe(true);
    expect(await expectInventoryMatchesCluster(ns)).toEqual(inventoryB);
  }, 90_000);

  it('stops waiting for health, and prunes nothing, once the lock was taken over', async () => {
    const ns = await freshNamespace(client);
    const cmPath = (name: string) => `/api/v1/namespaces/${ns}/configmaps/${name}`;
    const deployPath = `/apis/apps/v1/namespaces/${ns}/deployments/stuck`;
    const root = await writeTree({});
    await tree(root, ns, ['c1', 'keep']);
    await runZero(root, ns);

    // A applies a Deployment that never becomes ready and would prune keep after the wait; it
    // stalls at its first health read.
    await tree(root, ns, ['c1'], { stuck: stuckDeployment(ns, 'stuck') });
    const appliedStuck = () =>
      proxy.requests.some((r) => r.method === 'PATCH' && r.path === deployPath && !r.query.includes('dryRun'));
    const a = await stallA(root, ns, (r) => r.method === 'GET' && r.path === deployPath && appliedStuck(), false, {
      wait: true,
      timeout: '2m',
    });
    await tree(root, ns, ['c1', 'keep']);
    const inventoryB = await takeOverAsB(client, root, ns);

    const { code, report, after } = await a.resume();
    expect(code).toBe(1);
    expect(report?.error).toMatch(
      new RegExp(
        lost(ns) +
          `it applied nothing more and pruned nothing\\. It had applied 1 object\\(s\\): Deployment/${ns}/stuck created; ` +
          'the run that holds the lock now may have changed or pruned them since\\.',
      ),
    );
    expect(writesOf(ns, after)).toEqual([]);
    expect(await exists(client, cmPath('keep'))).toBe(true);
    expect(await expectInventoryMatchesCluster(ns)).toEqual(inventoryB);
  }, 90_000);

  it('stops deleting a removed Kustomization once a run that applies it again took its lock over', async () => {
    const ns = await freshNamespace(client);
    const cmPath = (name: string) => `/api/v1/namespaces/${ns}/configmaps/${name}`;
    const ks = (name: string) => kustomizationYaml({ name, namespace: ns, prune: true });
    const root = await writeTree({
      'ks.yaml': [ks('keep'), ks('gone')].join('---\n'),
      'keep/cm.yaml': configMap(ns, 'keep-1'),
      'gone/cm.yaml': [configMap(ns, 'gone-1'), configMap(ns, 'gone-2')].join('---\n'),
    });
    const files = (holder: string): OptionValues =>
      testRawSettings(root, {
        lockLeaseMs: 2_000,
        lockTimeout: '1m',
        removedKustomizations: 'delete',
        run: { holder, source: SOURCE },
      });
    expect((await inProcess(files('run-0'), [])).error).toBeUndefined();

    // The file no longer names `gone`: A deletes its objects, and stalls at the first delete.
    await writeFile(join(root, 'ks.yaml'), ks('keep'));
    let pid = 0;
    proxy.setRules([
      {
        match: on('DELETE', new RegExp(`^${cmPath('gone-[12]')}$`)),
        times: 1,
        fault: {
          beforeForward: async () => {
            process.kill(pid, 'SIGSTOP');
            await stopped(pid);
          },
        },
      },
    ]);
    const a = await startThroughProxy(proxy, files('run-A'));
    pid = a.process.pid!;
    const firstDelete = () =>
      proxy.requests.some((r) => r.method === 'DELETE' && /\/configmaps\/gone-[12]$/.test(r.path) && r.status !== 0);
    await untilA(a, firstDelete, 'its first delete');

    // The file came back: B takes the lock of `gone` over and applies it again.
    await writeFile(join(root, 'ks.yaml'), [ks('keep'), ks('gone')].join('---\n'));
    const logB: string[] = [];
    const b = await inProcess(files('run-B'), logB);
    expect(b.error).toBeUndefined();
    expect(logB.some((l) => l.includes('Taking over the expired lock') && l.endsWith('from run-A'))).toBe(true);
    const storeB = new InventoryStore(client, ns, { name: 'gone', namespace: ns });
    const inventoryB = (await storeB.read()).record;
    expect(inventoryB?.entries.map((e) => e.id).sort()).toEqual([`${ns}_gone-1__ConfigMap`, `${ns}_gone-2__ConfigMap`]);

    const { code, report, after } = await resumeA(proxy, a);
    expect(code).toBe(1);
    expect(report?.removed).toMatchObject([{ kustomization: `${ns}/gone`, action: 'failed' }]);
    expect(report?.removed?.[0]?.reason).toMatch(
      new RegExp(`^lost the lock ${ns}/[^:]+: it was taken over by run-B( \\(released since\\))?, while this run`),
    );
    // A deleted nothing more: not B's objects, not B's inventory, not the lease.
    expect(after.filter((r) => r.method === 'DELETE')).toEqual([]);
    expect(await exists(client, cmPath('gone-1'))).toBe(true);
    expect(await exists(client, cmPath('gone-2'))).toBe(true);
    expect((await storeB.read()).record).toEqual(inventoryB);
  }, 90_000);
});
