// Destructive changes need a reviewer's yes (destructive-approval-label, issue 37): a commit tries
// to give itself the yes. The bundled action applies on a push or a pull_request event, against the
// test cluster and the GitHub emulator (driven by real Octokit). Each case writes
// reports/attack/<case>.json; a case fails when its attack got through: the object it targets is
// deleted or recreated without a reviewer's label on a merged pull request.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { runAction } from '../helpers/action.js';
import { adminClient, freshNamespace, kubeconfigPath, writeTree } from '../helpers/cluster.js';
import { prEvent, repoEnv, startFakeGitHub, type FakeGitHub } from '../helpers/github-server.js';
import { attackCase } from '../helpers/hostile.js';
import { freeServiceIPs } from '../helpers/immutable-cases.js';
import { configMap, kustomizationYaml } from '../helpers/manifests.js';
import { gateInputs, LABEL, pvc, service } from '../helpers/destructive-gate.js';

describe('destructive changes that approve themselves (bundled action)', () => {
  let client: ClusterClient;
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

  const inputs = () => gateInputs(kubeconfig);
  const uid = async (path: string) =>
    client.request<{ metadata: { uid: string; deletionTimestamp?: string } }>('GET', path).then(
      (o) => (o.metadata.deletionTimestamp ? 'terminating' : o.metadata.uid),
      () => 'gone',
    );

  it('37a-destructive-annotation-in-the-commit', async () => {
    await attackCase(
      {
        id: '37a-destructive-annotation-in-the-commit',
        title:
          'a merged commit recreates a Service (force, a new clusterIP) and carries the approving annotation in its own manifest, its pull request unlabelled: refused, the Service keeps its uid',
      },
      async (evidence, result) => {
        const ns = await freshNamespace(client);
        const [a, b] = (await freeServiceIPs(client, 2)) as [string, string];
        const spec = 'force: true';
        const root = await writeTree({
          'ks.yaml': kustomizationYaml({ name: 'app', namespace: ns, prune: true, spec }),
          'app/svc.yaml': service(ns, a),
        });
        const sha = `a37a${'0'.repeat(30)}${ns.slice(-6)}`;
        fake.addPull({
          owner: 'org',
          repo: 'repo',
          head: { repo: 'org/repo', ref: 'recreate', sha: `b37a${'0'.repeat(30)}${ns.slice(-6)}` },
          merged: { commitSha: sha },
        });
        const env = { ...repoEnv(fake), GITHUB_SHA: sha, GITHUB_EVENT_NAME: 'push' };
        const first = await runAction(root, inputs(), { env, event: { name: 'push', payload: {} } });
        if (first.code !== 0) throw new Error(`the first apply failed: ${first.stdout}`);
        const path = `/api/v1/namespaces/${ns}/services/web`;
        const before = await uid(path);
        await writeFile(
          join(root, 'app/svc.yaml'),
          service(ns, b, ", annotations: {'kustomize-reconcile.dev/destructive': allowed}"),
        );
        const run = await runAction(root, inputs(), { env, event: { name: 'push', payload: {} } });
        result['exitCode'] = run.code;
        const after = await uid(path);
        if (after !== before)
          evidence.push(`the Service was recreated without a reviewer's yes (uid ${before} → ${after})`);
        if (run.code === 0) evidence.push('the apply succeeded');
        if (!run.stdout.includes('refused to delete and recreate it')) evidence.push('the run did not say it refused');
      },
    );
  });

  it('37b-destructive-label-on-an-open-pull-request', async () => {
    await attackCase(
      {
        id: '37b-destructive-label-on-an-open-pull-request',
        title:
          'an apply on a pull_request event whose (open, unmerged) pull request carries the label deletes a PersistentVolumeClaim: refused, the claim stays',
      },
      async (evidence, result) => {
        const ns = await freshNamespace(client);
        const root = await writeTree({
          'ks.yaml': kustomizationYaml({ name: 'app', namespace: ns, prune: true }),
          'app/objects.yaml': [pvc(ns), configMap(ns, 'one')].join('---\n'),
        });
        const push = { ...repoEnv(fake), GITHUB_EVENT_NAME: 'push' };
        const first = await runAction(root, inputs(), { env: push, event: { name: 'push', payload: {} } });
        if (first.code !== 0) throw new Error(`the first apply failed: ${first.stdout}`);
        fake.addPull({
          owner: 'org',
          repo: 'repo',
          number: 7,
          head: { repo: 'org/repo', ref: 'drop-claim', sha: 'head000000000000000000000000000000000bb' },
          labels: [LABEL],
        });
        const path = `/api/v1/namespaces/${ns}/persistentvolumeclaims/data`;
        const before = await uid(path);
        await writeFile(join(root, 'app/objects.yaml'), configMap(ns, 'one'));
        const run = await runAction(root, inputs(), { env: repoEnv(fake), event: prEvent() });
        result['exitCode'] = run.code;
        const after = await uid(path);
        if (after !== before) evidence.push(`the claim was deleted on an unmerged pull request's label (${after})`);
        if (!run.stdout.includes('the run is for a pull request that is not merged'))
          evidence.push('the run did not say why it had no yes');
      },
    );
  });
});
