// Immutable means immutable: an object whose immutable field changed in Git is deleted and created
// again when force says so (spec.force, the force input, the per-object annotation), and without
// force the run fails naming the object, the field and force. A plain validation error is never
// taken for an immutable field, force or not.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import type { Report } from '../../src/report/model.js';
import { adminClient, freshNamespace, writeTree } from '../helpers/cluster.js';
import { freeServiceIPs } from '../helpers/immutable-cases.js';
import { kustomizationYaml } from '../helpers/manifests.js';
import { reconcileTree } from '../helpers/reconcile.js';

/** A Kustomization file for ./app, with spec.force when `force`. */
const ks = (ns: string, force: boolean) => kustomizationYaml({ namespace: ns, spec: `force: ${force}` });

const FORCE_ANNOTATION = '\n  annotations: {kustomize.toolkit.fluxcd.io/force: Enabled}';

const service = (ns: string, clusterIP: string, port = 80) => `apiVersion: v1
kind: Service
metadata: {name: web, namespace: ${ns}}
spec:
  clusterIP: ${clusterIP}
  selector: {app: web}
  ports: [{port: ${port}}]
`;

const actions = (r: Report) => Object.fromEntries(r.changeset.map((e) => [e.subject, e.action]));

describe('force recreates what cannot be changed in place', () => {
  let client: ClusterClient;
  beforeAll(async () => {
    client = await adminClient();
  });
  afterAll(() => {
    client.close();
  });

  type Live = { metadata: { uid: string }; spec: { clusterIP: string } };
  const getService = (ns: string) => client.request<Live>('GET', `/api/v1/namespaces/${ns}/services/web`);

  it('fails without force naming the Service, its clusterIP and force, and recreates it with spec.force', async () => {
    const ns = await freshNamespace(client);
    const [a, b] = (await freeServiceIPs(client, 2)) as [string, string];
    const first = await reconcileTree(await writeTree({ 'ks.yaml': ks(ns, false), 'app/svc.yaml': service(ns, a) }));
    expect(first.error).toBeUndefined();
    const before = await getService(ns);
    expect(before.spec.clusterIP).toBe(a);

    const refused = await reconcileTree(await writeTree({ 'ks.yaml': ks(ns, false), 'app/svc.yaml': service(ns, b) }));
    expect(refused.ok).toBe(false);
    expect(refused.error).toMatch(new RegExp(`^Service/${ns}/web dry-run failed \\(Invalid\\): `));
    expect(refused.error).toContain('may not change once set');
    expect(refused.error).toContain(
      'immutable field spec.clusterIPs[0] changed: force would delete and recreate the object',
    );
    expect((await getService(ns)).metadata.uid).toBe(before.metadata.uid);

    const forced = await reconcileTree(await writeTree({ 'ks.yaml': ks(ns, true), 'app/svc.yaml': service(ns, b) }));
    expect(forced.error).toBeUndefined();
    expect(forced.ok).toBe(true);
    expect(actions(forced)).toEqual({ [`Service/${ns}/web`]: 'created' });
    const after = await getService(ns);
    expect(after.metadata.uid).not.toBe(before.metadata.uid);
    expect(after.spec.clusterIP).toBe(b);
  });

  it('does not take a bad port for an immutable field: the forced run fails and the Service stays', async () => {
    const ns = await freshNamespace(client);
    const [a] = (await freeServiceIPs(client, 1)) as [string];
    expect((await reconcileTree(await writeTree({ 'ks.yaml': ks(ns, true), 'app/svc.yaml': service(ns, a) }))).ok).toBe(
      true,
    );
    const before = await getService(ns);

    const bad = await reconcileTree(
      await writeTree({ 'ks.yaml': ks(ns, true), 'app/svc.yaml': service(ns, 'None', 70000) }),
    );
    expect(bad.ok).toBe(false);
    expect(bad.error).toContain('must be between 1 and 65535');
    expect(bad.error).not.toContain('force would');
    expect((await getService(ns)).metadata.uid).toBe(before.metadata.uid);
  });

  it('recreates a Job whose pod template changed, with the force input', async () => {
    const ns = await freshNamespace(client);
    const job = (image: string) => `apiVersion: batch/v1
kind: Job
metadata: {name: migrate, namespace: ${ns}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: "${image}"}]
`;
    expect(
      (await reconcileTree(await writeTree({ 'app/job.yaml': job('busybox:1.36') }), { path: 'app', force: false })).ok,
    ).toBe(true);
    const path = `/apis/batch/v1/namespaces/${ns}/jobs/migrate`;
    const before = await client.request<{ metadata: { uid: string } }>('GET', path);

    const changed = await writeTree({ 'app/job.yaml': job('busybox:1.37') });
    const refused = await reconcileTree(changed, { path: 'app', force: false });
    expect(refused.error).toContain(`Job/${ns}/migrate`);
    expect(refused.error).toContain(
      'immutable field spec.template changed: force would delete and recreate the object',
    );

    const forced = await reconcileTree(changed, { path: 'app', force: true });
    expect(forced.error).toBeUndefined();
    expect(actions(forced)).toEqual({ [`Job/${ns}/migrate`]: 'created' });
    const after = await client.request<{
      metadata: { uid: string };
      spec: { template: { spec: { containers: { image: string }[] } } };
    }>('GET', path);
    expect(after.metadata.uid).not.toBe(before.metadata.uid);
    expect(after.spec.template.spec.containers[0]!.image).toBe('busybox:1.37');
  });

  it('recreates an immutable ConfigMap whose data changed, with the force annotation', async () => {
    const ns = await freshNamespace(client);
    const cm = (v: string, force: boolean) => `apiVersion: v1
kind: ConfigMap
metadata:
  name: frozen
  namespace: ${ns}${force ? FORCE_ANNOTATION : ''}
immutable: true
data: {v: "${v}"}
`;
    expect(
      (await reconcileTree(await writeTree({ 'app/cm.yaml': cm('one', false) }), { path: 'app', force: false })).ok,
    ).toBe(true);
    const path = `/api/v1/namespaces/${ns}/configmaps/frozen`;
    const before = await client.request<{ metadata: { uid: string } }>('GET', path);

    const refused = await reconcileTree(await writeTree({ 'app/cm.yaml': cm('two', false) }), {
      path: 'app',
      force: false,
    });
    expect(refused.error).toContain(`ConfigMap/${ns}/frozen`);
    expect(refused.error).toContain('immutable field data changed: force would delete and recreate the object');

    const forced = await reconcileTree(await writeTree({ 'app/cm.yaml': cm('two', true) }), {
      path: 'app',
      force: false,
    });
    expect(forced.error).toBeUndefined();
    expect(actions(forced)).toEqual({ [`ConfigMap/${ns}/frozen`]: 'created' });
    const after = await client.request<{ metadata: { uid: string }; data: Record<string, string> }>('GET', path);
    expect(after.metadata.uid).not.toBe(before.metadata.uid);
    expect(after.data).toEqual({ v: 'two' });
  });

  it('recreates a StatefulSet whose volumeClaimTemplates changed, with spec.force', async () => {
    const ns = await freshNamespace(client);
    const sts = (size: string) => `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: ${ns}}
spec:
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: "busybox:1.36"}]
  volumeClaimTemplates:
    - metadata: {name: data}
      spec:
        accessModes: [ReadWriteOnce]
        resources: {requests: {storage: ${size}}}
`;
    expect((await reconcileTree(await writeTree({ 'ks.yaml': ks(ns, false), 'app/sts.yaml': sts('1Gi') }))).ok).toBe(
      true,
    );
    const path = `/apis/apps/v1/namespaces/${ns}/statefulsets/db`;
    const before = await client.request<{ metadata: { uid: string } }>('GET', path);

    const refused = await reconcileTree(await writeTree({ 'ks.yaml': ks(ns, false), 'app/sts.yaml': sts('2Gi') }));
    expect(refused.error).toContain(`StatefulSet/${ns}/db`);
    // Up to 1.36 the server names the whole spec in one sentence; from 1.37 the field itself.
    expect(refused.error).toMatch(
      /updates to statefulset spec for fields other than|spec\.volumeClaimTemplates: Invalid value: .*: field is immutable/,
    );
    expect(refused.error).toContain(
      'immutable field spec.volumeClaimTemplates changed: force would delete and recreate the object',
    );

    const log: string[] = [];
    const forced = await reconcileTree(
      await writeTree({ 'ks.yaml': ks(ns, true), 'app/sts.yaml': sts('2Gi') }),
      {},
      log,
    );
    expect(forced.error).toBeUndefined();
    expect(actions(forced)).toEqual({ [`StatefulSet/${ns}/db`]: 'created' });
    expect(log).toContainEqual(
      expect.stringContaining(
        `StatefulSet/${ns}/db created (recreated: immutable field spec.volumeClaimTemplates changed)`,
      ),
    );
    const after = await client.request<{
      metadata: { uid: string };
      spec: { volumeClaimTemplates: { spec: { resources: { requests: { storage: string } } } }[] };
    }>('GET', path);
    expect(after.metadata.uid).not.toBe(before.metadata.uid);
    expect(after.spec.volumeClaimTemplates[0]!.spec.resources.requests.storage).toBe('2Gi');
  });
});
