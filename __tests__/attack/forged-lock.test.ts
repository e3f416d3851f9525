// Issue 33 item 2: a Lease named like another Kustomization's lock blocks it. Anyone who can write
// Leases in the inventory namespace (or, before builds refused it, a tree applied there) can put one
// there with a renewTime in 2099 and a huge leaseDurationSeconds, or a foreign holder; every run of
// the victim then waits its whole lock-timeout and fails, until someone deletes the Lease. Each case
// plants such a Lease for flux-system/victim2, runs the bundled action in apply mode for it with
// lock-timeout 45s and judges: the run does not wait the lock-timeout out. A Lease the action cannot
// trust is refused at once, the message naming the Lease, its holder, why it is not trusted and the
// kubectl command that deletes it; a Lease that says it is the action's own is judged by what a run of
// the action ever writes (its duration capped, its renewTime not after this runner's clock), so one
// renewed long ago is taken over. Each case writes reports/attack/<case>.json.
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { runAction, type ActionResult } from '../helpers/action.js';
import { adminClient, freshNamespace, kubeconfigPath, writeTree } from '../helpers/cluster.js';
import { cm } from '../helpers/flux-trees.js';
import { attackCase } from '../helpers/hostile.js';

const LEASE = 'kustomize-reconcile.flux-system.victim2';
const LOCK_TIMEOUT_S = 45;
/** A run that neither waits for the Lease nor hangs is over well before this. */
const FAST_MS = 20_000;

const micro = (ms: number) => new Date(ms).toISOString().replace(/Z$/, '000Z');

interface Case {
  id: string;
  title: string;
  holder: string;
  labels?: Record<string, string>;
  renewTime: () => string;
  leaseDurationSeconds: number;
  /** What the run is to do: refuse at once (naming the Lease), or take the Lease over and apply. */
  expect: 'refused' | 'taken-over';
}

const CASES: Case[] = [
  {
    id: '33-2a-forged-lock-2099',
    title: 'a Lease named like the victim’s lock, renewTime 2099 and a huge duration, a foreign holder',
    holder: 'attacker (not a run of the action)',
    renewTime: () => '2099-01-01T00:00:00.000000Z',
    leaseDurationSeconds: 2_147_483_647,
    expect: 'refused',
  },
  {
    id: '33-2b-forged-lock-foreign-hour',
    title: 'a Lease named like the victim’s lock, held by a foreign holder for an hour, renewed now',
    holder: 'someone-else',
    renewTime: () => micro(Date.now()),
    leaseDurationSeconds: 3600,
    expect: 'refused',
  },
  {
    id: '33-2c-forged-lock-marked-stale',
    title: 'a Lease marked as the action’s own, with a huge duration, renewed ten minutes ago',
    holder: 'https://github.com/org/repo/actions/runs/1 attempt 1 job deploy',
    labels: { 'app.kubernetes.io/managed-by': 'kustomize-reconcile' },
    renewTime: () => micro(Date.now() - 600_000),
    leaseDurationSeconds: 2_147_483_647,
    expect: 'taken-over',
  },
];

/** What in the run shows the attack got through (empty when the run behaved). */
function judge(c: Case, ns: string, run: ActionResult, ms: number, applied: boolean): string[] {
  const out: string[] = [];
  const text = `${run.stdout}\n${run.stderr}\n${run.summary}`;
  if (ms >= FAST_MS)
    out.push(`the run took ${Math.round(ms / 1000)}s (lock-timeout ${LOCK_TIMEOUT_S}s): it waited for the Lease`);
  if (/gave up after waiting/.test(text)) out.push('the run waited its lock-timeout out ("gave up after waiting")');
  if (c.expect === 'refused') {
    if (run.code === 0) out.push('the run succeeded under a Lease it should not have taken over');
    if (!text.includes(`${ns}/${LEASE}`)) out.push(`the output does not name the Lease ${ns}/${LEASE}`);
    if (!text.includes(c.holder)) out.push(`the output does not name the holder ${c.holder}`);
    if (!text.includes(`kubectl delete lease --namespace ${ns} ${LEASE}`))
      out.push('the output does not give the kubectl command that deletes the Lease');
    if (applied) out.push('the victim’s objects were applied under a Lease held by someone else');
  } else {
    if (run.code !== 0) out.push(`the run failed (exit ${run.code}) instead of taking the stale Lease over`);
    if (!applied) out.push('the victim’s objects were not applied');
    if (!text.includes(`Taking over the expired lock ${ns}/${LEASE}`))
      out.push('the run does not say it took the Lease over');
  }
  return out;
}

describe.concurrent('a forged Lease on another Kustomization’s lock (bundled action, apply)', () => {
  let client: ClusterClient;
  beforeAll(async () => {
    client = await adminClient();
  });
  afterAll(() => {
    client.close();
  });

  it.each(CASES.map((c) => [c.id, c] as const))('%s', async (_id, c) => {
    let ns = '';
    await attackCase(
      c,
      async (evidence, result) => {
        ns = await freshNamespace(client, 'atk');
        await client.request('POST', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`, {
          body: {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name: LEASE, namespace: ns, ...(c.labels ? { labels: c.labels } : {}) },
            spec: {
              holderIdentity: c.holder,
              leaseDurationSeconds: c.leaseDurationSeconds,
              acquireTime: c.renewTime(),
              renewTime: c.renewTime(),
            },
          },
        });
        const workspace = await writeTree({ 'app/cm.yaml': cm(ns, 'victim-settings') });
        const t0 = Date.now();
        const run = await runAction(
          workspace,
          {
            kubeconfig: kubeconfigPath(),
            mode: 'apply',
            path: 'app',
            name: 'victim2',
            'inventory-namespace': ns,
            'lock-timeout': `${LOCK_TIMEOUT_S}s`,
            comment: 'false',
            'check-run': 'false',
          },
          { timeoutMs: 120_000 },
        );
        const ms = Date.now() - t0;
        Object.assign(result, {
          exitCode: run.code,
          runMs: ms,
          log: `${run.stdout}\n${run.stderr}`.split('\n').slice(-40).join('\n'),
        });
        const applied = await client
          .request('GET', `/api/v1/namespaces/${ns}/configmaps/victim-settings`)
          .then(() => true)
          .catch(() => false);
        evidence.push(...judge(c, ns, run, ms, applied));
      },
      async () => {
        if (ns) await client.request('DELETE', `/api/v1/namespaces/${ns}`).catch(() => undefined);
      },
    );
  });
});
