// Kubernetes' own deleters count as deletions (issue 47, class 5): a pull request changes no
// object's presence in the build, yet makes the garbage collector or the StatefulSet controller
// delete one: ownerReferences to an owner that does not exist (a forged uid, a name nobody has, a
// cluster-scoped owner from a namespaced object) or that the same change prunes, a StatefulSet
// scaled down with whenScaled: Delete. Each case applies a base tree (a push), previews the change
// on a pull_request event (it must list the object as a would-delete, by whom), then applies it on
// a push without a reviewer's label (it must refuse, and the object must keep its uid).
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { runAction } from '../helpers/action.js';
import { adminClient, freshNamespace, kubeconfigPath, writeTree } from '../helpers/cluster.js';
import { prEvent, repoEnv, startFakeGitHub, type FakeGitHub } from '../helpers/github-server.js';
import { attackCase } from '../helpers/hostile.js';
import { configMap, kustomizationYaml } from '../helpers/manifests.js';
import { gateInputs, pvc } from '../helpers/destructive-gate.js';

/** A uid no object has (the API server does not check the uid of an owner reference). */
const FORGED = '6f1c2d3e-0000-4000-8000-00000000beef';

interface Setup {
  /** The base tree under app/ (applied first). */
  base: Record<string, string>;
  /** After the base apply: what the pull request's tree under app/ becomes (null deletes a file). */
  head: (
    ns: string,
    uidOf: (path: string) => Promise<string>,
  ) => Record<string, string | null> | Promise<Record<string, string | null>>;
  /** Before the pull request: what the cluster has that the tree does not make (claims of a set). */
  prepare?: (ns: string) => Promise<void>;
  /** The object Kubernetes would delete: its subject and API path. */
  target: (ns: string) => { subject: string; path: string };
  /** Other objects to remove after the case (cluster-scoped ones the namespace does not take). */
  extra?: (ns: string) => string[];
}

const service = (ns: string, more = '') =>
  `apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: ${ns}\n${more}` +
  'spec: {selector: {app: web}, ports: [{port: 80}]}\n';

const deployment = (ns: string, more = '') => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: ${ns}
${more}spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: registry.k8s.io/pause:3.9}]}
`;

const statefulSet = (ns: string, replicas: number, policy = '') => `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: ${ns}}
spec:
  replicas: ${replicas}
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: db}}
${policy}  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: registry.k8s.io/pause:3.9}]}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
`;

const CASES: { id: string; title: string; setup: Setup }[] = [
  {
    id: '47-5a-service-owned-by-nobody',
    title:
      'a pull request gives a live Service ownerReferences to a ConfigMap no one has (a forged uid): the garbage collector would delete it',
    setup: {
      base: { 'svc.yaml': service('NS') },
      head: (ns) => ({
        'svc.yaml': service(
          ns,
          `  ownerReferences:\n  - apiVersion: v1\n    kind: ConfigMap\n    name: ghost\n    uid: ${FORGED}\n`,
        ),
      }),
      target: (ns) => ({ subject: `Service/${ns}/web`, path: `/api/v1/namespaces/${ns}/services/web` }),
    },
  },
  {
    id: '47-5b-namespace-owned-by-a-forged-cluster-role',
    title:
      'a pull request gives a live Namespace holding a ConfigMap an owner reference (flow style) to the ClusterRole admin with a forged uid: the Namespace and all it holds would go',
    setup: {
      base: {
        'ns.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata: {name: NS-team}\n',
        'cm.yaml': configMap('NS-team', 'inside'),
      },
      head: (ns) => ({
        'ns.yaml':
          `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${ns}-team, ownerReferences: ` +
          `[{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, name: admin, uid: "${FORGED}"}]}\n`,
      }),
      target: (ns) => ({ subject: `Namespace/${ns}-team`, path: `/api/v1/namespaces/${ns}-team` }),
      extra: (ns) => [`/api/v1/namespaces/${ns}-team`],
    },
  },
  {
    id: '47-5c-claim-owned-by-its-namespace-with-another-uid',
    title:
      'a pull request makes a live PersistentVolumeClaim owned by its own Namespace (cluster-scoped owner, real name, another uid), written in JSON',
    setup: {
      base: { 'pvc.yaml': pvc('NS') },
      head: (ns) => ({
        'pvc.yaml': JSON.stringify({
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          metadata: {
            name: 'data',
            namespace: ns,
            ownerReferences: [{ apiVersion: 'v1', kind: 'Namespace', name: ns, uid: FORGED }],
          },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
        }),
      }),
      target: (ns) => ({
        subject: `PersistentVolumeClaim/${ns}/data`,
        path: `/api/v1/namespaces/${ns}/persistentvolumeclaims/data`,
      }),
    },
  },
  {
    id: '47-5d-service-owned-by-what-the-change-prunes',
    title:
      'a pull request drops a ConfigMap from the build and makes a live Service its dependant (the real uid): the prune takes the owner, the garbage collector the Service',
    setup: {
      base: { 'svc.yaml': service('NS'), 'owner.yaml': configMap('NS', 'owner') },
      head: async (ns, uidOf) => {
        const uid = await uidOf(`/api/v1/namespaces/${ns}/configmaps/owner`);
        return {
          'owner.yaml': null,
          'svc.yaml': service(
            ns,
            `  ownerReferences:\n  - {apiVersion: v1, kind: ConfigMap, name: owner, uid: ${uid}, blockOwnerDeletion: false}\n`,
          ),
        };
      },
      target: (ns) => ({ subject: `Service/${ns}/web`, path: `/api/v1/namespaces/${ns}/services/web` }),
    },
  },
  {
    id: '47-5e-statefulset-scaled-down-with-when-scaled-delete',
    title:
      'a pull request scales a StatefulSet from 2 to 1 and sets persistentVolumeClaimRetentionPolicy.whenScaled: Delete: the controller would delete the claim of ordinal 1',
    setup: {
      base: { 'sts.yaml': statefulSet('NS', 2) },
      prepare: async (ns) => {
        // The claims the controller makes for each ordinal (made here when it has not yet).
        for (const name of ['data-db-0', 'data-db-1']) {
          await client
            .request('POST', `/api/v1/namespaces/${ns}/persistentvolumeclaims`, {
              body: {
                apiVersion: 'v1',
                kind: 'PersistentVolumeClaim',
                metadata: { name, namespace: ns, labels: { app: 'db' } },
                spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
              },
            })
            .catch(() => undefined);
        }
      },
      head: (ns) => ({
        'sts.yaml': statefulSet(
          ns,
          1,
          '  persistentVolumeClaimRetentionPolicy: {whenScaled: Delete, whenDeleted: Retain}\n',
        ),
      }),
      target: (ns) => ({
        subject: `PersistentVolumeClaim/${ns}/data-db-1`,
        path: `/api/v1/namespaces/${ns}/persistentvolumeclaims/data-db-1`,
      }),
    },
  },
  {
    id: '47-5f-deployment-owned-by-a-live-configmap-with-another-uid',
    title:
      'a pull request makes a live Deployment the dependant of a ConfigMap of the same build under its real name but another uid',
    setup: {
      base: { 'deploy.yaml': deployment('NS'), 'settings.yaml': configMap('NS', 'settings') },
      head: (ns) => ({
        'deploy.yaml': deployment(
          ns,
          `  ownerReferences:\n  - apiVersion: v1\n    kind: ConfigMap\n    name: settings\n    uid: '${FORGED}'\n    controller: true\n`,
        ),
      }),
      target: (ns) => ({ subject: `Deployment/${ns}/web`, path: `/apis/apps/v1/namespaces/${ns}/deployments/web` }),
    },
  },
  {
    id: '47-5g-namespace-emptied-of-its-owner',
    title:
      'a pull request drops a ClusterRole from the build; a live Namespace outside the build, holding a claim, is owned by that ClusterRole alone: the prune takes the owner, the garbage collector the Namespace',
    setup: {
      base: {
        'role.yaml':
          'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: NS-owner}\nrules: []\n',
        'cm.yaml': configMap('NS', 'kept'),
      },
      prepare: async (ns) => {
        const role = await client.request<{ metadata: { uid: string } }>(
          'GET',
          `/apis/rbac.authorization.k8s.io/v1/clusterroles/${ns}-owner`,
        );
        const ownerReferences = [
          {
            apiVersion: 'rbac.authorization.k8s.io/v1',
            kind: 'ClusterRole',
            name: `${ns}-owner`,
            uid: role.metadata.uid,
          },
        ];
        await client.request('POST', '/api/v1/namespaces', {
          body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `${ns}-owned`, ownerReferences } },
        });
        await client.request('POST', `/api/v1/namespaces/${ns}-owned/persistentvolumeclaims`, {
          body: {
            apiVersion: 'v1',
            kind: 'PersistentVolumeClaim',
            metadata: { name: 'data', namespace: `${ns}-owned` },
            spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
          },
        });
      },
      head: () => ({ 'role.yaml': null }),
      target: (ns) => ({ subject: `Namespace/${ns}-owned`, path: `/api/v1/namespaces/${ns}-owned` }),
      extra: (ns) => [`/api/v1/namespaces/${ns}-owned`, `/apis/rbac.authorization.k8s.io/v1/clusterroles/${ns}-owner`],
    },
  },
];

let client: ClusterClient;

describe('deletions by the garbage collector and the StatefulSet controller (bundled action)', () => {
  let fake: FakeGitHub;
  let kubeconfig: string;
  beforeAll(async () => {
    client = await adminClient();
    kubeconfig = await readFile(kubeconfigPath(), 'utf8');
    fake = await startFakeGitHub({
      tokens: { 'tok-rw': { pull_requests: 'write', checks: 'write', contents: 'read' } },
    });
  });
  afterAll(async () => {
    client.close();
    await fake.close();
  });

  const uidOf = async (path: string) =>
    client.request<{ metadata: { uid: string; deletionTimestamp?: string } }>('GET', path).then(
      (o) => (o.metadata.deletionTimestamp ? 'terminating' : o.metadata.uid),
      () => 'gone',
    );

  it.each(CASES.map((c, i) => [c.id, c, i] as const))('%s', async (id, c, index) => {
    const cleanups: string[] = [];
    await attackCase(
      { id, title: c.title },
      async (evidence, result) => {
        const ns = await freshNamespace(client, 'imp');
        cleanups.push(`/api/v1/namespaces/${ns}`, ...(c.setup.extra?.(ns) ?? []));
        const files = Object.fromEntries(
          Object.entries(c.setup.base).map(([k, v]) => [`app/${k}`, v.replaceAll('NS', ns)]),
        );
        const root = await writeTree({
          'ks.yaml': kustomizationYaml({ name: 'app', namespace: ns, prune: true }),
          ...files,
        });
        const push = (n: number) => ({
          env: { ...repoEnv(fake), GITHUB_EVENT_NAME: 'push', GITHUB_SHA: `c47${String(index)}${n}${'0'.repeat(35)}` },
          event: { name: 'push', payload: {} },
        });
        const first = await runAction(root, gateInputs(kubeconfig), push(1));
        if (first.code !== 0) throw new Error(`the base apply failed: ${first.stdout}`);
        await c.setup.prepare?.(ns);
        const target = c.setup.target(ns);
        const before = await uidOf(target.path);
        if (before === 'gone' || before === 'terminating') throw new Error(`${target.subject} is not live: ${before}`);
        for (const [file, text] of Object.entries(await c.setup.head(ns, uidOf))) {
          if (text === null) await rm(join(root, 'app', file));
          else await writeFile(join(root, 'app', file), text);
        }
        // The preview of the pull request: the object is a would-delete, by whom, and needs the label.
        const preview = await runAction(
          root,
          { ...gateInputs(kubeconfig), mode: 'preview' },
          {
            env: repoEnv(fake),
            event: prEvent(),
          },
        );
        result['previewExitCode'] = preview.code;
        const report = JSON.parse(preview.outputs['report'] ?? '{}') as {
          pruned?: { subject: string; action: string; by?: string; reason?: string }[];
          kustomizations?: { pruned?: { subject: string; action: string; by?: string }[] }[];
          approval?: { objects: string[] };
        };
        const pruned = [...(report.pruned ?? []), ...(report.kustomizations ?? []).flatMap((k) => k.pruned ?? [])];
        const listed = pruned.find((p) => p.subject === target.subject && p.action === 'deleted' && p.by);
        result['previewListed'] = listed ?? null;
        if (listed === undefined)
          result['previewLog'] = preview.stdout.split('\n').filter((l) => !l.startsWith('::add-mask::'));
        if (listed === undefined) evidence.push(`the preview does not list ${target.subject} as deleted by Kubernetes`);
        if (!preview.summary.includes(target.subject)) evidence.push(`the job summary does not name ${target.subject}`);
        if (!(report.approval?.objects ?? []).some((o) => o.startsWith(target.subject)))
          evidence.push(`the preview does not say applying ${target.subject}'s deletion needs the label`);
        // The apply of the merged change, without a reviewer's yes: refused, nothing written.
        const run = await runAction(root, gateInputs(kubeconfig), push(2));
        result['applyExitCode'] = run.code;
        if (run.code === 0) evidence.push('the apply succeeded');
        if (!run.stdout.includes('refused to delete')) evidence.push('the apply did not say it refused the deletion');
        const after = await uidOf(target.path);
        if (after !== before) evidence.push(`${target.subject} changed: uid ${before} → ${after}`);
      },
      async () => {
        for (const path of cleanups) await client.request('DELETE', path).catch(() => undefined);
      },
    );
  });
});
