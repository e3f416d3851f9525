// The GitHub surface end to end: the bundled dist/index.js under Node 24, in a runner-like
// environment with event payloads, against the real test cluster and a local emulation of GitHub's
// REST API (the only mock allowed: no machine here reaches github.com), driven by real Octokit.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { commentMarker } from '../../src/report/comment.js';
import { runAction } from '../helpers/action.js';
import { adminClient, freshNamespace, kubeconfigPath, writeTree } from '../helpers/cluster.js';
import { prEvent, repoEnv, startFakeGitHub, type FakeGitHub } from '../helpers/github-server.js';

const cm = (ns: string, name: string, value: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${ns}\ndata:\n  key: ${value}\n`;

describe('GitHub surface (dist/index.js, fake GitHub REST API)', () => {
  let client: ClusterClient;
  let fake: FakeGitHub;
  beforeAll(async () => {
    client = await adminClient();
    fake = await startFakeGitHub({
      tokens: {
        'tok-rw': { pull_requests: 'write', checks: 'write', contents: 'read' },
        'tok-checks-only': { checks: 'write', contents: 'read' },
        'tok-pat': { pull_requests: 'write', checks: 'write', contents: 'read' },
      },
      // A personal access token: its comments are the user ci-user's.
      users: { 'tok-pat': 'ci-user' },
    });
  });
  afterAll(async () => {
    client.close();
    await fake.close();
  });

  it('a preview creates one sticky comment and a neutral check run; a second preview updates the comment', async () => {
    const ns = await freshNamespace(client);
    const workspace = await writeTree({ 'deploy/cm.yaml': cm(ns, 'settings', 'one') });
    const inputs = { kubeconfig: kubeconfigPath(), path: 'deploy', mode: 'preview', 'github-token': 'tok-rw' };
    const before = fake.comments.length;
    const first = await runAction(workspace, inputs, { env: repoEnv(fake), event: prEvent() });
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const mine = fake.comments.slice(before);
    expect(mine).toHaveLength(1);
    const comment = mine[0]!;
    expect(comment.body).toContain(`ConfigMap/${ns}/settings`);
    expect(first.outputs['comment-url']).toBe(comment.html_url);
    const run = fake.checkRuns.find((c) => c.html_url === first.outputs['check-run-url']);
    expect(run).toMatchObject({
      head_sha: 'head000000000000000000000000000000000bb',
      status: 'completed',
      conclusion: 'neutral',
      details_url: 'https://github.example/org/repo/actions/runs/99',
    });
    // Nothing was written to the cluster.
    await expect(client.request('GET', `/api/v1/namespaces/${ns}/configmaps/settings`)).rejects.toThrow();

    // The PR changes: the same comment is updated in place, no second one appears.
    await writeFile(join(workspace, 'deploy/cm.yaml'), cm(ns, 'renamed', 'two'));
    const second = await runAction(workspace, inputs, { env: repoEnv(fake), event: prEvent() });
    expect(second.code).toBe(0);
    expect(fake.comments.slice(before)).toHaveLength(1);
    expect(fake.comments.slice(before)[0]!.body).toContain(`ConfigMap/${ns}/renamed`);
    expect(fake.comments.slice(before)[0]!.body).not.toContain(`ConfigMap/${ns}/settings`);
    expect(second.outputs['comment-url']).toBe(comment.html_url);
    expect(
      fake.requests.filter((r) => r.method === 'PATCH' && /\/issues\/comments\/\d+$/.test(r.path)).length,
    ).toBeGreaterThanOrEqual(1);
  });

  it.each([
    ["GITHUB_TOKEN (an app installation token: its comments are the bot's)", 'tok-rw', 'sticky-app'],
    ["a personal access token (its comments are its user's)", 'tok-pat', 'sticky-pat'],
  ])(
    'with %s, updates only a marked comment the token wrote, never one the PR author planted',
    async (_, token, path) => {
      const ns = await freshNamespace(client);
      const workspace = await writeTree({ [`${path}/cm.yaml`]: cm(ns, 'settings', 'one') });
      const inputs = { kubeconfig: kubeconfigPath(), path, mode: 'preview', 'github-token': token };
      const issue = { owner: 'org', repo: 'repo', issue: 7 };
      // The PR's author writes the marker first, then a reassuring text, hoping the action edits it.
      const planted = fake.addComment({
        ...issue,
        login: 'octocat',
        body: `${commentMarker(path)}\n✅ reviewed, nothing changes`,
      });
      const before = fake.comments.length;
      const first = await runAction(workspace, inputs, { env: repoEnv(fake), event: prEvent() });
      expect(first.code).toBe(0);
      const created = fake.comments.slice(before);
      expect(created).toHaveLength(1);
      expect(created[0]!.user.login).toBe(token === 'tok-pat' ? 'ci-user' : 'github-actions[bot]');
      expect(created[0]!.body).toContain(`ConfigMap/${ns}/settings`);
      expect(planted.body).toBe(`${commentMarker(path)}\n✅ reviewed, nothing changes`);
      // The next preview updates the action's own comment, still not the planted one.
      await writeFile(join(workspace, `${path}/cm.yaml`), cm(ns, 'renamed', 'two'));
      const second = await runAction(workspace, inputs, { env: repoEnv(fake), event: prEvent() });
      expect(second.code).toBe(0);
      expect(fake.comments.slice(before)).toHaveLength(1);
      expect(created[0]!.body).toContain(`ConfigMap/${ns}/renamed`);
      expect(planted.body).toBe(`${commentMarker(path)}\n✅ reviewed, nothing changes`);
      expect(second.outputs['comment-url']).toBe(created[0]!.html_url);
    },
  );

  it('a preview without a token warns in the log (::warning::), posts nothing, and still writes the summary', async () => {
    const ns = await freshNamespace(client);
    const workspace = await writeTree({ 'deploy/cm.yaml': cm(ns, 'settings', 'one') });
    const before = fake.requests.length;
    const res = await runAction(
      workspace,
      { kubeconfig: kubeconfigPath(), path: 'deploy', mode: 'preview', 'github-token': '' },
      { env: repoEnv(fake), event: prEvent() },
    );
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^::warning::No github-token: no PR comment or check run was posted/m);
    expect(fake.requests.slice(before)).toEqual([]);
    expect(res.summary).toContain(`ConfigMap/${ns}/settings`);
  });

  it('a push applies and reports a successful check run on GITHUB_SHA, without a comment', async () => {
    const ns = await freshNamespace(client);
    const workspace = await writeTree({ 'deploy/cm.yaml': cm(ns, 'settings', 'one') });
    const before = fake.comments.length;
    const res = await runAction(
      workspace,
      { kubeconfig: kubeconfigPath(), path: 'deploy', 'github-token': 'tok-rw' },
      { env: repoEnv(fake), event: { name: 'push', payload: { ref: 'refs/heads/main' } } },
    );
    expect(res.code).toBe(0);
    expect(res.outputs['created']).toBe('1');
    expect(res.outputs['revision']).toBe('merge0000000000000000000000000000000000aa');
    expect(fake.comments.length).toBe(before);
    const run = fake.checkRuns.find((c) => c.html_url === res.outputs['check-run-url']);
    expect(run).toMatchObject({ head_sha: 'merge0000000000000000000000000000000000aa', conclusion: 'success' });
    await client.request('GET', `/api/v1/namespaces/${ns}/configmaps/settings`);
  });

  it('annotates the source line of an object that failed, in a failed check run', async () => {
    const ns = await freshNamespace(client);
    const workspace = await writeTree({
      'deploy/kustomization.yaml': 'resources: [good.yaml, bad.yaml]\n',
      'deploy/good.yaml': cm(ns, 'good', 'one'),
      'deploy/bad.yaml': `# a comment first\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad\n  namespace: ${ns}\n  labels: {"bad key!": x}\n`,
    });
    const res = await runAction(
      workspace,
      { kubeconfig: kubeconfigPath(), path: 'deploy', 'github-token': 'tok-rw' },
      { env: repoEnv(fake), event: { name: 'push', payload: {} } },
    );
    expect(res.code).toBe(2);
    const run = fake.checkRuns.find((c) => c.html_url === res.outputs['check-run-url']);
    expect(run?.conclusion).toBe('failure');
    expect(run?.annotations).toEqual([
      expect.objectContaining({
        path: 'deploy/bad.yaml',
        start_line: 5,
        end_line: 5,
        annotation_level: 'failure',
        title: `ConfigMap/${ns}/bad`,
      }),
    ]);
  });

  it('sends more than 50 annotations in batches of 50', async () => {
    const ns = await freshNamespace(client);
    const bad = Array.from(
      { length: 60 },
      (_, i) =>
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad-${i}\n  namespace: ${ns}\n  labels: {"bad key!": x}\n`,
    ).join('---\n');
    const workspace = await writeTree({ 'deploy/bad.yaml': bad });
    const res = await runAction(
      workspace,
      { kubeconfig: kubeconfigPath(), path: 'deploy', 'github-token': 'tok-rw' },
      { env: repoEnv(fake), event: { name: 'push', payload: {} } },
    );
    expect(res.code).toBe(2);
    const run = fake.checkRuns.find((c) => c.html_url === res.outputs['check-run-url']);
    expect(run?.annotations).toHaveLength(60);
    expect(run?.output.annotations_count).toBe(60);
    // Each annotation points at its own object's name line in the one file.
    for (const a of run?.annotations ?? []) {
      const i = Number(/bad-(\d+)$/.exec(a.title ?? '')?.[1]);
      expect(a.start_line).toBe(7 * i + 4);
    }
    expect(fake.requests.filter((r) => r.method === 'PATCH' && r.path.endsWith(`/check-runs/${run?.id}`))).toHaveLength(
      1,
    );
  });

  it('degrades to the job summary and names the missing permission', async () => {
    const ns = await freshNamespace(client);
    const workspace = await writeTree({ 'deploy/cm.yaml': cm(ns, 'settings', 'one') });
    const before = fake.comments.length;
    const res = await runAction(
      workspace,
      { kubeconfig: kubeconfigPath(), path: 'deploy', mode: 'preview', 'github-token': 'tok-checks-only' },
      { env: repoEnv(fake), event: prEvent() },
    );
    expect(res.code).toBe(0);
    expect(fake.comments.length).toBe(before);
    expect(res.stdout).toMatch(/::warning::GitHub refused the pull request comment \(403 .*"pull-requests: write"/);
    expect(res.summary).toContain('pull-requests: write');
    expect(res.summary).toContain(`ConfigMap/${ns}/settings`);
    // The check run still went out: that permission is there.
    expect(res.outputs['check-run-url']).not.toBe('');
  });

  it('posts nothing for a fork pull request and says why', async () => {
    const ns = await freshNamespace(client);
    const workspace = await writeTree({ 'deploy/cm.yaml': cm(ns, 'settings', 'one') });
    const requests = fake.requests.length;
    const res = await runAction(
      workspace,
      { kubeconfig: kubeconfigPath(), path: 'deploy', mode: 'preview', 'github-token': 'tok-rw' },
      { env: repoEnv(fake), event: prEvent('someone/fork') },
    );
    expect(res.code).toBe(0);
    expect(fake.requests.length).toBe(requests);
    expect(res.stdout).toContain('This pull request comes from a fork');
    expect(res.summary).toContain('This pull request comes from a fork');
  });

  it('drift mode detects a kubectl edit, and corrects it when asked', async () => {
    const ns = await freshNamespace(client);
    const workspace = await writeTree({ 'deploy/cm.yaml': cm(ns, 'settings', 'from-git') });
    const env = repoEnv(fake);
    const schedule = { name: 'schedule', payload: { schedule: '0 * * * *' } };
    const base = { kubeconfig: kubeconfigPath(), path: 'deploy', 'github-token': 'tok-rw' };
    expect((await runAction(workspace, base, { env, event: { name: 'push', payload: {} } })).code).toBe(0);

    const clean = await runAction(workspace, { ...base, mode: 'drift' }, { env, event: schedule });
    expect(clean.code).toBe(0);
    expect(clean.outputs['drift-detected']).toBe('false');

    // What `kubectl edit` does: an update by another field manager.
    const path = `/api/v1/namespaces/${ns}/configmaps/settings`;
    await client.request('PATCH', path, {
      query: { fieldManager: 'kubectl-edit' },
      body: { data: { key: 'edited-by-hand' } },
      contentType: 'application/merge-patch+json',
    });

    const found = await runAction(workspace, { ...base, mode: 'drift' }, { env, event: schedule });
    expect(found.code).toBe(1);
    expect(found.outputs['drift-detected']).toBe('true');
    expect(found.outputs['configured']).toBe('1');
    expect(found.stdout).toContain('::error::drift found');
    const report = JSON.parse(found.outputs['report']!) as { changeset: { subject: string; diff?: unknown[] }[] };
    expect(report.changeset.find((e) => e.subject === `ConfigMap/${ns}/settings`)?.diff?.length).toBeGreaterThan(0);
    expect((await client.request<{ data: { key: string } }>('GET', path)).data.key).toBe('edited-by-hand');
    const neutral = fake.checkRuns.find((c) => c.html_url === found.outputs['check-run-url']);
    expect(neutral?.conclusion).toBe('neutral');

    const corrected = await runAction(
      workspace,
      { ...base, mode: 'drift', 'drift-correction': 'true' },
      { env, event: schedule },
    );
    expect(corrected.code).toBe(0);
    expect(corrected.outputs['drift-detected']).toBe('true');
    expect((await client.request<{ data: { key: string } }>('GET', path)).data.key).toBe('from-git');
  });
});
