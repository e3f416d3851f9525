// Issue #17 finding 7: a run that stalls past its lease (SIGSTOP, a suspended runner, a long GC) and
// whose lock another run took over must stop when it resumes: no more applies, no prune, and the
// inventory the other run wrote is left as it is, so that it still matches the cluster.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { InventoryStore } from '../../src/inventory/store.js';
import { reconcile } from '../../src/reconcile.js';
import { normalize, type RawSettings } from '../../src/settings.js';
import { startReconcileChild, stopped } from '../helpers/child.js';
import { exists, freshNamespace, kubeconfigPath, writeTree } from '../helpers/cluster.js';
import { faultProxySuite, on, type FaultProxy } from '../helpers/fault-proxy.js';
import { KUSTOMIZE } from '../helpers/paths.js';

const cm = (ns: string, name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}, namespace: ${ns}}\ndata: {a: b}\n`;

/** The Kustomization of path `app` is flux-system/app; its inventory and lock live in the test's namespace. */
const KS = { name: 'app', namespace: 'flux-system' };
const LEASE = 'kustomize-reconcile.flux-system.app';
const OWNER = 'kustomize.toolkit.fluxcd.io/name=app,kustomize.toolkit.fluxcd.io/namespace=flux-system';

/** Writes `root`/app with a ConfigMap per name and a kustomization.yaml listing them. */
async function tree(root: string, ns: string, names: string[]): Promise<void> {
  await rm(join(root, 'app'), { recursive: true, force: true });
  const files: Record<string, string> = {
    'app/kustomization.yaml': `resources: [${names.map((n) => `${n}.yaml`).join(', ')}]\n`,
  };
  for (const n of names) files[`app/${n}.yaml`] = cm(ns, n);
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

  const settings = (root: string, ns: string, extra: Partial<RawSettings>): RawSettings => ({
    kubeconfig: { kind: 'path', path: kubeconfigPath() },
    root,
    path: 'app',
    kustomizeBin: KUSTOMIZE,
    prune: true,
    inventoryNamespace: ns,
    lockLeaseMs: 2_000,
    ...extra,
  });
  const inProcess = (raw: RawSettings, log: string[]) =>
    reconcile(normalize(raw), { log: (l) => log.push(l), secret: () => {} });

  it('stops a run that resumes after another run took its lock over: nothing more applied, nothing pruned', async () => {
    const ns = await freshNamespace(client);
    const cmPath = (name: string) => `/api/v1/namespaces/${ns}/configmaps/${name}`;
    const root = await writeTree({});
    // The inventory before: c1 and keep.
    await tree(root, ns, ['c1', 'keep']);
    const first = await inProcess(settings(root, ns, { run: { holder: 'run-0' } }), []);
    expect(first.error).toBeUndefined();

    // Run A (its own process, through the proxy) would add c2 and c3 and prune keep. It is stopped
    // for real the moment it sends the apply of c2, so it stalls between two applies.
    await tree(root, ns, ['c1', 'c2', 'c3']);
    let pid = 0;
    proxy.setRules([
      {
        match: on('PATCH', `/api/v1/namespaces/${ns}/configmaps/c2`, { dryRun: false }),
        times: 1,
        fault: {
          beforeForward: async () => {
            process.kill(pid, 'SIGSTOP');
            await stopped(pid);
          },
        },
      },
    ]);
    const a = await startReconcileChild({
      ...settings(root, ns, { run: { holder: 'run-A' } }),
      kubeconfig: { kind: 'path', path: proxy.kubeconfig },
    });
    pid = a.process.pid!;
    const c2Applied = () =>
      proxy.requests.find(
        (r) => r.method === 'PATCH' && r.path === cmPath('c2') && !r.query.includes('dryRun') && r.status !== 0,
      );
    for (let i = 0; !c2Applied(); i++) {
      if (i > 600) throw new Error(`run A never applied c2:\n${a.lines.join('\n')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await exists(client, cmPath('c2'))).toBe(true);

    // While A is stopped, its lease expires; run B (Git went back to c1 and keep) takes the lock
    // over and reconciles: c2, pending in A's record, is pruned; keep stays.
    await tree(root, ns, ['c1', 'keep']);
    const logB: string[] = [];
    const b = await inProcess(
      settings(root, ns, { lockTimeout: '1m', run: { holder: 'run-B', url: 'https://ci.test/run-B' } }),
      logB,
    );
    expect(b.error).toBeUndefined();
    expect(logB).toContain(`Taking over the expired lock ${ns}/${LEASE} from run-A`);
    const inventoryB = (await new InventoryStore(client, ns, KS).read()).record;

    // A resumes.
    const resumedAt = proxy.requests.length;
    a.process.kill('SIGCONT');
    const { code, report } = await a.exited;
    const after = proxy.requests.slice(resumedAt);

    expect(code).toBe(1);
    expect(report?.error).toMatch(
      new RegExp(
        `^lost the lock ${ns}/${LEASE.replace(/\./g, '\\.')}: it was taken over by run-B( \\(released since\\))?, ` +
          `while this run did not renew it for [0-9.]+s \\(its lease lasts 2s\\)\\. This run stopped: it applied ` +
          `nothing more and pruned nothing\\. It had applied 1 object\\(s\\): ConfigMap/${ns}/c2 created`,
      ),
    );
    // After resuming, A wrote no object and deleted nothing.
    const writes = after.filter(
      (r) =>
        r.path.startsWith(`/api/v1/namespaces/${ns}/configmaps/`) &&
        !r.path.includes(LEASE) &&
        (r.method === 'DELETE' || (r.method === 'PATCH' && !r.query.includes('dryRun'))),
    );
    expect(writes).toEqual([]);
    expect(await exists(client, cmPath('c3'))).toBe(false);
    expect(await exists(client, cmPath('keep'))).toBe(true);
    expect(await exists(client, cmPath('c2'))).toBe(false);

    // The inventory is B's, untouched, and matches the cluster.
    const inventory = (await new InventoryStore(client, ns, KS).read()).record;
    expect(inventory).toEqual(inventoryB);
    expect(inventory?.status).toMatchObject({ result: 'Succeeded', runUrl: 'https://ci.test/run-B' });
    expect(inventory?.pending).toEqual([]);
    const live = await client.request<{ items: { metadata: { name: string } }[] }>(
      'GET',
      `/api/v1/namespaces/${ns}/configmaps`,
      { query: { labelSelector: OWNER } },
    );
    expect(inventory?.entries.map((e) => e.id).sort()).toEqual(
      live.items.map((i) => `${ns}_${i.metadata.name}__ConfigMap`).sort(),
    );
  }, 90_000);
});
