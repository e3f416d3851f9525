// Forged state (issue 33, part 1): another repository's tree, applied by the bundled action on a
// push, tries to write a Kustomization's inventory or lock, so that a later run prunes objects it
// does not own or waits for ever. Each case writes reports/attack/<case>.json for
// scripts/attack-summary.mjs; a case fails when its attack got through.
//
// The rule the cases expect: no build may contain a ConfigMap or Lease named like this tool's
// inventories and locks (`kustomize-reconcile.…`) or an object with a label or annotation key under
// `kustomize-reconcile/`; the run fails naming the file before anything is applied. An inventory
// that records no repository is never adopted.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { encodeInventory, type InventoryRecord } from '../../src/inventory/codec.js';
import { InventoryStore } from '../../src/inventory/store.js';
import { runAction, type ActionResult } from '../helpers/action.js';
import { adminClient, exists, freshNamespace, kubeconfigPath, writeTree } from '../helpers/cluster.js';
import { checkout, cm, FROM_CHECKOUT, ks } from '../helpers/flux-trees.js';
import { attackCase } from '../helpers/hostile.js';

const VICTIM_CMS = ['victim-cm1', 'victim-cm2', 'victim-cm3'];

/** The victim repository: `ns/victim` applies three ConfigMaps. */
const victimTree = (ns: string) => ({
  'clusters/prod/flux-system.yaml': checkout(`org/victim-${ns}`),
  'clusters/prod/victim.yaml': ks(ns, 'victim', './apps/victim'),
  ...Object.fromEntries(VICTIM_CMS.map((n) => [`apps/victim/${n}.yaml`, cm(ns, n)])),
});

/** A ConfigMap that says what the victim's inventory says, without a recorded repository. */
function forgedInventory(ns: string, record: InventoryRecord): Record<string, unknown> {
  const { source: _dropped, origin: _origin, ...status } = record.status;
  const { data } = encodeInventory({ ...record, status: { ...status, result: 'Succeeded' } });
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `kustomize-reconcile.${ns}.victim`, namespace: ns },
    data,
  };
}

/** YAML of an object (JSON is YAML). */
const yaml = (obj: unknown) => `${JSON.stringify(obj, null, 2)}\n`;

describe.concurrent('forged inventories and locks (apply on a push, bundled action)', () => {
  let client: ClusterClient;
  let kubeconfig: string;
  beforeAll(async () => {
    client = await adminClient();
    kubeconfig = await readFile(kubeconfigPath(), 'utf8');
  });
  afterAll(() => {
    client.close();
  });

  const apply = async (files: Record<string, string>, repo: string): Promise<ActionResult> =>
    runAction(
      await writeTree(files),
      { kubeconfig, mode: 'apply', kustomizations: 'clusters/prod/*.yaml', 'lock-timeout': '20s' },
      {
        env: { GITHUB_REPOSITORY: repo, GITHUB_SERVER_URL: 'https://github.com', GITHUB_SHA: '0'.repeat(40) },
        event: { name: 'push', payload: {} },
        timeoutMs: 180_000,
      },
    );
  const output = (r: ActionResult) => `${r.stdout}\n${r.stderr}`;
  const victimAlive = async (ns: string) => {
    const missing: string[] = [];
    for (const n of VICTIM_CMS)
      if (!(await exists(client, `/api/v1/namespaces/${ns}/configmaps/${n}`))) missing.push(n);
    return missing;
  };

  /** One case; `log(run)` keeps the end of a run's output in the result file. */
  const attempt = (
    id: string,
    title: string,
    body: (evidence: string[], log: (r: ActionResult) => void) => Promise<void>,
  ): Promise<void> =>
    attackCase({ id, title }, async (evidence, result) => {
      const logs: string[] = [];
      result['log'] = logs;
      await body(evidence, (r) => logs.push(`exit ${r.code}: ${output(r).split('\n').slice(-12).join('\n')}`));
    });

  it('33-1a tree forges another repository inventory', async () => {
    await attempt(
      '33-1a-tree-forges-inventory',
      "another repository's tree applies a ConfigMap named like victim's inventory (no source, victim's entries) and a Kustomization of victim's name depending on it",
      async (evidence, log) => {
        const ns = await freshNamespace(client, 'atk');
        const first = await apply(victimTree(ns), `org/victim-${ns}`);
        if (first.code !== 0) throw new Error(`the victim's own apply failed:\n${output(first)}`);
        const record = (await new InventoryStore(client, ns, { namespace: ns, name: 'victim' }).read()).record;
        if (!record) throw new Error('the victim has no inventory');
        const attacker = await apply(
          {
            'clusters/prod/flux-system.yaml': checkout(`org/attacker-${ns}`),
            'clusters/prod/forger.yaml': ks(ns, 'forger', './forge'),
            'clusters/prod/victim.yaml': ks(
              ns,
              'victim',
              './innocent',
              FROM_CHECKOUT,
              '  dependsOn: [{name: forger}]\n',
            ),
            'forge/inventory.yaml': yaml(forgedInventory(ns, record)),
            'innocent/cm.yaml': cm(ns, 'attacker-cm'),
          },
          `org/attacker-${ns}`,
        );
        log(attacker);
        const missing = await victimAlive(ns);
        if (missing.length > 0) evidence.push(`the victim's ConfigMaps were pruned: ${missing.join(', ')}`);
        if (attacker.code === 0) evidence.push("the attacker's apply succeeded");
        if (!output(attacker).includes('forge/inventory.yaml'))
          evidence.push("the attacker's run did not name the file holding the forged inventory");
        const after = (await new InventoryStore(client, ns, { namespace: ns, name: 'victim' }).read()).record;
        if (after?.status.source !== `org/victim-${ns}`)
          evidence.push(`the victim's inventory now records ${after?.status.source ?? 'no repository'}`);
        const again = await apply(victimTree(ns), `org/victim-${ns}`);
        if (again.code !== 0) evidence.push(`the victim's next run failed: ${output(again).slice(-400)}`);
      },
    );
  });

  it('33-1b inventory without a source is not adopted', async () => {
    await attempt(
      '33-1b-unproven-inventory-adopted',
      "a ConfigMap written outside any run (no recorded repository, victim's entries) is adopted by another repository's Kustomization of the same name, which prunes",
      async (evidence, log) => {
        const ns = await freshNamespace(client, 'atk');
        const first = await apply(victimTree(ns), `org/victim-${ns}`);
        if (first.code !== 0) throw new Error(`the victim's own apply failed:\n${output(first)}`);
        const store = new InventoryStore(client, ns, { namespace: ns, name: 'victim' });
        const snap = await store.read();
        const forged = forgedInventory(ns, snap.record!);
        // Written by someone with ConfigMap rights in the namespace only (no rights on the victim's objects).
        await client.request('PUT', `/api/v1/namespaces/${ns}/configmaps/kustomize-reconcile.${ns}.victim`, {
          body: { ...forged, metadata: { ...(forged['metadata'] as object), resourceVersion: snap.resourceVersion } },
        });
        const attacker = await apply(
          {
            'clusters/prod/flux-system.yaml': checkout(`org/attacker-${ns}`),
            'clusters/prod/victim.yaml': ks(ns, 'victim', './innocent'),
            'innocent/cm.yaml': cm(ns, 'attacker-cm'),
          },
          `org/attacker-${ns}`,
        );
        log(attacker);
        const missing = await victimAlive(ns);
        if (missing.length > 0) evidence.push(`the victim's ConfigMaps were pruned: ${missing.join(', ')}`);
        if (attacker.code === 0) evidence.push('the run adopted an inventory that records no repository');
        if (await exists(client, `/api/v1/namespaces/${ns}/configmaps/attacker-cm`))
          evidence.push('the run applied its objects on top of an unproven inventory');
        if (!output(attacker).includes('records no repository'))
          evidence.push('the run did not say that the inventory records no repository');
      },
    );
  });

  it('33-2a tree writes another Kustomization lock', async () => {
    await attempt(
      '33-2a-tree-writes-lock',
      "a tree applies a Lease named like victim's lock, renewed in 2099 for 10 years",
      async (evidence, log) => {
        const ns = await freshNamespace(client, 'atk');
        const lease = {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name: `kustomize-reconcile.${ns}.victim`, namespace: ns },
          spec: {
            holderIdentity: 'https://github.com/org/victim/actions/runs/1 job deploy',
            leaseDurationSeconds: 315_360_000,
            acquireTime: '2099-01-01T00:00:00.000000Z',
            renewTime: '2099-01-01T00:00:00.000000Z',
          },
        };
        const attacker = await apply(
          {
            'clusters/prod/flux-system.yaml': checkout(`org/attacker-${ns}`),
            'clusters/prod/blocker.yaml': ks(ns, 'blocker', './block'),
            'block/lease.yaml': yaml(lease),
          },
          `org/attacker-${ns}`,
        );
        log(attacker);
        if (
          await exists(client, `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/kustomize-reconcile.${ns}.victim`)
        )
          evidence.push("the tree's Lease was applied");
        if (attacker.code === 0) evidence.push("the attacker's apply succeeded");
        if (!output(attacker).includes('block/lease.yaml'))
          evidence.push('the run did not name the file holding the Lease');
        const victim = await apply(victimTree(ns), `org/victim-${ns}`);
        if (victim.code !== 0) evidence.push(`the victim's run failed: ${output(victim).slice(-400)}`);
      },
    );
  });

  it('33-1c a commonMetadata label makes an inventory', async () => {
    await attempt(
      '33-1c-label-makes-inventory',
      "a Kustomization's spec.commonMetadata puts the inventory label on its objects, so that they are listed as inventories",
      async (evidence, log) => {
        const ns = await freshNamespace(client, 'atk');
        const attacker = await apply(
          {
            'clusters/prod/flux-system.yaml': checkout(`org/attacker-${ns}`),
            'clusters/prod/labels.yaml': ks(
              ns,
              'labels',
              './labelled',
              FROM_CHECKOUT,
              "  commonMetadata:\n    labels: {'kustomize-reconcile/inventory': 'true'}\n",
            ),
            'labelled/cm.yaml': cm(ns, 'labelled'),
          },
          `org/attacker-${ns}`,
        );
        log(attacker);
        if (await exists(client, `/api/v1/namespaces/${ns}/configmaps/labelled`))
          evidence.push('an object with the inventory label was applied');
        if (attacker.code === 0) evidence.push("the attacker's apply succeeded");
        if (!output(attacker).includes('kustomize-reconcile/inventory'))
          evidence.push('the run did not name the reserved label');
      },
    );
  });
});
