// The documented route for pull requests from forks, end to end: the preview ran on the fork's
// pull_request event (read-only token) and uploaded its report files; a workflow_run workflow with a
// write token downloads them and runs the bundled action (dist/index.js) in mode: report. The comment
// must land on the pull request whose head commit is the triggering run's, the check run on that
// commit (workflow_run.head_sha), never on the base branch's (GITHUB_SHA). GitHub's REST API is the
// local emulation, driven by the action's real Octokit; the pull requests list it answers is the
// one the action searches, since GitHub leaves workflow_run.pull_requests empty for a fork.
import { Octokit } from '@octokit/core';
import { paginateRest } from '@octokit/plugin-paginate-rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commentMarker } from '../../src/report/comment.js';
import type { Report } from '../../src/report/model.js';
import { runAction, type ActionResult } from '../helpers/action.js';
import { writeTree } from '../helpers/cluster.js';
import { repoEnv, startFakeGitHub, workflowRunEvent, type FakeGitHub } from '../helpers/github-server.js';
import { fileText, twoClusters } from '../helpers/report-files.js';

const KUSTOMIZATIONS = 'clusters/*/flux-system/*.yaml';
/** GITHUB_SHA of a workflow_run run: the default branch's last commit, not the pull request's. */
const MAIN_SHA = 'main000000000000000000000000000000000ee';
const sha = (c: string) => c.repeat(40);

function reportTree(reports: Record<string, Report>): Record<string, string> {
  return Object.fromEntries(Object.entries(reports).map(([name, r]) => [`reports/${name}`, fileText(r)]));
}

describe('mode: report on a workflow_run event (the fork route)', () => {
  let fake: FakeGitHub;
  let workspace: string;
  beforeAll(async () => {
    fake = await startFakeGitHub({ tokens: { 'tok-rw': { pull_requests: 'write', checks: 'write' } } });
    workspace = await writeTree(reportTree(twoClusters()));
  });
  afterAll(async () => {
    await fake.close();
  });

  const report = (event: ReturnType<typeof workflowRunEvent>): Promise<ActionResult> =>
    runAction(
      workspace,
      { mode: 'report', reports: 'reports/*.json', kustomizations: KUSTOMIZATIONS, 'github-token': 'tok-rw' },
      { env: { ...repoEnv(fake), GITHUB_SHA: MAIN_SHA, GITHUB_REF: 'refs/heads/main' }, event },
    );
  const ours = (n: number) =>
    fake.comments.filter((c) => c.issue_number === n && c.body.split('\n', 1)[0] === commentMarker(KUSTOMIZATIONS));
  const checksOn = (s: string) => fake.checkRuns.filter((c) => c.head_sha === s);

  it('a fork pull request (pull_requests empty): the comment on that pull request, the check run on its head commit', async () => {
    // Another pull request is open too, from the base repository, on a branch of the same name.
    fake.addPull({ owner: 'org', repo: 'repo', number: 30, head: { repo: 'org/repo', ref: 'fix', sha: sha('1') } });
    fake.addPull({ owner: 'org', repo: 'repo', number: 31, head: { repo: 'someone/repo', ref: 'fix', sha: sha('2') } });
    const requests = fake.requests.length;
    const res = await report(workflowRunEvent({ headSha: sha('2'), headBranch: 'fix', headRepo: 'someone/repo' }));
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).not.toMatch(/^::warning::/m);
    expect(ours(31)).toHaveLength(1);
    expect(ours(30)).toHaveLength(0);
    expect(res.outputs['comment-url']).toBe(ours(31)[0]!.html_url);
    expect(checksOn(sha('2'))).toHaveLength(1);
    expect(checksOn(sha('2'))[0]).toMatchObject({
      name: `kustomize-reconcile preview: ${KUSTOMIZATIONS}`,
      html_url: res.outputs['check-run-url'],
    });
    expect(checksOn(MAIN_SHA)).toHaveLength(0);
    // Found by the fork owner's branch, not by a scan of every pull request.
    const listed = fake.requests.slice(requests).filter((r) => r.path === '/repos/org/repo/pulls');
    expect(listed.map((r) => new URLSearchParams(r.query).get('head'))).toEqual(['someone:fix']);
  });

  it('a pull request of the same repository: the payload names it, no lookup', async () => {
    fake.addPull({ owner: 'org', repo: 'repo', number: 40, head: { repo: 'org/repo', ref: 'feature', sha: sha('4') } });
    const requests = fake.requests.length;
    const res = await report(
      workflowRunEvent({
        headSha: sha('4'),
        headBranch: 'feature',
        headRepo: 'org/repo',
        pullRequests: [{ number: 40, headSha: sha('4'), headRef: 'feature' }],
      }),
    );
    expect(res.code).toBe(0);
    expect(ours(40)).toHaveLength(1);
    expect(checksOn(sha('4'))).toHaveLength(1);
    expect(fake.requests.slice(requests).filter((r) => r.path.endsWith('/pulls'))).toEqual([]);
  });

  it('a run triggered by a push: no comment (it says why), the check run on that run commit', async () => {
    const comments = fake.comments.length;
    const res = await report(
      workflowRunEvent({ event: 'push', headSha: sha('5'), headBranch: 'main', headRepo: 'org/repo' }),
    );
    expect(res.code).toBe(0);
    expect(fake.comments.length).toBe(comments);
    expect(res.stdout).toMatch(/^::warning::.*triggered by a push event, not a pull_request: no pull request/m);
    expect(checksOn(sha('5'))).toHaveLength(1);
  });

  it('the pull request moved on since the run: no comment on it, and the check run stays on the run commit', async () => {
    fake.addPull({ owner: 'org', repo: 'repo', number: 50, head: { repo: 'other/repo', ref: 'wip', sha: sha('7') } });
    const comments = fake.comments.length;
    const res = await report(workflowRunEvent({ headSha: sha('6'), headBranch: 'wip', headRepo: 'other/repo' }));
    expect(res.code).toBe(0);
    expect(fake.comments.length).toBe(comments);
    expect(res.stdout).toMatch(/^::warning::No open pull request of org\/repo has the head commit 6{40}/m);
    expect(checksOn(sha('6'))).toHaveLength(1);
  });

  it("a fork's branch name in the warning is text in the job summary, not a mention", async () => {
    const res = await report(
      workflowRunEvent({ headSha: sha('8'), headBranch: '@octocat_#12_approved', headRepo: 'other/repo' }),
    );
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^::warning::No open pull request .*branch @octocat_#12_approved/m);
    const warning = res.summary.split('\n').find((l) => l.includes('No open pull request'));
    expect(warning).toBeDefined();
    // A word joiner after @ and # (no mention, no issue link); _ escaped where it could start emphasis.
    expect(warning).toContain('branch @\u2060octocat\\_#\u206012_approved');
    expect(warning).not.toMatch(/@octocat/);
  });

  it('two open pull requests with that head commit: refuses to choose, names both', async () => {
    // Both from dup/repo's branch x, into two base branches.
    const fromDup = (number: number, base: string) =>
      fake.addPull({
        owner: 'org',
        repo: 'repo',
        number,
        head: { repo: 'dup/repo', ref: 'x', sha: sha('8') },
        base: { ref: base },
      });
    fromDup(60, 'main');
    fromDup(61, 'release');
    const comments = fake.comments.length;
    const res = await report(workflowRunEvent({ headSha: sha('8'), headBranch: 'x', headRepo: 'dup/repo' }));
    expect(res.code).toBe(0);
    expect(fake.comments.length).toBe(comments);
    expect(res.stdout).toMatch(
      /^::warning::2 open pull requests of org\/repo have the head commit 8{40} \(#60, #61\)/m,
    );
  });
});

describe('fake GitHub: listing pull requests (Octokit)', () => {
  const Client = Octokit.plugin(paginateRest);
  let fake: FakeGitHub;
  let gh: InstanceType<typeof Client>;
  beforeAll(async () => {
    fake = await startFakeGitHub({
      tokens: { 'tok-r': { pull_requests: 'read' }, 'tok-checks': { checks: 'write' } },
    });
    gh = new Client({ auth: 'tok-r', baseUrl: fake.url });
    for (let i = 1; i <= 120; i++) {
      fake.addPull({
        owner: 'acme',
        repo: 'fleet',
        state: i % 10 === 0 ? 'closed' : 'open',
        head: { repo: i % 2 ? 'fan/fleet' : 'acme/fleet', ref: `b${i % 3}`, sha: sha(String(i % 10)) },
        created_at: new Date(Date.UTC(2025, 0, 1, 0, i)).toISOString(),
      });
    }
  });
  afterAll(async () => {
    await fake.close();
  });
  const list = (q: Record<string, string>) =>
    gh.paginate('GET /repos/{owner}/{repo}/pulls', { owner: 'acme', repo: 'fleet', per_page: 50, ...q });

  it('open by default, newest first, over pages with Link headers; head is owner:branch of the head repository', async () => {
    const open = await list({});
    expect(open).toHaveLength(108);
    expect(open[0]!.number).toBe(119);
    expect(open.every((p) => p.state === 'open')).toBe(true);
    const fan = await list({ head: 'fan:b1' });
    expect(fan.map((p) => p.number)).toEqual(
      open.filter((p) => p.number % 2 === 1 && p.number % 3 === 1).map((p) => p.number),
    );
    expect(fan[0]).toMatchObject({
      head: { label: 'fan:b1', ref: 'b1', repo: { full_name: 'fan/fleet', fork: true } },
      base: { ref: 'main', repo: { full_name: 'acme/fleet', fork: false } },
    });
    expect((await list({ state: 'all' })).length).toBe(120);
    expect((await list({ state: 'closed', head: 'acme:b0' })).map((p) => p.number)).toEqual([120, 90, 60, 30]);
  });

  it('a head without the owner is ignored, as GitHub ignores it', async () => {
    expect((await list({ head: 'b1' })).length).toBe(108);
  });

  it('needs pull_requests: read', async () => {
    const other = new Client({ auth: 'tok-checks', baseUrl: fake.url });
    await expect(
      other.request('GET /repos/{owner}/{repo}/pulls', { owner: 'acme', repo: 'fleet' }),
    ).rejects.toMatchObject({
      status: 403,
      response: { headers: { 'x-accepted-github-permissions': 'pull_requests=read' } },
    });
  });
});
