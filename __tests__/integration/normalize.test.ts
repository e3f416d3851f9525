// Objects are normalised as Flux's kustomize-controller normalises them before applying
// (src/ssa/normalize.ts), so our field manager owns the field set Flux's owns: asserted on the
// managedFields of a real API server. And what follows from it for Secrets: a key removed from
// stringData leaves the cluster, also for a Secret applied with stringData by an earlier version.
import { writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import type { Report } from '../../src/report/model.js';
import { adminClient, freshNamespace, writeTree } from '../helpers/cluster.js';
import { kustomizationYaml } from '../helpers/manifests.js';
import { reconcileTree } from '../helpers/reconcile.js';

const MANAGER = 'kustomize-controller';

const actions = (r: Report) => Object.fromEntries(r.changeset.map((e) => [e.subject, e.action]));

interface Live {
  data?: Record<string, string>;
  metadata: { managedFields?: { manager: string; operation: string; subresource?: string; fieldsV1?: unknown }[] };
}

/** The field set (fieldsV1) of each manager's Apply or Update entry, keyed `manager/operation`. */
function owners(live: Live): Record<string, unknown> {
  return Object.fromEntries(
    (live.metadata.managedFields ?? [])
      .filter((e) => !e.subresource)
      .map((e) => [`${e.manager}/${e.operation}`, e.fieldsV1]),
  );
}

const OWNER_LABELS = { 'f:kustomize.toolkit.fluxcd.io/name': {}, 'f:kustomize.toolkit.fluxcd.io/namespace': {} };
const ownedMeta = { 'f:metadata': { 'f:labels': OWNER_LABELS } };

describe('objects normalised as Flux does before applying', () => {
  let client: ClusterClient;
  beforeAll(async () => {
    client = await adminClient();
  });
  afterAll(() => {
    client.close();
  });

  it('owns the field sets Flux owns: port protocols, a Deployment strategy, a Namespace spec, Secret data', async () => {
    const ns = await freshNamespace(client);
    const extra = `${ns}-extra`;
    const root = await writeTree({
      'ks.yaml': kustomizationYaml({ namespace: ns, prune: true }),
      'app/kustomization.yaml': 'resources: [ns.yaml, deploy.yaml, svc.yaml, secret.yaml]\n',
      'app/ns.yaml': `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${extra}}\n`,
      'app/deploy.yaml': `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ${ns}}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: ghcr.io/stefanprodan/podinfo:6.7.1
        ports: [{containerPort: 8080}]
`,
      'app/svc.yaml': `apiVersion: v1
kind: Service
metadata: {name: web, namespace: ${ns}}
spec:
  selector: {app: web}
  ports: [{port: 80}]
`,
      'app/secret.yaml': `apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: ${ns}}
stringData: {user: admin}
`,
    });
    try {
      const first = await reconcileTree(root);
      expect(first.error).toBeUndefined();
      const get = (path: string) => client.request<Live>('GET', path);

      expect(owners(await get(`/api/v1/namespaces/${extra}`))[`${MANAGER}/Apply`]).toEqual({
        ...ownedMeta,
        'f:spec': {},
      });
      expect(owners(await get(`/api/v1/namespaces/${ns}/secrets/creds`))[`${MANAGER}/Apply`]).toEqual({
        ...ownedMeta,
        'f:data': { 'f:user': {} },
      });
      expect(owners(await get(`/api/v1/namespaces/${ns}/services/web`))[`${MANAGER}/Apply`]).toEqual({
        ...ownedMeta,
        'f:spec': {
          'f:ports': {
            'k:{"port":80,"protocol":"TCP"}': { '.': {}, 'f:port': {}, 'f:protocol': {}, 'f:targetPort': {} },
          },
          'f:selector': {},
        },
      });
      expect(owners(await get(`/apis/apps/v1/namespaces/${ns}/deployments/web`))[`${MANAGER}/Apply`]).toEqual({
        ...ownedMeta,
        'f:spec': {
          'f:selector': {},
          'f:strategy': {},
          'f:template': {
            'f:metadata': { 'f:labels': { 'f:app': {} } },
            'f:spec': {
              'f:containers': {
                'k:{"name":"web"}': {
                  '.': {},
                  'f:image': {},
                  'f:name': {},
                  'f:ports': {
                    'k:{"containerPort":8080,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {}, 'f:protocol': {} },
                  },
                  'f:resources': {},
                },
              },
            },
          },
        },
      });

      // The normalised objects are what the live objects prove unchanged: no dry-run, nothing configured.
      const logs: string[] = [];
      const again = await reconcileTree(root, {}, logs);
      expect(again.error).toBeUndefined();
      expect(new Set(Object.values(actions(again)))).toEqual(new Set(['unchanged']));
      expect(logs).toContain('definitions: 1 of 1 object(s) unchanged by their managed fields, not dry-run');
      expect(logs).toContain('resources: 3 of 3 object(s) unchanged by their managed fields, not dry-run');
    } finally {
      await client.request('DELETE', `/api/v1/namespaces/${extra}`).catch(() => undefined);
    }
  });

  it('removes a key taken out of a Secret stringData from the cluster', async () => {
    const ns = await freshNamespace(client);
    const secret = (strings: string) =>
      `apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: ${ns}}\nstringData: {${strings}}\n`;
    const root = await writeTree({
      'ks.yaml': kustomizationYaml({ namespace: ns, prune: true }),
      'app/secret.yaml': secret('a: one, b: two'),
    });
    expect((await reconcileTree(root)).error).toBeUndefined();
    const path = `/api/v1/namespaces/${ns}/secrets/creds`;
    expect(Object.keys((await client.request<Live>('GET', path)).data ?? {}).sort()).toEqual(['a', 'b']);

    await writeFile(`${root}/app/secret.yaml`, secret('a: one'));
    const second = await reconcileTree(root);
    expect(second.error).toBeUndefined();
    expect(actions(second)).toEqual({ [`Secret/${ns}/creds`]: 'configured' });
    const live = await client.request<Live>('GET', path);
    expect(live.data).toEqual({ a: Buffer.from('one').toString('base64') });
    expect(owners(live)[`${MANAGER}/Apply`]).toEqual({ ...ownedMeta, 'f:data': { 'f:a': {} } });
  });

  it('converges a Secret an earlier version applied with stringData: its stale keys go, no other manager’s', async () => {
    const ns = await freshNamespace(client);
    const path = `/api/v1/namespaces/${ns}/secrets/creds`;
    const labels = { 'kustomize.toolkit.fluxcd.io/name': 'app', 'kustomize.toolkit.fluxcd.io/namespace': ns };
    const apply = (body: object, manager: string) =>
      client.request('PATCH', path, {
        query: { fieldManager: manager, force: true },
        body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds', namespace: ns, labels }, ...body },
        contentType: 'application/apply-patch+yaml',
      });
    // What an earlier version left: our Apply entry owns f:stringData; b was removed from Git in a
    // run of that version (its data key lived on, owned by no one); c belongs to another tool.
    await apply({ stringData: { a: 'one', b: 'two', d: 'four' } }, MANAGER);
    await apply({ stringData: { a: 'one', d: 'four' } }, MANAGER);
    await apply({ data: { c: Buffer.from('three').toString('base64') } }, 'other-tool');
    const before = await client.request<Live>('GET', path);
    expect(Object.keys(before.data ?? {}).sort()).toEqual(['a', 'b', 'c', 'd']);
    expect(owners(before)[`${MANAGER}/Apply`]).toEqual({
      ...ownedMeta,
      'f:stringData': { 'f:a': {}, 'f:d': {} },
    });

    // This version, with d also removed from Git now.
    const root = await writeTree({
      'ks.yaml': kustomizationYaml({ namespace: ns, prune: true }),
      'app/secret.yaml': `apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: ${ns}}\nstringData: {a: one}\n`,
    });
    const report = await reconcileTree(root);
    expect(report.error).toBeUndefined();
    expect(actions(report)).toEqual({ [`Secret/${ns}/creds`]: 'configured' });
    const live = await client.request<Live>('GET', path);
    expect(live.data).toEqual({
      a: Buffer.from('one').toString('base64'),
      c: Buffer.from('three').toString('base64'),
    });
    expect(owners(live)).toEqual({
      [`${MANAGER}/Apply`]: { ...ownedMeta, 'f:data': { 'f:a': {} } },
      'other-tool/Apply': { 'f:data': { 'f:c': {} }, ...ownedMeta },
    });

    // And it stays converged: the next run proves it unchanged.
    expect(actions(await reconcileTree(root))).toEqual({ [`Secret/${ns}/creds`]: 'unchanged' });
  });
});
