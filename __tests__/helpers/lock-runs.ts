// Runs of one Kustomization racing for its lock (lock-loss.test.ts, lock-lost-writes.test.ts): run A,
// the engine in a process of its own through the fault proxy, stopped (SIGSTOP) at a request and
// resumed (SIGCONT) later; run B, in the test's process and straight to the cluster, which takes the
// lock over once A's lease ran out.
import { expect } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { InventoryStore } from '../../src/inventory/store.js';
import { settingsOf, type OptionValues } from '../../src/options/settings.js';
import { startReconcileChild, type ChildRun } from './child.js';
import type { FaultProxy } from './fault-proxy.js';
import { reconcile, testRawSettings } from './reconcile.js';

/** The Kustomization of path `app` is flux-system/app; its inventory and lock live in the test's namespace. */
export const KS = { name: 'app', namespace: 'flux-system' };
/** Its lock's name, and its inventory head's. */
export const LEASE = 'kustomize-reconcile.flux-system.app';
/** The runs reconcile one repository. */
export const SOURCE = 'local:test';

/**
 * A run of path `app` in `root` that prunes, its inventory and lock (a 2 s lease) in `ns`. The input
 * `name` (issue #17 finding 1) keeps path `app` the Kustomization flux-system/app once names are
 * derived from the repository; a branch without it ignores it.
 */
export const lockSettings = (root: string, ns: string, extra: Partial<OptionValues>): OptionValues =>
  testRawSettings(root, {
    path: 'app',
    name: 'app',
    prune: true,
    inventoryNamespace: ns,
    lockLeaseMs: 2_000,
    ...extra,
  });

/** A run in this process, straight to the cluster; its log lines go to `log`. */
export const inProcess = (raw: OptionValues, log: string[] = []) =>
  reconcile(settingsOf(raw), { log: (l) => log.push(l), secret: () => {} });

/** Run 0, holder run-0: reconciles `root` as it is, so that A and B start from its inventory. */
export async function runZero(root: string, ns: string): Promise<void> {
  const log: string[] = [];
  const report = await inProcess(lockSettings(root, ns, { run: { holder: 'run-0', source: SOURCE } }), log);
  expect(report.error, log.join('\n')).toBeUndefined();
}

/** Run A with `raw`: the engine in its own process, through `proxy`. */
export const startThroughProxy = (proxy: FaultProxy, raw: OptionValues): Promise<ChildRun> =>
  startReconcileChild({ ...raw, kubeconfig: { kind: 'path', path: proxy.kubeconfig } });

/** Waits (100 ms at a time, `tries` times at most) until `done`; else fails with what A printed. */
export async function untilA(a: ChildRun, done: () => boolean, what: string, tries = 600): Promise<void> {
  for (let i = 0; !done(); i++) {
    if (i > tries) throw new Error(`run A never got to ${what}:\n${a.lines.join('\n')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Resumes the stopped run A (SIGCONT), after `before` (which lets a held request through), and waits
 * for it to end; `after` is every request it sent from then on.
 */
export async function resumeA(proxy: FaultProxy, a: ChildRun, before?: () => Promise<void>) {
  const from = proxy.requests.length;
  await before?.();
  a.process.kill('SIGCONT');
  const out = await a.exited;
  return { ...out, after: proxy.requests.slice(from) };
}

/** Run B, holder run-B (https://ci.test/run-B): takes the lock over from run-A and succeeds; its inventory record. */
export async function takeOverAsB(client: ClusterClient, root: string, ns: string) {
  const log: string[] = [];
  const report = await inProcess(
    lockSettings(root, ns, {
      lockTimeout: '1m',
      run: { holder: 'run-B', source: SOURCE, url: 'https://ci.test/run-B' },
    }),
    log,
  );
  expect(report.error, log.join('\n')).toBeUndefined();
  expect(log).toContain(`Taking over the expired lock ${ns}/${LEASE} from run-A`);
  return (await new InventoryStore(client, ns, KS).read()).record;
}
