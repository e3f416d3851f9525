// Several Kustomizations in one run, in dependsOn order, on the real cluster.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { isNotFound } from '../../src/cluster/errors.js';
import type { Report } from '../../src/report/model.js';
import { adminClient, freshNamespace, writeTree } from '../helpers/cluster.js';
import { configMap, kustomizationYaml } from '../helpers/manifests.js';
import { reconcileIn, reconcileTree } from '../helpers/reconcile.js';

/** The Kustomization `name` in `ns` building ./<name>, depending on `dependsOn` (names in `ns`). */
const ks = (ns: string, name: string, dependsOn: string[] = []) =>
  kustomizationYaml({
    name,
    namespace: ns,
    spec: dependsOn.length ? `dependsOn:\n${dependsOn.map((d) => `  - name: ${d}`).join('\n')}` : '',
  });

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
      'infra/cm.yaml': configMap(ns, 'infra-settings'),
      'apps/cm.yaml': configMap(ns, 'app-settings'),
      'broken/cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad, namespace: ${ns}}\ndata: {"bad key!": x}\n`,
      'after-broken/cm.yaml': configMap(ns, 'never'),
    });
    const log: string[] = [];
    const report = await reconcileTree(root, { kustomizations: ['clusters/ks.yaml'] }, log);

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
    const appsStart = log.findIndex((l) => l === `[${ns}/apps] reconciling ./apps`);
    expect(infraDone).toBeGreaterThanOrEqual(0);
    expect(appsStart).toBeGreaterThan(infraDone);
    await expect(client.request('GET', `/api/v1/namespaces/${ns}/configmaps/never`)).rejects.toSatisfy(isNotFound);
  });

  it('refuses a dependency cycle before anything is applied', async () => {
    const { ns, report } = await reconcileIn(client, (ns) => ({
      'ks.yaml': [ks(ns, 'a', ['b']), ks(ns, 'b', ['a'])].join('---\n'),
      'a/cm.yaml': configMap(ns, 'a'),
      'b/cm.yaml': configMap(ns, 'b'),
    }));
    expect(report.ok).toBe(false);
    expect(report.error).toContain('dependency cycle');
    expect(report.changeset).toEqual([]);
    await expect(client.request('GET', `/api/v1/namespaces/${ns}/configmaps/a`)).rejects.toSatisfy(isNotFound);
  });

  it('runs A ← B ← C in order while an independent D runs alongside, holding back nothing', async () => {
    const ns = await freshNamespace(client);
    const group = `${ns}.example.com`;
    // D stays unhealthy until the test sees C finish: were B or C waiting for D, D would time out.
    const d = kustomizationYaml({
      name: 'd',
      namespace: ns,
      spec: `wait: true\ntimeout: 1m\nhealthCheckExprs:\n  - {apiVersion: ${group}/v1, current: "has(spec.open) && spec.open"}`,
    });
    const root = await writeTree({
      'ks.yaml': [ks(ns, 'c', ['b']), d, ks(ns, 'b', ['a']), ks(ns, 'a')].join('---\n'),
      'a/cm.yaml': configMap(ns, 'a'),
      'b/cm.yaml': configMap(ns, 'b'),
      'c/cm.yaml': configMap(ns, 'c'),
      'd/crd.yaml': `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gates.${group}}
spec:
  group: ${group}
  scope: Namespaced
  names: {plural: gates, singular: gate, kind: Gate, listKind: GateList}
  versions:
    - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
`,
      'd/gate.yaml': `apiVersion: ${group}/v1\nkind: Gate\nmetadata: {name: g, namespace: ${ns}}\nspec: {open: false}\n`,
    });
    const log: string[] = [];
    const running = reconcileTree(root, {}, log);
    const cDone = `[${ns}/c] ConfigMap/${ns}/c created`;
    const gateMade = `[${ns}/d] Gate/${ns}/g created`;
    for (let i = 0; i < 200 && !(log.includes(cDone) && log.includes(gateMade)); i++)
      await new Promise((r) => setTimeout(r, 100));
    expect(log, JSON.stringify(log)).toContain(cDone);
    expect(log, JSON.stringify(log)).toContain(gateMade);
    // Let D through: change the gate the way a controller would.
    await client.request('PATCH', `/apis/${group}/v1/namespaces/${ns}/gates/g`, {
      body: { spec: { open: true } },
      contentType: 'application/merge-patch+json',
    });
    const report = await running;
    expect(report.error).toBeUndefined();
    const at = (line: string) => {
      const i = log.indexOf(line);
      expect(i, `${line} in ${JSON.stringify(log)}`).toBeGreaterThanOrEqual(0);
      return i;
    };
    const start = (k: string) => at(`[${ns}/${k}] reconciling ./${k}`);
    const done = (k: string) => at(`[${ns}/${k}] ConfigMap/${ns}/${k} created`);
    // D started with A, before A was done; B after A; C after B; D finished last.
    expect(start('d')).toBeLessThan(done('a'));
    expect(done('a')).toBeLessThan(start('b'));
    expect(done('b')).toBeLessThan(start('c'));
    expect(at(`[${ns}/d] Gate/${ns}/g: Current (healthCheckExprs: current is true)`)).toBeGreaterThan(done('c'));
    await client.request('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gates.${group}`);
  }, 90_000);

  it('lets a readyExpr decide instead of the built-in rule, with self and dep as Flux objects', async () => {
    const ns = await freshNamespace(client);
    const withExpr = (name: string, dep: string, version: string, expr: string) =>
      ks(ns, name)
        .replace(
          `name: ${name}, namespace: ${ns}}`,
          `name: ${name}, namespace: ${ns}, labels: {app/version: ${version}}}`,
        )
        .concat(`  dependsOn:\n    - name: ${dep}\n      readyExpr: ${JSON.stringify(expr)}\n`);
    const sameVersion =
      "dep.metadata.labels['app/version'] == self.metadata.labels['app/version'] && " +
      "dep.status.conditions.filter(e, e.type == 'Ready').all(e, e.status == 'True') && " +
      'dep.metadata.generation == dep.status.observedGeneration';
    const root = await writeTree({
      'ks.yaml': [
        ks(ns, 'infra').replace(
          `name: infra, namespace: ${ns}}`,
          `name: infra, namespace: ${ns}, labels: {app/version: v2}}`,
        ),
        withExpr('apps', 'infra', 'v2', sameVersion),
        withExpr('apps-old', 'infra', 'v1', sameVersion),
        ks(ns, 'broken'),
        withExpr('tolerant', 'broken', 'v1', "dep.status.conditions.exists(c, c.reason == 'ReconciliationFailed')"),
      ].join('---\n'),
      'infra/cm.yaml': configMap(ns, 'infra'),
      'apps/cm.yaml': configMap(ns, 'apps'),
      'apps-old/cm.yaml': configMap(ns, 'apps-old'),
      'broken/cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad, namespace: ${ns}}\ndata: {"bad key!": x}\n`,
      'tolerant/cm.yaml': configMap(ns, 'tolerant'),
    });
    const report = await reconcileTree(root);
    const byName: Record<string, Report | undefined> = Object.fromEntries(
      (report.kustomizations ?? []).map((r) => [r.kustomization.split('/')[1] ?? '', r]),
    );
    expect(byName['apps']?.error).toBeUndefined();
    expect(byName['apps-old']?.error).toBe(
      `skipped: dependency '${ns}/infra' is not ready according to readyExpr eval`,
    );
    // readyExpr replaces the built-in rule, so a failed dependency can be accepted on purpose.
    expect(byName['tolerant']?.error).toBeUndefined();
    expect(report.changeset.map((e) => e.subject).sort()).toEqual([
      `ConfigMap/${ns}/apps`,
      `ConfigMap/${ns}/infra`,
      `ConfigMap/${ns}/tolerant`,
    ]);
  });

  it('previews an object in a namespace an earlier Kustomization would create as created, saying how it was checked', async () => {
    const ns = await freshNamespace(client);
    const team = `${ns}-team`;
    const root = await writeTree({
      'clusters/ks.yaml': [ks(ns, 'apps', ['namespaces']), ks(ns, 'namespaces')].join('---\n'),
      'namespaces/ns.yaml': `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${team}}\n`,
      'apps/cm.yaml': configMap(team, 'app-settings'),
    });
    const log: string[] = [];
    const report = await reconcileTree(root, { kustomizations: ['clusters/ks.yaml'], mode: 'preview' }, log);
    expect(report.ok, report.error).toBe(true);
    const apps = report.kustomizations?.find((k) => k.kustomization === `${ns}/apps`);
    expect(apps?.changeset).toEqual([
      expect.objectContaining({
        subject: `ConfigMap/${team}/app-settings`,
        action: 'created',
        note: `checked without a server dry-run: its Namespace ${team} does not exist yet and would be created first`,
      }),
    ]);
    expect(log).toContain(
      `[${ns}/apps] ConfigMap/${team}/app-settings created (checked without a server dry-run: its Namespace ${team} does not exist yet and would be created first)`,
    );
    // A preview writes nothing.
    await expect(client.request('GET', `/api/v1/namespaces/${team}`)).rejects.toSatisfy(isNotFound);
  });
});
