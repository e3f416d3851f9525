// The Namespace prune guard when a list fails on the server: one resource that cannot be listed (an
// aggregated API that is down answers 503) is named in a note and does not stop the prune.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { exists, eventually, freshNamespace, writeTree } from '../helpers/cluster.js';
import { faultProxySuite, on, type FaultProxy } from '../helpers/fault-proxy.js';
import { reconcileTree } from '../helpers/reconcile.js';

describe('the Namespace prune guard through a fault-injecting proxy', () => {
  let client: ClusterClient;
  let proxy: FaultProxy;
  faultProxySuite((c, p) => {
    client = c;
    proxy = p;
  });

  const cm = (ns: string, name: string) =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}, namespace: ${ns}}\ndata: {a: b}\n`;

  function run(root: string, ns: string) {
    const settings = { path: 'app', prune: true, inventoryNamespace: ns };
    return reconcileTree(root, { kubeconfig: { kind: 'path', path: proxy.kubeconfig }, ...settings });
  }

  it('notes a resource whose list fails, and prunes the Namespace', async () => {
    const ns = await freshNamespace(client);
    const team = `${ns}-team`;
    const files = {
      'app/kustomization.yaml': 'resources: [anchor.yaml, ns.yaml, own.yaml]\n',
      'app/anchor.yaml': cm(ns, 'anchor'),
      'app/ns.yaml': `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${team}}\n`,
      'app/own.yaml': cm(team, 'own'),
    };
    const root = await writeTree(files);
    expect((await run(root, ns)).error).toBeUndefined();

    await writeFile(join(root, 'app/kustomization.yaml'), 'resources: [anchor.yaml]\n');
    const deployments = `/apis/apps/v1/namespaces/${team}/deployments`;
    proxy.setRules([{ match: on('GET', deployments), fault: { status: 503, body: 'status' } }]);
    const report = await run(root, ns);
    expect(report.error).toBeUndefined();
    expect(proxy.requests.filter((r) => r.path === deployments).length).toBeGreaterThan(0);
    const note = report.notes.find((n) => n.startsWith(`Namespace ${team} is being pruned, but listing`));
    expect(note).toMatch(/^Namespace \S+ is being pruned, but listing deployments\.apps \(GET .*503.*\) in it failed/);
    expect(report.pruned?.map((p) => `${p.subject} ${p.action}`)).toEqual([
      `ConfigMap/${team}/own deleted`,
      `Namespace/${team} deleted`,
    ]);
    await eventually(`Namespace ${team} gone`, 60_000, async () =>
      (await exists(client, `/api/v1/namespaces/${team}`)) ? undefined : true,
    );
  }, 90_000);
});
