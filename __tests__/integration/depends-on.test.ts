// Several Kustomizations in one run, in dependsOn order, on the real cluster.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { isNotFound } from '../../src/cluster/errors.js';
import { reconcile } from '../../src/reconcile.js';
import type { Report } from '../../src/report/model.js';
import { normalize } from '../../src/settings.js';
import { adminClient, freshNamespace, kubeconfigPath, writeTree } from '../helpers/cluster.js';
import { KUSTOMIZE } from '../helpers/paths.js';

function ks(ns: string, name: string, dependsOn: string[] = []): string {
  const deps = dependsOn.length ? `  dependsOn:\n${dependsOn.map((d) => `    - name: ${d}`).join('\n')}\n` : '';
  return `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: ${name}, namespace: ${ns}}
spec:
  interval: 10m
  prune: false
  path: ./${name}
  sourceRef: {kind: GitRepository, name: repo}
${deps}`;
}

const cm = (ns: string, name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}, namespace: ${ns}}\ndata: {a: b}\n`;

describe('dependsOn', () => {
  let client: ClusterClient;
  beforeAll(async () => {
    client = await adminClient();
  });
  afterAll(() => {
    client.close();
  });

  it('reconciles in dependency order and skips what depends on a failure, with the reason', async () => {
    const ns = await freshNamespace(client);
    const root = await writeTree({
      // Listed dependents first: the order must come from dependsOn, not from the file.
      'clusters/ks.yaml': [
        ks(ns, 'apps', ['infra']),
        ks(ns, 'after-broken', ['broken']),
        ks(ns, 'broken'),
        ks(ns, 'infra'),
      ].join('---\n'),
      'infra/cm.yaml': cm(ns, 'infra-settings'),
      'apps/cm.yaml': cm(ns, 'app-settings'),
      'broken/cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad, namespace: ${ns}, labels: {"bad key!": x}}\n`,
      'after-broken/cm.yaml': cm(ns, 'never'),
    });
    const log: string[] = [];
    const settings = normalize({
      kubeconfig: { kind: 'path', path: kubeconfigPath() },
      root,
      kustomizations: ['clusters/ks.yaml'],
      kustomizeBin: KUSTOMIZE,
    });
    const report = await reconcile(settings, { log: (l) => log.push(l), secret: () => {} });

    expect(report.ok).toBe(false);
    const byName: Record<string, Report | undefined> = Object.fromEntries(
      (report.kustomizations ?? []).map((r) => [r.kustomization.split('/')[1] ?? '', r]),
    );
    expect(byName['infra']?.ok).toBe(true);
    expect(byName['apps']?.ok).toBe(true);
    expect(byName['broken']?.error).toContain(`ConfigMap/${ns}/bad dry-run failed (Invalid)`);
    expect(byName['after-broken']?.error).toBe(
      `skipped: dependency '${ns}/broken' is not ready (it failed or was skipped in this run)`,
    );
    expect(report.error).toContain(`Kustomization ${ns}/after-broken: skipped: dependency '${ns}/broken' is not ready`);
    expect(report.changeset.map((e) => `${e.subject} ${e.action}`).sort()).toEqual([
      `ConfigMap/${ns}/app-settings created`,
      `ConfigMap/${ns}/infra-settings created`,
    ]);
    // infra was applied before apps started.
    const infraDone = log.findIndex((l) => l === `[${ns}/infra] ConfigMap/${ns}/infra-settings created`);
    const appsStart = log.findIndex((l) => l === `[${ns}/apps] reconciling apps`);
    expect(infraDone).toBeGreaterThanOrEqual(0);
    expect(appsStart).toBeGreaterThan(infraDone);
    await expect(client.request('GET', `/api/v1/namespaces/${ns}/configmaps/never`)).rejects.toSatisfy(isNotFound);
  });

  it('refuses a dependency cycle before anything is applied', async () => {
    const ns = await freshNamespace(client);
    const root = await writeTree({
      'ks.yaml': [ks(ns, 'a', ['b']), ks(ns, 'b', ['a'])].join('---\n'),
      'a/cm.yaml': cm(ns, 'a'),
      'b/cm.yaml': cm(ns, 'b'),
    });
    const settings = normalize({
      kubeconfig: { kind: 'path', path: kubeconfigPath() },
      root,
      kustomizations: ['ks.yaml'],
      kustomizeBin: KUSTOMIZE,
    });
    const report = await reconcile(settings, { log: () => {}, secret: () => {} });
    expect(report.ok).toBe(false);
    expect(report.error).toContain('dependency cycle');
    expect(report.changeset).toEqual([]);
    await expect(client.request('GET', `/api/v1/namespaces/${ns}/configmaps/a`)).rejects.toSatisfy(isNotFound);
  });
});
