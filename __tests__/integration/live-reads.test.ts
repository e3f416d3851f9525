// How the apply engine reads live objects on a real apiserver: one LIST per resource and
// namespace for the objects carrying our owner labels, and a GET only where the dry-run's
// resourceVersion shows the list missed something (a change since the list, an object without
// our labels) or where listing is not allowed.
import { describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { ClusterClient as Client } from '../../src/cluster/client.js';
import { loadKubeConfig } from '../../src/cluster/kubeconfig.js';
import { Discovery } from '../../src/cluster/discovery.js';
import { LiveObjects, selectorFor } from '../../src/cluster/live.js';
import type { Report } from '../../src/report/model.js';
import { freshNamespace, writeTree } from '../helpers/cluster.js';
import { faultProxySuite, on, type FaultProxy, type RecordedRequest } from '../helpers/fault-proxy.js';
import { migrateJob } from '../helpers/manifests.js';
import { reconcileTree } from '../helpers/reconcile.js';

const configMap = (ns: string, name: string, value: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${ns}\ndata:\n  v: ${value}\n`;

describe('live reads by list', () => {
  let client: ClusterClient;
  let proxy: FaultProxy;
  faultProxySuite((c, p) => {
    client = c;
    proxy = p;
  });

  async function apply(
    root: string,
    prune = false,
    path = 'app',
  ): Promise<{ report: Report; seen: RecordedRequest[] }> {
    const before = proxy.requests.length;
    const report = await reconcileTree(root, {
      kubeconfig: { kind: 'path', path: proxy.kubeconfig },
      path,
      // The selector asserted below names the Kustomization: fix it rather than derive it.
      ...(path === 'app' ? { name: 'app' } : {}),
      // Each test's trees are one repository's commits.
      run: { holder: 'live-reads test', source: 'local:/live-reads' },
      prune,
      // Three of five objects go in the prune test: more than the guard's default share.
      allowLargePrune: true,
      // The reads are what is tested here: no object is settled by its managed fields alone.
      alwaysDryRun: true,
    });
    return { report, seen: proxy.requests.slice(before) };
  }

  const count = (seen: RecordedRequest[], method: string, path: string | RegExp, dryRun?: boolean) =>
    seen.filter(
      (r) =>
        r.method === method &&
        (typeof path === 'string' ? r.path === path : path.test(r.path)) &&
        (dryRun === undefined || r.query.includes('dryRun=All') === dryRun),
    ).length;
  const actions = (r: Report) => Object.fromEntries(r.changeset.map((e) => [e.name, e.action]));

  /** A tree of five ConfigMaps and two Secrets in a fresh namespace, applied once. */
  async function appliedTree(): Promise<{ ns: string; root: string }> {
    const ns = await freshNamespace(client, 'live');
    const files: Record<string, string> = {};
    for (const name of ['a', 'b', 'c', 'd', 'e']) files[`app/${name}.yaml`] = configMap(ns, name, 'one');
    for (const name of ['s1', 's2']) {
      files[`app/${name}.yaml`] =
        `apiVersion: v1\nkind: Secret\nmetadata:\n  name: ${name}\n  namespace: ${ns}\nstringData:\n  k: v\n`;
    }
    const root = await writeTree(files);
    const { report } = await apply(root);
    expect(report.error).toBeUndefined();
    expect(report.counts.created).toBe(7);
    return { ns, root };
  }

  it('re-runs with one LIST per resource and namespace and no GET per object', async () => {
    const { ns, root } = await appliedTree();
    const { report, seen } = await apply(root);
    expect(report.error).toBeUndefined();
    expect(report.counts).toMatchObject({ unchanged: 7, configured: 0, created: 0 });
    const lists = seen.filter(
      (r) =>
        r.method === 'GET' && r.path.startsWith(`/api/v1/namespaces/${ns}/`) && /\/(configmaps|secrets)$/.test(r.path),
    );
    expect(lists.map((r) => r.path).sort()).toEqual([
      `/api/v1/namespaces/${ns}/configmaps`,
      `/api/v1/namespaces/${ns}/secrets`,
    ]);
    for (const list of lists) {
      expect(decodeURIComponent(list.query)).toContain(
        `labelSelector=kustomize.toolkit.fluxcd.io/name=app,kustomize.toolkit.fluxcd.io/namespace=flux-system`,
      );
    }
    expect(count(seen, 'GET', new RegExp(`^/api/v1/namespaces/${ns}/(configmaps|secrets)/`))).toBe(0);
    expect(count(seen, 'PATCH', new RegExp(`^/api/v1/namespaces/${ns}/`), true)).toBe(7);
    expect(count(seen, 'PATCH', new RegExp(`^/api/v1/namespaces/${ns}/`), false)).toBe(0);
  });

  it('reads again an object that changed between the list and its dry-run, and finds no drift', async () => {
    const { ns, root } = await appliedTree();
    const path = `/api/v1/namespaces/${ns}/configmaps/c`;
    // Another controller annotates the object after our list, just before our dry-run of it: the
    // dry-run then shows the annotation, which the listed copy lacks.
    proxy.setRules([
      {
        match: on('PATCH', path, { dryRun: true }),
        times: 1,
        fault: {
          beforeForward: async () => {
            await client.request('PATCH', path, {
              body: { metadata: { annotations: { 'example.com/touched': 'yes' } } },
              contentType: 'application/merge-patch+json',
              query: { fieldManager: 'other-controller' },
            });
          },
        },
      },
    ]);
    const { report, seen } = await apply(root);
    expect(report.error).toBeUndefined();
    expect(actions(report)['c']).toBe('unchanged');
    expect(report.counts).toMatchObject({ unchanged: 7, configured: 0 });
    expect(count(seen, 'GET', path)).toBe(1);
    expect(count(seen, 'PATCH', path, true)).toBe(2);
  });

  it('reads by itself an object that exists without our labels, and takes it over', async () => {
    const ns = await freshNamespace(client, 'live');
    await client.request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      body: { metadata: { name: 'a' }, data: { v: 'by-hand' } },
      query: { fieldManager: 'kubectl-create' },
    });
    const root = await writeTree({
      'app/a.yaml': configMap(ns, 'a', 'from-git'),
      'app/b.yaml': configMap(ns, 'b', 'x'),
    });
    const { report, seen } = await apply(root);
    expect(report.error).toBeUndefined();
    expect(actions(report)).toEqual({ a: 'configured', b: 'created' });
    const a = report.changeset.find((e) => e.name === 'a');
    expect(a?.diff).toContainEqual({ path: '/data/v', kind: 'changed', before: 'by-hand', after: 'from-git' });
    expect(count(seen, 'GET', `/api/v1/namespaces/${ns}/configmaps/a`)).toBe(1);
    expect(count(seen, 'GET', `/api/v1/namespaces/${ns}/configmaps/b`)).toBe(0);
    const live = await client.request<{ data: Record<string, string>; metadata: { labels?: Record<string, string> } }>(
      'GET',
      `/api/v1/namespaces/${ns}/configmaps/a`,
    );
    expect(live.data).toEqual({ v: 'from-git' });
    expect(live.metadata.labels?.['kustomize.toolkit.fluxcd.io/name']).toBe('app');
  });

  it('recreates an unlabelled object whose immutable field changed (force), after reading it', async () => {
    const ns = await freshNamespace(client, 'live');
    const created = await client.request<{ metadata: { uid: string } }>(
      'POST',
      `/apis/batch/v1/namespaces/${ns}/jobs`,
      {
        body: {
          apiVersion: 'batch/v1',
          kind: 'Job',
          metadata: { name: 'migrate' },
          spec: {
            template: { spec: { restartPolicy: 'Never', containers: [{ name: 'migrate', image: 'busybox:1.36' }] } },
          },
        },
      },
    );
    const refused = await apply(await writeTree({ 'app/job.yaml': migrateJob(ns, 'busybox:1.37', false) }));
    expect(refused.report.ok).toBe(false);
    expect(refused.report.error).toMatch(new RegExp(`^Job/${ns}/migrate dry-run failed \\(Invalid\\): .*immutable`));
    // Refused after reading the object by itself and trying once more.
    expect(count(refused.seen, 'GET', `/apis/batch/v1/namespaces/${ns}/jobs/migrate`)).toBe(1);

    const { report } = await apply(await writeTree({ 'app/job.yaml': migrateJob(ns, 'busybox:1.37', true) }));
    expect(report.error).toBeUndefined();
    expect(actions(report)).toEqual({ migrate: 'created' });
    const after = await client.request<{
      metadata: { uid: string };
      spec: { template: { spec: { containers: { image: string }[] } } };
    }>('GET', `/apis/batch/v1/namespaces/${ns}/jobs/migrate`);
    expect(after.metadata.uid).not.toBe(created.metadata.uid);
    expect(after.spec.template.spec.containers[0]!.image).toBe('busybox:1.37');
  });

  it('does not read what cannot exist yet: objects of a namespace and of a CRD created by the same run', async () => {
    const ns = `live-new-${Date.now().toString(36)}`;
    const group = `${ns}.example.com`;
    const root = await writeTree({
      'app/ns.yaml': `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${ns}}\n`,
      'app/crd.yaml': `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.${group}}
spec:
  group: ${group}
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
    - name: v1
      served: true
      storage: true
      schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`,
      'app/objects.yaml': ['a', 'b']
        .flatMap((n) => [
          `apiVersion: ${group}/v1\nkind: Widget\nmetadata: {name: ${n}, namespace: ${ns}}\nspec: {size: 1}\n`,
          configMap(ns, n, 'one'),
        ])
        .join('---\n'),
    });
    try {
      const { report, seen } = await apply(root);
      expect(report.error).toBeUndefined();
      expect(report.counts).toMatchObject({ created: 6 });
      expect(seen.filter((r) => r.method === 'GET' && r.path.includes(`/namespaces/${ns}/`))).toEqual([]);
      expect(count(seen, 'PATCH', new RegExp(`/namespaces/${ns}/`), true)).toBe(4);
    } finally {
      await client.request('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${group}`);
      await client.request('DELETE', `/api/v1/namespaces/${ns}`);
    }
  });

  it('does not wait on a list answered 429: it reads the objects by GET instead', async () => {
    const { ns, root } = await appliedTree();
    const collection = `/api/v1/namespaces/${ns}/configmaps`;
    proxy.setRules([{ match: on('GET', collection), times: 1, fault: { status: 429, retryAfter: 5 } }]);
    const { report, seen } = await apply(root);
    expect(report.error).toBeUndefined();
    expect(report.counts).toMatchObject({ unchanged: 7 });
    expect(seen.filter((r) => r.method === 'GET' && r.path === collection).map((r) => r.status)).toEqual([429]);
    expect(count(seen, 'GET', new RegExp(`^${collection}/`))).toBe(5);
  });

  it('prunes by the same lists, and reads by GET an object that lost our labels', async () => {
    const ns = await freshNamespace(client, 'live');
    const all = ['a', 'b', 'c', 'd', 'e'];
    // Its own directory, so its own Kustomization (named after the path) and inventory.
    const tree = (names: string[]) =>
      writeTree(Object.fromEntries(names.map((n) => [`${ns}/${n}.yaml`, configMap(ns, n, 'one')])));
    expect((await apply(await tree(all), true, ns)).report.counts.created).toBe(5);
    // Someone relabels d: it is no longer ours to prune.
    await client.request('PATCH', `/api/v1/namespaces/${ns}/configmaps/d`, {
      body: { metadata: { labels: { 'kustomize.toolkit.fluxcd.io/name': 'someone-else' } } },
      contentType: 'application/merge-patch+json',
    });
    const { report, seen } = await apply(await tree(['a', 'b']), true, ns);
    expect(report.error).toBeUndefined();
    expect(Object.fromEntries((report.pruned ?? []).map((p) => [p.subject, p.action]))).toEqual({
      [`ConfigMap/${ns}/c`]: 'deleted',
      [`ConfigMap/${ns}/d`]: 'skipped',
      [`ConfigMap/${ns}/e`]: 'deleted',
    });
    const objectGets = seen
      .filter((r) => r.method === 'GET' && r.path.startsWith(`/api/v1/namespaces/${ns}/configmaps/`))
      .map((r) => r.path.split('/').pop());
    expect(objectGets).toEqual(['d']);
    expect(count(seen, 'DELETE', new RegExp(`^/api/v1/namespaces/${ns}/configmaps/`))).toBe(2);
    await expect(client.request('GET', `/api/v1/namespaces/${ns}/configmaps/d`)).resolves.toBeDefined();
  });

  it('follows a list over its pages', async () => {
    const { ns } = await appliedTree();
    const through = new Client(await loadKubeConfig({ kind: 'path', path: proxy.kubeconfig }));
    try {
      const mapping = await new Discovery(through).mapping('v1', 'ConfigMap');
      const before = proxy.requests.length;
      const reader = new LiveObjects(through, 2);
      const reads = await Promise.all(
        ['a', 'b', 'c', 'd', 'e', 'missing'].map((name) =>
          reader.read(mapping, { name, namespace: ns }, selectorFor('app', 'flux-system')),
        ),
      );
      expect(reads.map((r) => (r.object?.['metadata'] as { name?: string } | undefined)?.name)).toEqual([
        'a',
        'b',
        'c',
        'd',
        'e',
        undefined,
      ]);
      expect(reads.every((r) => !r.direct)).toBe(true);
      const pages = proxy.requests.slice(before);
      expect(pages.map((r) => r.path)).toEqual(Array.from({ length: 3 }, () => `/api/v1/namespaces/${ns}/configmaps`));
      expect(pages.map((r) => new URLSearchParams(r.query).has('continue'))).toEqual([false, true, true]);
    } finally {
      through.close();
    }
  });

  it('falls back to one GET per object when listing is forbidden', async () => {
    const { ns, root } = await appliedTree();
    proxy.setRules([{ match: on('GET', `/api/v1/namespaces/${ns}/configmaps`), fault: { status: 403 } }]);
    const { report, seen } = await apply(root);
    expect(report.error).toBeUndefined();
    expect(report.counts).toMatchObject({ unchanged: 7, configured: 0 });
    expect(count(seen, 'GET', new RegExp(`^/api/v1/namespaces/${ns}/configmaps/`))).toBe(5);
    expect(count(seen, 'GET', new RegExp(`^/api/v1/namespaces/${ns}/secrets/`))).toBe(0);
  });
});
