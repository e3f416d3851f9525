// Reads with the apply's identity (issue 47, class 6): a pull request's Kustomization lists an
// object another tenant keeps (same kind, namespace and name), changing the field that holds its
// secret, so that the preview's diff (or the dry-run's merged answer) shows the old value. Without
// an account to act as, a preview reads only its own inventory's objects; with one
// (spec.serviceAccountName or default-service-account), it reads as that account, which here may
// read nothing. Each case plants a canary in the other tenant's live object and runs the bundled
// action in preview on a pull_request event; the canary must reach no published channel.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { adminClient, freshNamespace, kubeconfigPath } from '../helpers/cluster.js';
import { startFakeGitHub, type FakeGitHub } from '../helpers/github-server.js';
import { attackCase, cleanupRun, evidenceOf, runHostile, type Canary, type HostileRun } from '../helpers/hostile.js';
import { configMap, kustomizationYaml } from '../helpers/manifests.js';

const canary = (where: string): Canary => ({ where, value: `kr47-${randomBytes(12).toString('hex')}` });

interface Ctx {
  /** The pull request's Kustomization's namespace. */
  mine: string;
  /** The other tenant's namespace. */
  other: string;
  secret: Canary;
}

interface TenantCase {
  id: string;
  title: string;
  /** The other tenant's live object (created with the admin client): API collection path and body. */
  live: (c: Ctx) => { path: string; body: Record<string, unknown>; remove: string };
  /** The object the pull request adds to its Kustomization's build. */
  steal: (c: Ctx) => string;
  /** More lines of the Kustomization's spec. */
  spec?: string;
  inputs?: Record<string, string>;
  /** A ServiceAccount without any RBAC binding, in the pull request's Kustomization's namespace. */
  account?: boolean;
}

const CASES: TenantCase[] = [
  {
    id: '47-6a-configmap-of-another-tenant',
    title:
      "a pull request's Kustomization (no account) lists another tenant's ConfigMap by its namespace and name, changing the DSN that holds its password",
    live: ({ other, secret }) => ({
      path: `/api/v1/namespaces/${other}/configmaps`,
      body: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'db', namespace: other },
        data: { dsn: `postgres://app:${secret.value}@db.${other}:5432/app`, pool: '10' },
      },
      remove: `/api/v1/namespaces/${other}/configmaps/db`,
    }),
    steal: ({ other }) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: db, namespace: ${other}}\ndata: {dsn: 'postgres://x', pool: '11'}\n`,
  },
  {
    id: '47-6b-configmap-as-an-account-that-cannot-read-it',
    title:
      "the same theft with spec.serviceAccountName set to an account that may not read the other tenant's namespace",
    live: ({ other, secret }) => ({
      path: `/api/v1/namespaces/${other}/configmaps`,
      body: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'db', namespace: other },
        data: { dsn: `postgres://app:${secret.value}@db/app` },
      },
      remove: `/api/v1/namespaces/${other}/configmaps/db`,
    }),
    steal: ({ other }) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: db, namespace: ${other}}\ndata: {dsn: x}\n`,
    spec: 'serviceAccountName: nobody',
    account: true,
  },
  {
    id: '47-6c-secret-of-another-tenant-annotation-and-data',
    title:
      "a pull request lists another tenant's Secret, changing an annotation and a stringData key that hold its password (annotations are not masked as data is)",
    live: ({ other, secret }) => ({
      path: `/api/v1/namespaces/${other}/secrets`,
      body: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'db-creds', namespace: other, annotations: { 'tenant.example/rotation-note': secret.value } },
        stringData: { password: secret.value },
      },
      remove: `/api/v1/namespaces/${other}/secrets/db-creds`,
    }),
    steal: ({ other }) =>
      'apiVersion: v1\nkind: Secret\nmetadata:\n  name: db-creds\n' +
      `  namespace: ${other}\n  annotations: {tenant.example/rotation-note: none}\nstringData: {password: none}\n`,
  },
  {
    id: '47-6d-cluster-scoped-namespace-of-another-tenant',
    title:
      "a pull request lists another tenant's Namespace (cluster-scoped), changing the annotation where that tenant keeps a credential",
    live: ({ other, secret }) => ({
      path: `/api/v1/namespaces/${other}`,
      body: { metadata: { annotations: { 'tenant.example/break-glass': secret.value } } },
      remove: '',
    }),
    steal: ({ other }) =>
      `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${other}\n  annotations:\n    tenant.example/break-glass: "no"\n`,
  },
  {
    id: '47-6e-secret-as-default-service-account-that-cannot-read-it',
    title: "a pull request lists another tenant's Secret while the workflow's default-service-account may not read it",
    live: ({ other, secret }) => ({
      path: `/api/v1/namespaces/${other}/secrets`,
      body: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'api', namespace: other, labels: { token: 'x' }, annotations: { hint: secret.value } },
        stringData: { token: secret.value },
      },
      remove: `/api/v1/namespaces/${other}/secrets/api`,
    }),
    steal: ({ other }) =>
      `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"api","namespace":"${other}","annotations":{"hint":"?"}},"stringData":{"token":"?"}}\n`,
    inputs: { 'default-service-account': 'nobody' },
    account: true,
  },
  {
    id: '47-6f-configmap-of-another-tenant-untouched-key',
    title:
      "a pull request adds a key to another tenant's ConfigMap without touching the secret one, hoping the dry-run's merged answer shows the rest",
    live: ({ other, secret }) => ({
      path: `/api/v1/namespaces/${other}/configmaps`,
      body: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'settings', namespace: other },
        data: { password: secret.value },
      },
      remove: `/api/v1/namespaces/${other}/configmaps/settings`,
    }),
    steal: ({ other }) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: ${other}\ndata:\n  extra: "1"\n`,
  },
];

describe("another tenant's live objects in a preview (bundled action)", () => {
  let client: ClusterClient;
  let github: FakeGitHub;
  let kubeconfig: string;
  beforeAll(async () => {
    client = await adminClient();
    kubeconfig = await readFile(kubeconfigPath(), 'utf8');
    github = await startFakeGitHub({
      tokens: { 'tok-rw': { pull_requests: 'write', checks: 'write', contents: 'read' } },
    });
  });
  afterAll(async () => {
    client.close();
    await github.close();
  });

  it.each(CASES.map((c, i) => [c.id, c, i] as const))('%s', async (id, c, index) => {
    const removals: string[] = [];
    let run: HostileRun | undefined;
    await attackCase(
      { id, title: c.title },
      async (evidence, result) => {
        const mine = await freshNamespace(client, 'mine');
        const other = await freshNamespace(client, 'tnt');
        removals.push(`/api/v1/namespaces/${mine}`, `/api/v1/namespaces/${other}`);
        const ctx: Ctx = { mine, other, secret: canary(`${c.id}: the other tenant's live object`) };
        const live = c.live(ctx);
        if (live.remove === '') {
          await client.request('PATCH', live.path, {
            body: live.body,
            contentType: 'application/merge-patch+json',
          });
        } else await client.request('POST', live.path, { body: live.body });
        if (c.account) {
          await client.request('POST', `/api/v1/namespaces/${mine}/serviceaccounts`, {
            body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'nobody', namespace: mine } },
          });
        }
        const ks = kustomizationYaml({
          name: 'app',
          namespace: mine,
          prune: true,
          ...(c.spec ? { spec: c.spec } : {}),
        });
        run = await runHostile({
          client,
          github,
          number: 470 + index,
          base: { 'ks.yaml': ks, 'app/own.yaml': configMap(mine, 'own') },
          head: { 'app/steal.yaml': c.steal(ctx) },
          inputs: {
            kubeconfig,
            mode: 'preview',
            kustomizations: 'ks.yaml',
            'github-token': 'tok-rw',
            ...(c.inputs ?? {}),
          },
        });
        result['exitCode'] = run.code;
        evidence.push(...evidenceOf({ run, canaries: [ctx.secret], listeners: [], namespace: mine }));
        // The other tenant's object is still as it was (a preview writes nothing).
        const text = JSON.stringify(await client.request('GET', live.remove === '' ? live.path : live.remove));
        if (!text.includes(ctx.secret.value)) evidence.push("the other tenant's object lost its value");
        // The run said what it did instead: not read, or refused as the account.
        const said = run.stdout + run.summary;
        if (!/not read|forbidden|cannot/i.test(said)) evidence.push('the run did not say the object was not read');
      },
      async () => {
        if (run) await cleanupRun(run);
        for (const path of removals) await client.request('DELETE', path).catch(() => undefined);
      },
    );
  });
});
