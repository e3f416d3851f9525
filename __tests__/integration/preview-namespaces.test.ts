// A preview of many Kustomizations at once: which Namespaces each one sees as "would be created"
// must not depend on which of them happened to plan first (issue 34).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { isNotFound } from '../../src/cluster/errors.js';
import type { Report } from '../../src/report/model.js';
import { adminClient, freshNamespace, writeTree } from '../helpers/cluster.js';
import { configMap, kustomizationYaml } from '../helpers/manifests.js';
import { reconcileTree } from '../helpers/reconcile.js';

/** The Kustomization `name` in `ns` building ./<name>, depending on `dependsOn` (names in `ns`). */
const ks = (ns: string, name: string, dependsOn: string[] = []) =>
  kustomizationYaml({
    name,
    namespace: ns,
    spec: dependsOn.length ? `dependsOn:\n${dependsOn.map((d) => `  - name: ${d}`).join('\n')}` : '',
  });

const namespace = (name: string) => `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${name}}\n`;

/** What a preview says of each Kustomization: its outcome and every object's planned action and note. */
const outcomes = (report: Report) =>
  (report.kustomizations ?? [])
    .map((k) => ({
      kustomization: k.kustomization,
      ok: k.ok,
      error: k.error,
      changeset: k.changeset.map((e) => `${e.subject} ${e.action}${e.note ? ` (${e.note})` : ''}`).sort(),
    }))
    .sort((a, b) => a.kustomization.localeCompare(b.kustomization));

describe('preview: Namespaces other Kustomizations would create', () => {
  let client: ClusterClient;
  beforeAll(async () => {
    client = await adminClient();
  });
  afterAll(() => {
    client.close();
  });

  it('plans the same for every Kustomization whatever the order they run in', async () => {
    const ns = await freshNamespace(client);
    const teams = ['a', 'b', 'c'].map((t) => `${ns}-${t}`);
    const side = `${ns}-side`;
    const apps = Array.from({ length: 8 }, (_, i) => `app-${i + 1}`);
    const users = ['user-1', 'user-2', 'user-3'];
    // Level 0: `namespaces` creates the teams' Namespaces; `early` has an object in one of them but
    // does not depend on it. Level 1: the apps depend on `namespaces`; `side` creates a Namespace in
    // which the users (its siblings, not its dependants) have objects. Users listed around `side`, so
    // that some start before it and some after.
    const level1 = [...apps.slice(0, 4), users[0]!, 'side', users[1]!, ...apps.slice(4), users[2]!];
    const files: Record<string, string> = {
      'clusters/ks.yaml': [
        ks(ns, 'early'),
        ...level1.map((name) => ks(ns, name, ['namespaces'])),
        ks(ns, 'namespaces'),
      ].join('---\n'),
      'namespaces/ns.yaml': teams.map(namespace).join('---\n'),
      'early/cm.yaml': configMap(teams[0]!, 'early'),
      'side/ns.yaml': namespace(side),
    };
    apps.forEach((app, i) => {
      files[`${app}/cm.yaml`] = configMap(teams[i % teams.length]!, app);
    });
    for (const user of users) files[`${user}/cm.yaml`] = configMap(side, user);
    const root = await writeTree(files);

    const runs: ReturnType<typeof outcomes>[] = [];
    for (let run = 0; run < 5; run++) {
      const report = await reconcileTree(root, { kustomizations: ['clusters/ks.yaml'], mode: 'preview' });
      runs.push(outcomes(report));
    }
    for (const run of runs.slice(1)) expect(run).toEqual(runs[0]);

    const byName = new Map(runs[0]!.map((k) => [k.kustomization, k]));
    const first = (n: string) =>
      `checked without a server dry-run: its Namespace ${n} does not exist yet and would be created first`;
    const elsewhere = (n: string, creator: string) =>
      `checked without a server dry-run: its Namespace ${n} does not exist yet and would be created by ` +
      `Kustomization ${ns}/${creator}, which this one does not depend on (under Flux it fails until that one ` +
      'has been applied, then succeeds on a retry)';
    apps.forEach((app, i) => {
      const team = teams[i % teams.length]!;
      expect(byName.get(`${ns}/${app}`)).toEqual({
        kustomization: `${ns}/${app}`,
        ok: true,
        error: undefined,
        changeset: [`ConfigMap/${team}/${app} created (${first(team)})`],
      });
    });
    for (const user of users) {
      expect(byName.get(`${ns}/${user}`)?.changeset).toEqual([
        `ConfigMap/${side}/${user} created (${elsewhere(side, 'side')})`,
      ]);
    }
    expect(byName.get(`${ns}/early`)?.changeset).toEqual([
      `ConfigMap/${teams[0]!}/early created (${elsewhere(teams[0]!, 'namespaces')})`,
    ]);
    expect(runs[0]!.every((k) => k.ok)).toBe(true);
    // A preview writes nothing.
    await expect(client.request('GET', `/api/v1/namespaces/${side}`)).rejects.toSatisfy(isNotFound);
  }, 300_000);
  it('fails an object whose Namespace only its dependants or nobody would create, the same each time', async () => {
    const ns = await freshNamespace(client);
    const late = `${ns}-late`;
    const root = await writeTree({
      'clusters/ks.yaml': [ks(ns, 'late', ['first']), ks(ns, 'first'), ks(ns, 'lost')].join('---\n'),
      'late/ns.yaml': namespace(late),
      'first/cm.yaml': configMap(late, 'first'),
      'lost/cm.yaml': configMap(`${ns}-nowhere`, 'lost'),
    });
    const runs: ReturnType<typeof outcomes>[] = [];
    for (let run = 0; run < 3; run++) {
      const report = await reconcileTree(root, { kustomizations: ['clusters/ks.yaml'], mode: 'preview' });
      runs.push(outcomes(report));
    }
    for (const run of runs.slice(1)) expect(run).toEqual(runs[0]);
    const byName = new Map(runs[0]!.map((k) => [k.kustomization, k]));
    expect(byName.get(`${ns}/first`)?.error).toMatch(
      new RegExp(
        `namespaces "${late}" not found; Kustomization ${ns}/late would create it, but depends on this one: ` +
          'under Flux neither becomes ready$',
      ),
    );
    expect(byName.get(`${ns}/lost`)?.error).toMatch(new RegExp(`namespaces "${ns}-nowhere" not found$`));
    expect(byName.get(`${ns}/late`)?.error).toMatch(/^skipped: dependency .* is not ready/);
  }, 300_000);
  it('plans an object in a Namespace its parent would create as created first, the parent applying it', async () => {
    const ns = await freshNamespace(client);
    const team = `${ns}-kid`;
    const root = await writeTree({
      'clusters/parent.yaml': kustomizationYaml({ name: 'parent', namespace: ns, path: './defs' }),
      'defs/ns.yaml': namespace(team),
      'defs/child.yaml': ks(ns, 'child'),
      'child/cm.yaml': configMap(team, 'child'),
    });
    const runs: ReturnType<typeof outcomes>[] = [];
    for (let run = 0; run < 3; run++) {
      const report = await reconcileTree(root, {
        kustomizations: ['clusters/parent.yaml', 'defs/child.yaml'],
        mode: 'preview',
      });
      runs.push(outcomes(report));
    }
    for (const run of runs.slice(1)) expect(run).toEqual(runs[0]);
    const child = runs[0]!.find((k) => k.kustomization === `${ns}/child`);
    expect(child?.changeset).toEqual([
      `ConfigMap/${team}/child created (checked without a server dry-run: its Namespace ${team} does not exist yet ` +
        `and would be created first, by Kustomization ${ns}/parent, which applies this one)`,
    ]);
  }, 300_000);
});
