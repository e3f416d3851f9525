// Issue 33 item 2: a Lease on a Kustomization's lock whose claim no run of the action writes (a
// renewTime in 2099, a huge leaseDurationSeconds). Not marked as the action's, it is refused at once,
// left as it is, and the error names it, its holder, why, and the kubectl command that deletes it.
// Marked as the action's (its label, or a holder in the format runs write), its claim is bounded:
// waited for as a lock, with a warning that says so, and taken over once the bounded claim ran out.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { adminClient, exists, freshNamespace, writeTree } from '../helpers/cluster.js';
import { configMap } from '../helpers/manifests.js';
import { reconcileTree } from '../helpers/reconcile.js';

const NAME = 'kustomize-reconcile.flux-system.victim2';
const LABELS = { 'app.kubernetes.io/managed-by': 'kustomize-reconcile' };
const micro = (ms: number) => new Date(ms).toISOString().replace(/Z$/, '000Z');

interface Lease {
  metadata: { resourceVersion: string; labels?: Record<string, string> };
  spec: { holderIdentity?: string | null; renewTime?: string; leaseDurationSeconds?: number };
}

describe('a forged Lease on a Kustomization’s lock', () => {
  let client: ClusterClient;
  const leases = (ns: string) => `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`;
  beforeAll(async () => {
    client = await adminClient();
  });
  afterAll(() => {
    client.close();
  });

  async function setUp(spec: Lease['spec'], labels?: Record<string, string>) {
    const ns = await freshNamespace(client);
    await client.request('POST', leases(ns), {
      body: {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: NAME, namespace: ns, ...(labels ? { labels } : {}) },
        spec: { acquireTime: spec.renewTime, ...spec },
      },
    });
    const root = await writeTree({ 'app/cm.yaml': configMap(ns, 'victim-settings') });
    const before = await client.request<Lease>('GET', `${leases(ns)}/${NAME}`);
    const run = async (lockTimeout: string) => {
      const log: string[] = [];
      const started = Date.now();
      const report = await reconcileTree(
        root,
        {
          path: 'app',
          name: 'victim2',
          inventoryNamespace: ns,
          lockTimeout,
          run: { holder: 'run-V', source: 'local:test' },
        },
        log,
      );
      return { report, log, ms: Date.now() - started };
    };
    return { ns, before, run };
  }

  it('refuses at once a foreign Lease renewed in 2099 for ever, and leaves it as it is', async () => {
    const { ns, before, run } = await setUp({
      holderIdentity: 'attacker',
      renewTime: '2099-01-01T00:00:00.000000Z',
      leaseDurationSeconds: 2_147_483_647,
    });
    const { report, ms } = await run('1m');
    expect(ms).toBeLessThan(15_000);
    expect(report.ok).toBe(false);
    expect(report.failure).toMatchObject({ stage: 'resolve', reason: 'ReconciliationFailed' });
    expect(report.error).toMatch(
      new RegExp(
        `^the lock ${ns}/kustomize-reconcile\\.flux-system\\.victim2 is a Lease this run does not trust, held by "attacker": ` +
          'its leaseDurationSeconds 2147483647 is more than the 60s a run of kustomize-reconcile ever writes; ' +
          `its renewTime 2099-01-01T00:00:00\\.000000Z is \\d+ days ahead of this runner's clock .*` +
          `If it is not a run of kustomize-reconcile, delete it: kubectl delete lease --namespace ${ns} ${NAME.replace(/\./g, '\\.')}$`,
      ),
    );
    expect(report.changeset).toEqual([]);
    expect(await exists(client, `/api/v1/namespaces/${ns}/configmaps/victim-settings`)).toBe(false);
    const after = await client.request<Lease>('GET', `${leases(ns)}/${NAME}`);
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
  });

  it('takes over a Lease marked as the action’s whose huge duration, capped, has run out', async () => {
    const { ns, run } = await setUp(
      { holderIdentity: 'stuck-run', renewTime: micro(Date.now() - 120_000), leaseDurationSeconds: 2_147_483_647 },
      LABELS,
    );
    const { report, log, ms } = await run('1m');
    expect(report.error).toBeUndefined();
    expect(ms).toBeLessThan(15_000);
    expect(log).toContain(`Taking over the expired lock ${ns}/${NAME} from stuck-run`);
    expect(log.find((l) => l.startsWith('Warning: the lock'))).toContain(
      `Judged so (its duration capped at 60s, its renewTime at most 30s after this run first saw it), it has run out.`,
    );
    expect(await exists(client, `/api/v1/namespaces/${ns}/configmaps/victim-settings`)).toBe(true);
    const after = await client.request<Lease>('GET', `${leases(ns)}/${NAME}`);
    expect(after.metadata.labels).toEqual(LABELS);
    // Released by this run: no holder, the duration this run wrote.
    expect(after.spec.holderIdentity ?? null).toBeNull();
    expect(after.spec.leaseDurationSeconds).toBe(30);
  });

  it('waits for a Lease held by a run in the format runs write, bounded, and says so', async () => {
    const holder = 'https://github.com/org/repo/actions/runs/1 attempt 1 job deploy';
    const { ns, run } = await setUp({
      holderIdentity: holder,
      renewTime: '2099-01-01T00:00:00.000000Z',
      leaseDurationSeconds: 2_147_483_647,
    });
    const { report, log } = await run('2s');
    expect(report.error).toMatch(
      new RegExp(
        `^another run holds the lock ${ns}/[^:]+: ${holder.replace(/\./g, '\\.')} \\(last renewed 2099-.*gave up after waiting 2s`,
      ),
    );
    const warning = log.find((l) => l.startsWith('Warning: the lock'));
    expect(warning).toMatch(/It is judged as held until \S+ at most \(its duration capped at 60s/);
    expect(warning).toContain(`kubectl delete lease --namespace ${ns} ${NAME}`);
  });
});
