// Moves between Kustomizations: one commit moves a file from mv-a's path to mv-b's. The objects
// keep their uid, are reported as moved (from mv-a, to mv-b), are never deleted, do not trip
// mv-a's prune guards, and each inventory is right afterwards, whatever order the two run in: in
// one run (dependsOn either way, or none) or as two fan-out jobs (input select), either first.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ClusterClient } from '../../src/cluster/client.js';
import { InventoryStore } from '../../src/inventory/store.js';
import type { Report } from '../../src/report/model.js';
import { renderLines, renderSummary } from '../../src/report/render.js';
import { renderComment } from '../../src/report/comment.js';
import type { OptionValues } from '../../src/options/settings.js';
import { adminClient, freshNamespace, writeTree } from '../helpers/cluster.js';
import { configMap, deployment, kustomizationYaml } from '../helpers/manifests.js';
import { reconcileTree } from '../helpers/reconcile.js';
import { golden } from '../helpers/golden.js';

/** A Namespace `app` (its name made unique by the test's namespace) and a Deployment in it. */
const web = (ns: string) =>
  `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${ns}-web}\n---\n${deployment(`${ns}-web`, 'web')}`;

const cm = configMap;

type Order = 'none' | 'a-after-b' | 'b-after-a';

function ksFile(ns: string, order: Order): string {
  const dep = (on: string) => `dependsOn: [{name: ${on}}]`;
  return [
    kustomizationYaml({
      name: 'mv-a',
      namespace: ns,
      path: './a',
      prune: true,
      spec: order === 'a-after-b' ? dep('mv-b') : '',
    }),
    kustomizationYaml({
      name: 'mv-b',
      namespace: ns,
      path: './b',
      prune: true,
      spec: order === 'b-after-a' ? dep('mv-a') : '',
    }),
  ].join('---\n');
}

let client: ClusterClient;
beforeAll(async () => {
  client = await adminClient();
});
afterAll(() => {
  client.close();
});

/** A run of `root`'s ks.yaml as test/<ns>'s repository. */
const run = (root: string, ns: string, extra: Partial<OptionValues> = {}) =>
  reconcileTree(root, { lockLeaseMs: 3_000, run: { source: `test/${ns}`, holder: `test ${ns}` }, ...extra });

describe('moves between Kustomizations', () => {
  const uids = async (ns: string) => ({
    namespace: (await client.request<{ metadata: { uid: string } }>('GET', `/api/v1/namespaces/${ns}-web`)).metadata
      .uid,
    deployment: (
      await client.request<{ metadata: { uid: string; labels: Record<string, string> } }>(
        'GET',
        `/apis/apps/v1/namespaces/${ns}-web/deployments/web`,
      )
    ).metadata,
  });

  const inventory = async (ns: string, name: string) => {
    const record = (await new InventoryStore(client, ns, { name, namespace: ns }).read()).record;
    return [...(record?.entries ?? []), ...(record?.pending ?? [])].map((e) => e.id).sort();
  };

  /** A tree where mv-a holds web.yaml and a ConfigMap, mv-b a ConfigMap; applied once. */
  async function setUp(order: Order) {
    const ns = await freshNamespace(client);
    const root = await writeTree({
      'ks.yaml': ksFile(ns, order),
      'a/web.yaml': web(ns),
      'b/cm.yaml': cm(ns, 'b-config'),
    });
    const first = await run(root, ns);
    expect(first.ok, first.error).toBe(true);
    const before = await uids(ns);
    expect(before.deployment.labels['kustomize.toolkit.fluxcd.io/name']).toBe('mv-a');
    // The commit: web.yaml moves from a/ to b/; a/ keeps nothing.
    await rename(join(root, 'a/web.yaml'), join(root, 'b/web.yaml'));
    await writeFile(join(root, 'a/kustomization.yaml'), 'resources: []\n');
    return { ns, root, before };
  }

  const webIds = (ns: string) => [`${ns}-web_web_apps_Deployment`, `_${ns}-web__Namespace`].sort();

  async function expectMoved(ns: string, before: Awaited<ReturnType<typeof uids>>, reports: Report[]) {
    const after = await uids(ns);
    expect(after.namespace).toBe(before.namespace);
    expect(after.deployment.uid).toBe(before.deployment.uid);
    expect(after.deployment.labels['kustomize.toolkit.fluxcd.io/name']).toBe('mv-b');
    expect(await inventory(ns, 'mv-a')).toEqual([]);
    expect(await inventory(ns, 'mv-b')).toEqual([...webIds(ns), `${ns}_b-config__ConfigMap`].sort());
    const all = reports.flatMap((r) => r.kustomizations ?? [r]);
    const a = all.find((k) => k.kustomization === `${ns}/mv-a`)!;
    const b = all.find((k) => k.kustomization === `${ns}/mv-b`)!;
    expect(a.counts.deleted).toBe(0);
    expect(a.error).toBeUndefined();
    expect((a.pruned ?? []).map((p) => `${p.subject} ${p.action} ${p.movedTo}`).sort()).toEqual(
      [`Deployment/${ns}-web/web moved ${ns}/mv-b`, `Namespace/${ns}-web moved ${ns}/mv-b`].sort(),
    );
    // Whichever ran first, the object's labels changed in mv-b's apply: it names where it came from.
    expect(b.changeset.filter((e) => e.movedFrom).map((e) => `${e.subject} ${e.movedFrom}`)).toEqual(
      expect.arrayContaining([`Deployment/${ns}-web/web ${ns}/mv-a`]),
    );
  }

  it.each<Order>(['none', 'a-after-b', 'b-after-a'])(
    'in one run (dependsOn: %s): moved, not deleted, guards quiet, inventories right',
    async (order) => {
      const { ns, root, before } = await setUp(order);
      const preview = await run(root, ns, { mode: 'preview' });
      expect(preview.ok, preview.error).toBe(true);
      expect(preview.counts.deleted).toBe(0);
      const lines = renderLines(preview.kustomizations!.find((k) => k.kustomization === `${ns}/mv-b`)!);
      expect(lines).toContain(`Deployment/${ns}-web/web configured (moved from ${ns}/mv-a)`);
      const comment = renderComment(preview, { marker: '<!-- m -->' }).body;
      expect(comment).toContain('Moved to another Kustomization, not deleted');
      expect(comment).toContain(`moved from ${ns}/mv-a`);
      expect(comment).not.toContain('Would prune');
      const summary = renderSummary(preview);
      expect(summary).toContain('| Moved to another Kustomization | To |');
      expect(summary).not.toContain('Would prune');
      expect(renderLines(preview.kustomizations!.find((k) => k.kustomization === `${ns}/mv-a`)!)).toContain(
        `Deployment/${ns}-web/web moved: to Kustomization ${ns}/mv-b, which builds it now; not deleted`,
      );

      const applied = await run(root, ns);
      expect(applied.ok, applied.error).toBe(true);
      await expectMoved(ns, before, [applied]);
    },
  );

  it.each([
    ['mv-a', 'mv-b'],
    ['mv-b', 'mv-a'],
  ])('as two fan-out jobs, %s first: the same result', async (first, second) => {
    const { ns, root, before } = await setUp('none');
    const one = await run(root, ns, { select: [`${ns}/${first}`] });
    expect(one.ok, one.error).toBe(true);
    expect((await uids(ns)).deployment.uid).toBe(before.deployment.uid);
    const two = await run(root, ns, { select: [`${ns}/${second}`] });
    expect(two.ok, two.error).toBe(true);
    await expectMoved(ns, before, [one, two]);
  });

  it('deletes what left every build, and holds back what may have moved to a build that failed', async () => {
    const ns = await freshNamespace(client);
    const root = await writeTree({
      'ks.yaml': ksFile(ns, 'none'),
      'a/cms.yaml': [cm(ns, 'gone'), cm(ns, 'kept')].join('---\n'),
      'b/cm.yaml': cm(ns, 'b-config'),
    });
    expect((await run(root, ns)).ok).toBe(true);
    // `gone` leaves Git; mv-b's build breaks.
    await writeFile(join(root, 'a/cms.yaml'), cm(ns, 'kept'));
    await writeFile(join(root, 'b/kustomization.yaml'), 'resources: [missing.yaml]\n');
    const held = await run(root, ns);
    expect(held.ok).toBe(false);
    const a = held.kustomizations!.find((k) => k.kustomization === `${ns}/mv-a`)!;
    expect(a.ok).toBe(true);
    expect(a.counts.deleted).toBe(0);
    expect(a.notes.join('\n')).toContain(`the build of Kustomization ${ns}/mv-b`);
    expect(await inventory(ns, 'mv-a')).toContain(`${ns}_gone__ConfigMap`);
    // mv-b builds again: `gone` is in no build, and is pruned.
    await writeFile(join(root, 'b/kustomization.yaml'), 'resources: [cm.yaml]\n');
    const pruned = await run(root, ns);
    expect(pruned.ok, pruned.error).toBe(true);
    expect(pruned.pruned?.map((p) => `${p.subject} ${p.action}`)).toEqual([`ConfigMap/${ns}/gone deleted`]);
  });
});

describe('renamed Kustomizations', () => {
  const uid = async (ns: string, name: string) =>
    (await client.request<{ metadata: { uid: string } }>('GET', `/api/v1/namespaces/${ns}/configmaps/${name}`)).metadata
      .uid;
  const inventoryExists = (ns: string, name: string) =>
    new InventoryStore(client, ns, { name, namespace: ns }).read().then((r) => r.record !== undefined);
  const ks = (ns: string, name: string, path = './app') =>
    kustomizationYaml({ name, namespace: ns, path, prune: true });

  it.each(['report', 'delete'] as const)(
    'removed-kustomizations: %s — handed over, previewed as renamed, nothing deleted, the old inventory removed',
    async (policy) => {
      const ns = await freshNamespace(client);
      const root = await writeTree({
        'ks.yaml': ks(ns, 'old-name'),
        'app/cms.yaml': [cm(ns, 'one'), cm(ns, 'two')].join('---\n'),
      });
      expect((await run(root, ns)).ok).toBe(true);
      const before = [await uid(ns, 'one'), await uid(ns, 'two')];
      await writeFile(join(root, 'ks.yaml'), ks(ns, 'new-name'));

      const preview = await run(root, ns, { mode: 'preview', removedKustomizations: policy });
      expect(preview.ok, preview.error).toBe(true);
      expect(preview.counts.deleted).toBe(0);
      expect(preview.removed).toMatchObject([
        { kustomization: `${ns}/old-name`, action: 'renamed', handedTo: [`${ns}/new-name`], handedOver: 2 },
      ]);
      expect(preview.changeset.map((e) => `${e.subject} ${e.movedFrom}`)).toEqual([
        `ConfigMap/${ns}/one ${ns}/old-name`,
        `ConfigMap/${ns}/two ${ns}/old-name`,
      ]);
      expect(preview.notes).toContain(
        `Renamed from Kustomization ${ns}/old-name: its object(s) are this one's now, not deleted`,
      );
      const comment = renderComment(preview, { marker: '<!-- m -->' }).body;
      expect(comment).toContain('↪️ renamed; objects handed over');
      expect(await inventoryExists(ns, 'old-name')).toBe(true);

      const applied = await run(root, ns, { removedKustomizations: policy });
      expect(applied.ok, applied.error).toBe(true);
      expect(applied.removed?.map((r) => r.action)).toEqual(['renamed']);
      expect(applied.pruned ?? []).toEqual([]);
      expect([await uid(ns, 'one'), await uid(ns, 'two')]).toEqual(before);
      expect(await inventoryExists(ns, 'old-name')).toBe(false);
      expect(await inventoryExists(ns, 'new-name')).toBe(true);
    },
  );

  it('hands over what the new one builds and applies the deletionPolicy to the rest', async () => {
    const ns = await freshNamespace(client);
    const root = await writeTree({
      'ks.yaml': ks(ns, 'old-name'),
      'app/cms.yaml': [cm(ns, 'one'), cm(ns, 'two')].join('---\n'),
      'next/cm.yaml': cm(ns, 'one'),
    });
    expect((await run(root, ns)).ok).toBe(true);
    const one = await uid(ns, 'one');
    await writeFile(join(root, 'ks.yaml'), ks(ns, 'new-name', './next'));
    const applied = await run(root, ns, { removedKustomizations: 'delete' });
    expect(applied.ok, applied.error).toBe(true);
    expect(applied.removed).toMatchObject([
      { kustomization: `${ns}/old-name`, action: 'deleted', handedTo: [`${ns}/new-name`], handedOver: 1 },
    ]);
    expect(applied.pruned?.map((p) => `${p.subject} ${p.action}`)).toEqual([`ConfigMap/${ns}/two deleted`]);
    expect(await uid(ns, 'one')).toBe(one);
    expect(await inventoryExists(ns, 'old-name')).toBe(false);
  });
});

describe('renamed objects', () => {
  const pvc = (ns: string, name: string) => `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: ${name}, namespace: ${ns}, labels: {app: db}}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
`;
  const service = (ns: string, name: string, type = 'ClusterIP') => `apiVersion: v1
kind: Service
metadata: {name: ${name}, namespace: ${ns}}
spec:
  type: ${type}
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
`;
  const ks = (ns: string, name: string, wait = false) =>
    kustomizationYaml({ name, namespace: ns, path: `./${name}`, prune: true, spec: wait ? 'wait: true' : '' });
  const uidOf = async (path: string) => (await client.request<{ metadata: { uid: string } }>('GET', path)).metadata.uid;

  it('a commit that moves a directory and renames a PVC: the comment says so first (golden)', async () => {
    const ns = await freshNamespace(client);
    const root = await writeTree({
      'ks.yaml': [ks(ns, 'frontend'), ks(ns, 'backend')].join('---\n'),
      'frontend/kustomization.yaml': 'resources: [web]\n',
      'frontend/web/kustomization.yaml': 'resources: [deployment.yaml, service.yaml]\n',
      'frontend/web/deployment.yaml': deployment(ns, 'web'),
      'frontend/web/service.yaml': service(ns, 'web'),
      'backend/kustomization.yaml': 'resources: [pvc.yaml]\n',
      'backend/pvc.yaml': pvc(ns, 'data'),
    });
    const first = await run(root, ns);
    expect(first.ok, first.error).toBe(true);
    const web = await uidOf(`/apis/apps/v1/namespaces/${ns}/deployments/web`);
    const svc = await uidOf(`/api/v1/namespaces/${ns}/services/web`);

    // The commit: frontend/web moves to backend/web; the claim `data` becomes `data-v2`.
    await rename(join(root, 'frontend/web'), join(root, 'backend/web'));
    await writeFile(join(root, 'frontend/kustomization.yaml'), 'resources: []\n');
    await writeFile(join(root, 'backend/kustomization.yaml'), 'resources: [pvc.yaml, web]\n');
    await writeFile(join(root, 'backend/pvc.yaml'), pvc(ns, 'data-v2'));

    const preview = await run(root, ns, { mode: 'preview' });
    expect(preview.ok, preview.error).toBe(true);
    expect(preview.renamed).toEqual([
      {
        from: `PersistentVolumeClaim/${ns}/data`,
        to: `PersistentVolumeClaim/${ns}/data-v2`,
        cost: expect.stringContaining('its data does not move') as string,
      },
    ]);
    const fixed = (r: Report): Report => ({
      ...r,
      durationMs: 1000,
      ...(r.kustomizations ? { kustomizations: r.kustomizations.map((k) => ({ ...k, durationMs: 1000 })) } : {}),
    });
    const body = renderComment(fixed(preview), { marker: '<!-- kustomize-reconcile: ks.yaml -->' }).body;
    // The first lines after the heading: what is deleted or replaced, then the moves.
    const head = body.split('\n').slice(3, 8);
    expect(head).toEqual([
      '> [!WARNING]',
      '> **This change would delete 1 live object(s):**',
      `> - \`PersistentVolumeClaim/${ns}/data\` renamed to \`PersistentVolumeClaim/${ns}/data-v2\`: its data does not move (the new claim gets a new, empty volume; the old volume is released, and kept or deleted by its reclaim policy)`,
      '>',
      '> 2 object(s) would move between Kustomizations: kept, not deleted nor recreated',
    ]);
    golden('moves/move-and-rename.comment.md', body.replaceAll(ns, 'NS'));

    const applied = await run(root, ns);
    expect(applied.ok, applied.error).toBe(true);
    expect(applied.renamed?.map((r) => `${r.from} → ${r.to}`)).toEqual([
      `PersistentVolumeClaim/${ns}/data → PersistentVolumeClaim/${ns}/data-v2`,
    ]);
    expect(await uidOf(`/apis/apps/v1/namespaces/${ns}/deployments/web`)).toBe(web);
    expect(await uidOf(`/api/v1/namespaces/${ns}/services/web`)).toBe(svc);
    expect(renderLines(applied)).toContain('This run deleted 1 live object(s):');
  });

  it.each([
    ['a Service', (ns: string) => service(ns, 'web'), (ns: string) => service(ns, 'web-v2'), false, 'a new cluster IP'],
    [
      'a LoadBalancer Service',
      (ns: string) => service(ns, 'web', 'LoadBalancer'),
      (ns: string) => service(ns, 'web-v2', 'LoadBalancer'),
      false,
      'a new load-balancer address',
    ],
    [
      'a Deployment, without wait',
      (ns: string) => deployment(ns, 'web'),
      (ns: string) => deployment(ns, 'web').replace('{name: web,', '{name: web-v2,'),
      false,
      'the old one is pruned right after the apply, without waiting for the new one (spec.wait is off)',
    ],
    [
      'a Namespace',
      (ns: string) => `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${ns}-old}\n`,
      (ns: string) => `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${ns}-new}\n`,
      false,
      'everything in the old Namespace is deleted with it',
    ],
  ])('%s: the preview calls it a rename and says what it costs', async (_, before, after, wait, cost) => {
    const ns = await freshNamespace(client);
    const root = await writeTree({ 'ks.yaml': ks(ns, 'app', wait), 'app/obj.yaml': before(ns) });
    const first = await run(root, ns);
    expect(first.ok, first.error).toBe(true);
    await writeFile(join(root, 'app/obj.yaml'), after(ns));
    const preview = await run(root, ns, { mode: 'preview' });
    expect(preview.ok, preview.error).toBe(true);
    expect(preview.renamed).toHaveLength(1);
    expect(preview.renamed![0]!.cost).toContain(cost);
    expect(renderComment(preview, { marker: '<!-- m -->' }).body).toContain(cost);
  });

  it('an object of the same kind with other content is a deletion and a creation, not a rename', async () => {
    const ns = await freshNamespace(client);
    const root = await writeTree({ 'ks.yaml': ks(ns, 'app'), 'app/obj.yaml': pvc(ns, 'data') });
    expect((await run(root, ns)).ok).toBe(true);
    await writeFile(
      join(root, 'app/obj.yaml'),
      pvc(ns, 'logs').replace('storage: 1Gi', 'storage: 5Gi').replace('app: db', 'app: logs'),
    );
    const preview = await run(root, ns, { mode: 'preview' });
    expect(preview.ok, preview.error).toBe(true);
    expect(preview.renamed).toBeUndefined();
    expect(preview.counts.deleted).toBe(1);
  });
});

describe('a path-input Kustomization whose folder moved', () => {
  const cmUid = async (ns: string, name: string) =>
    (await client.request<{ metadata: { uid: string } }>('GET', `/api/v1/namespaces/${ns}/configmaps/${name}`)).metadata
      .uid;

  it('takes over the inventory of its former name: renamed, nothing pruned, the old inventory gone', async () => {
    const ns = await freshNamespace(client);
    const root = await writeTree({ 'apps/old/cms.yaml': [cm(ns, 'one'), cm(ns, 'two')].join('---\n') });
    const first = await run(root, ns, { path: 'apps/old', prune: true });
    expect(first.ok, first.error).toBe(true);
    const before = [await cmUid(ns, 'one'), await cmUid(ns, 'two')];
    const [namespace = '', oldName = ''] = first.kustomization.split('/');

    await rename(join(root, 'apps/old'), join(root, 'apps/new'));
    const moved = await run(root, ns, { path: 'apps/new', prune: true });
    expect(moved.ok, moved.error).toBe(true);
    expect(moved.kustomization).not.toBe(first.kustomization);
    expect(moved.notes.join('\n')).toContain(`Renamed from Kustomization ${first.kustomization}: its path apps/old`);
    expect(moved.pruned ?? []).toEqual([]);
    expect(moved.changeset.map((e) => e.movedFrom)).toEqual([first.kustomization, first.kustomization]);
    expect([await cmUid(ns, 'one'), await cmUid(ns, 'two')]).toEqual(before);
    const old = new InventoryStore(client, moved.inventory!.split('/')[0]!, { name: oldName, namespace });
    expect((await old.read()).record).toBeUndefined();

    // What left the moved folder is pruned as under a stable name.
    await writeFile(join(root, 'apps/new/cms.yaml'), cm(ns, 'one'));
    const pruned = await run(root, ns, { path: 'apps/new', prune: true });
    expect(pruned.pruned?.map((p) => `${p.subject} ${p.action}`)).toEqual([`ConfigMap/${ns}/two deleted`]);
  });

  it('leaves an inventory whose folder is still there alone', async () => {
    const ns = await freshNamespace(client);
    const root = await writeTree({
      'apps/a/cm.yaml': cm(ns, 'shared'),
      'apps/b/cm.yaml': cm(ns, 'shared'),
    });
    const a = await run(root, ns, { path: 'apps/a' });
    expect(a.ok, a.error).toBe(true);
    const b = await run(root, ns, { path: 'apps/b' });
    expect(b.ok, b.error).toBe(true);
    expect(b.notes.join('\n')).not.toContain('Renamed from');
    const [namespace = '', name = ''] = a.kustomization.split('/');
    const store = new InventoryStore(client, a.inventory!.split('/')[0]!, { name, namespace });
    expect((await store.read()).record?.entries.map((e) => e.id)).toEqual([`${ns}_shared__ConfigMap`]);
  });
});
