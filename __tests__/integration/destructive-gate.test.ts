// Destructive changes need a reviewer's yes (destructive-approval-label): an apply that would delete
// or recreate a PVC, Service, Namespace, CRD or workload refuses before it writes anything, unless
// the merged pull request of the pushed commit carries the label (looked up in GitHub's API, here
// its emulator, with real Octokit) or the live object carries the approving annotation. A preview
// says which label it needs.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { lookUpApproval } from '../../src/github/approval.js';
import { githubContext } from '../../src/github/context.js';
import { renderComment } from '../../src/report/comment.js';
import type { Settings } from '../../src/options/settings.js';
import { runAction } from '../helpers/action.js';
import { adminClient, exists as existsAt, freshNamespace, kubeconfigPath, writeTree } from '../helpers/cluster.js';
import { prEvent, repoEnv, startFakeGitHub, type FakeGitHub } from '../helpers/github-server.js';
import { freeServiceIPs } from '../helpers/immutable-cases.js';
import { configMap, kustomizationYaml } from '../helpers/manifests.js';
import { reconcile, testSettings } from '../helpers/reconcile.js';
import { gateInputs, LABEL, pvc, service } from '../helpers/destructive-gate.js';

const cm = configMap;
const inputs = () => gateInputs(kubeconfigPath());

describe('destructive changes need a reviewer’s yes', () => {
  let client: ClusterClient;
  let fake: FakeGitHub;
  beforeAll(async () => {
    client = await adminClient();
    fake = await startFakeGitHub({
      tokens: { 'tok-rw': { pull_requests: 'write', checks: 'write', contents: 'read' }, 'tok-none': {} },
    });
  });
  afterAll(async () => {
    client.close();
    await fake.close();
  });

  const settingsFor = (root: string, ns: string, extra: Partial<Settings> = {}): Settings => ({
    ...testSettings(root, {
      lockLeaseMs: 3_000,
      run: { source: `test/${ns}`, holder: `test ${ns}` },
      destructiveApprovalLabel: LABEL,
    }),
    ...extra,
  });
  const run = (root: string, ns: string, extra: Partial<Settings> = {}) =>
    reconcile(settingsFor(root, ns, extra), { log: () => {}, secret: () => {} });
  const uidOf = async (path: string) =>
    (await client.request<{ metadata: { uid: string; deletionTimestamp?: string } }>('GET', path)).metadata;
  const exists = (path: string) => existsAt(client, path);

  async function withPvc() {
    const ns = await freshNamespace(client);
    const root = await writeTree({
      'ks.yaml': kustomizationYaml({ name: 'app', namespace: ns, prune: true }),
      'app/objects.yaml': [pvc(ns, 'data'), cm(ns, 'one')].join('---\n'),
    });
    const first = await run(root, ns);
    expect(first.ok, first.error).toBe(true);
    // The commit: the claim leaves Git, a ConfigMap comes.
    await writeFile(join(root, 'app/objects.yaml'), [cm(ns, 'one'), cm(ns, 'two')].join('---\n'));
    return { ns, root, pvcPath: `/api/v1/namespaces/${ns}/persistentvolumeclaims/data` };
  }

  it('a preview names the label an apply needs; the apply refuses before it writes anything', async () => {
    const { ns, root, pvcPath } = await withPvc();
    const before = await uidOf(pvcPath);
    const preview = await run(root, ns, { mode: 'preview' });
    expect(preview.ok, preview.error).toBe(true);
    expect(preview.kustomizations?.[0]?.approval ?? preview.approval).toEqual({
      label: LABEL,
      objects: [`PersistentVolumeClaim/${ns}/data`],
    });
    expect(renderComment(preview, { marker: '<!-- m -->' }).body).toContain(
      `Applying it needs a reviewer's yes (destructive-approval-label): the label "${LABEL}" on this pull request`,
    );

    const refused = await run(root, ns, { approval: { approved: false, why: 'pull request #3 does not carry it' } });
    expect(refused.ok).toBe(false);
    expect(refused.error).toContain(`refused to delete PersistentVolumeClaim/${ns}/data`);
    expect(refused.error).toContain('pull request #3 does not carry it');
    expect(refused.failure).toMatchObject({ stage: 'plan', userError: true });
    // Nothing was written: the new ConfigMap is not there, the claim is the same object.
    expect(await exists(`/api/v1/namespaces/${ns}/configmaps/two`)).toBe(false);
    expect((await uidOf(pvcPath)).uid).toBe(before.uid);
    expect((await uidOf(pvcPath)).deletionTimestamp).toBeUndefined();

    // A yes on the object: the annotation, set on the live claim.
    await client.request('PATCH', pvcPath, {
      body: { metadata: { annotations: { 'kustomize-reconcile.dev/destructive': 'allowed' } } },
      contentType: 'application/merge-patch+json',
    });
    const allowed = await run(root, ns);
    expect(allowed.ok, allowed.error).toBe(true);
    expect(allowed.pruned?.map((p) => `${p.subject} ${p.action}`)).toEqual([
      `PersistentVolumeClaim/${ns}/data deleted`,
    ]);
  });

  it('asks no yes for a deletion prune holds back (another build could not be read)', async () => {
    const ns = await freshNamespace(client);
    const ks = (name: string) => kustomizationYaml({ name, namespace: ns, path: `./${name}`, prune: true });
    const root = await writeTree({
      'ks.yaml': [ks('app'), ks('other')].join('---\n'),
      'app/objects.yaml': [pvc(ns, 'data'), cm(ns, 'one')].join('---\n'),
      'other/cm.yaml': cm(ns, 'other'),
    });
    expect((await run(root, ns)).ok).toBe(true);
    await writeFile(join(root, 'app/objects.yaml'), cm(ns, 'one'));
    await writeFile(join(root, 'other/kustomization.yaml'), 'resources: [missing.yaml]\n');
    const report = await run(root, ns);
    const app = report.kustomizations!.find((k) => k.kustomization === `${ns}/app`)!;
    expect(app.ok, app.error).toBe(true);
    expect(app.notes.join('\n')).toContain(`the build of Kustomization ${ns}/other`);
    expect(await exists(`/api/v1/namespaces/${ns}/persistentvolumeclaims/data`)).toBe(true);
  });

  it('the merged pull request’s label is the yes', async () => {
    const { ns, root } = await withPvc();
    const applied = await run(root, ns, { approval: { approved: true, why: 'pull request #4 carries it' } });
    expect(applied.ok, applied.error).toBe(true);
    expect(applied.counts.deleted).toBe(1);
  });

  it('refuses to recreate a Service for an immutable field, in its stage’s dry-run', async () => {
    const ns = await freshNamespace(client);
    const [a, b] = (await freeServiceIPs(client, 2)) as [string, string];
    const root = await writeTree({
      'ks.yaml': kustomizationYaml({ name: 'app', namespace: ns, prune: true, spec: 'force: true' }),
      'app/svc.yaml': service(ns, a),
    });
    expect((await run(root, ns)).ok).toBe(true);
    const svc = `/api/v1/namespaces/${ns}/services/web`;
    const before = (await uidOf(svc)).uid;
    // The commit approves itself with the annotation in Git: only the live object's counts.
    await writeFile(
      join(root, 'app/svc.yaml'),
      service(ns, b, ", annotations: {'kustomize-reconcile.dev/destructive': allowed}"),
    );
    const preview = await run(root, ns, { mode: 'preview' });
    expect(preview.kustomizations?.[0]?.approval?.objects ?? preview.approval?.objects).toEqual([`Service/${ns}/web`]);
    const refused = await run(root, ns);
    expect(refused.ok).toBe(false);
    expect(refused.error).toContain('refused to delete and recreate it for its immutable fields');
    expect((await uidOf(svc)).uid).toBe(before);
    const approved = await run(root, ns, { approval: { approved: true, why: 'yes' } });
    expect(approved.ok, approved.error).toBe(true);
    expect((await uidOf(svc)).uid).not.toBe(before);
  });

  it('an apply on a pull_request event never has the yes, whatever the pull request’s labels', async () => {
    const ns = await freshNamespace(client);
    const root = await writeTree({
      'ks.yaml': kustomizationYaml({ name: 'app', namespace: ns, prune: true }),
      'app/objects.yaml': [pvc(ns, 'data'), cm(ns, 'one')].join('---\n'),
    });
    const env = { ...repoEnv(fake), GITHUB_EVENT_NAME: 'push' };
    expect((await runAction(root, inputs(), { env })).code).toBe(0);
    // The pull request carries the label, but is not merged: its tree is not reviewed yet.
    fake.addPull({
      owner: 'org',
      repo: 'repo',
      number: 7,
      head: { repo: 'org/repo', ref: 'drop', sha: 'head000000000000000000000000000000000bb' },
      labels: [LABEL],
    });
    await writeFile(join(root, 'app/objects.yaml'), cm(ns, 'one'));
    const onPull = await runAction(root, inputs(), { env: repoEnv(fake), event: prEvent() });
    expect(onPull.code).toBe(2);
    expect(onPull.stdout).toContain('destructive-approval-label: the run is for a pull request that is not merged');
    expect(onPull.stdout).toContain(`refused to delete PersistentVolumeClaim/${ns}/data`);
    expect(await exists(`/api/v1/namespaces/${ns}/persistentvolumeclaims/data`)).toBe(true);
  });

  describe('the label, looked up through the API from the pushed commit', () => {
    const ctx = () => githubContext({ ...repoEnv(fake) }, {})!;
    it.each([
      ['merged with the label', { labels: [LABEL, 'other'] }, 'tok-rw', true, 'carries the label'],
      ['merged without it', { labels: ['other'] }, 'tok-rw', false, 'does not carry the label'],
      ['a token that may not read pull requests', { labels: [LABEL] }, 'tok-none', false, 'HTTP 403'],
    ])('%s', async (_, pull, token, approved, why) => {
      const sha = `${Math.random().toString(16).slice(2, 10).padEnd(8, '0')}${'0'.repeat(32)}`;
      const stored = fake.addPull({
        owner: 'org',
        repo: 'repo',
        head: { repo: 'org/repo', ref: 'feature', sha: `${'f'.repeat(32)}${sha.slice(0, 8)}` },
        merged: { commitSha: sha },
        labels: pull.labels,
      });
      const answer = await lookUpApproval(ctx(), token, sha, LABEL);
      expect(answer.approved).toBe(approved);
      expect(answer.why).toContain(why);
      if (approved) expect(answer.why).toContain(`#${stored.number}`);
    });

    it('a direct push has no pull request, so no yes', async () => {
      const answer = await lookUpApproval(ctx(), 'tok-rw', 'abcdef1234567890abcdef1234567890abcdef12', LABEL);
      expect(answer).toEqual({
        approved: false,
        why: 'no merged pull request has commit abcdef123456 (a direct push?)',
      });
    });

    it('the action looks it up on push and prunes with the yes, refuses without it', async () => {
      const ns = await freshNamespace(client);
      const root = await writeTree({
        'ks.yaml': kustomizationYaml({ name: 'app', namespace: ns, prune: true }),
        'app/objects.yaml': [pvc(ns, 'data'), cm(ns, 'one')].join('---\n'),
      });
      const pvcPath = `/api/v1/namespaces/${ns}/persistentvolumeclaims/data`;
      const sha = 'cafe0000000000000000000000000000000000' + ns.slice(-2);
      const pull = fake.addPull({
        owner: 'org',
        repo: 'repo',
        head: { repo: 'org/repo', ref: 'drop-pvc', sha: 'beef00000000000000000000000000000000' + ns.slice(-4) },
        merged: { commitSha: sha },
      });
      const env = { ...repoEnv(fake), GITHUB_SHA: sha, GITHUB_EVENT_NAME: 'push' };
      // The first push creates the claim: nothing is deleted, no yes is needed.
      const first = await runAction(root, inputs(), { env });
      expect(first.code, first.stdout + first.stderr).toBe(0);
      await writeFile(join(root, 'app/objects.yaml'), cm(ns, 'one'));
      const refused = await runAction(root, inputs(), { env });
      expect(refused.code).toBe(2);
      expect(refused.stdout).toContain(
        `destructive-approval-label: pull request #${pull.number} does not carry the label`,
      );
      expect(refused.stdout).toContain(`refused to delete PersistentVolumeClaim/${ns}/data`);
      expect(await exists(pvcPath)).toBe(true);
      expect((await uidOf(pvcPath)).deletionTimestamp).toBeUndefined();

      pull.labels.push(LABEL);
      const applied = await runAction(root, inputs(), { env });
      expect(applied.code, applied.stdout + applied.stderr).toBe(0);
      expect(applied.stdout).toContain(`destructive-approval-label: pull request #${pull.number} carries the label`);
    });
  });
});
