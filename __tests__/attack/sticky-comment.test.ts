// The sticky comment (issue 33): a pull request's author writes a comment whose first line is the
// action's marker, so that the preview is written into a comment the author can edit again after
// it; the bundled action in preview must post its own comment and leave the planted one alone.
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { commentMarker } from '../../src/report/comment.js';
import { runAction } from '../helpers/action.js';
import { adminClient, freshNamespace, kubeconfigPath, writeTree } from '../helpers/cluster.js';
import { prEvent, repoEnv, startFakeGitHub, type FakeGitHub } from '../helpers/github-server.js';
import { cm } from '../helpers/flux-trees.js';
import { attackCase } from '../helpers/hostile.js';

describe('a planted sticky comment', () => {
  let client: ClusterClient;
  let fake: FakeGitHub;
  beforeAll(async () => {
    client = await adminClient();
    fake = await startFakeGitHub({
      tokens: { 'tok-rw': { pull_requests: 'write', checks: 'write', contents: 'read' } },
    });
  });
  afterAll(async () => {
    client.close();
    await fake.close();
  });

  it('33-sticky-comment-planted', async () => {
    const title = "the PR author plants a comment with the action's marker, to be edited with the preview";
    await attackCase({ id: '33-sticky-comment-planted', title }, async (evidence, result) => {
      const ns = await freshNamespace(client, 'atk');
      const workspace = await writeTree({ 'deploy/cm.yaml': cm(ns, 'payments-db') });
      const text = `${commentMarker('deploy')}\n✅ kustomize-reconcile: nothing changes`;
      const planted = fake.addComment({ owner: 'org', repo: 'repo', issue: 7, login: 'octocat', body: text });
      const run = await runAction(
        workspace,
        { kubeconfig: kubeconfigPath(), path: 'deploy', mode: 'preview', 'github-token': 'tok-rw' },
        { env: repoEnv(fake), event: prEvent() },
      );
      result['exitCode'] = run.code;
      if (planted.body !== text) evidence.push("the action wrote its preview into the PR author's comment");
      const own = fake.comments.filter((c) => c.user.login === 'github-actions[bot]');
      if (own.length !== 1) evidence.push(`the action posted ${own.length} comment(s) of its own, not 1`);
      else if (!own[0]!.body.includes(`ConfigMap/${ns}/payments-db`))
        evidence.push("the action's own comment does not show the change");
    });
  });
});
