// The fork route (issue 33, item 6): a fork's pull_request run (read-only token) uploads report
// files; the base repository's workflow_run workflow (write token) merges them with the bundled action
// in mode: report and posts. The fork chooses its branch's name, the commit, and every byte of the
// report files. It tries to make the comment (or the check run) land on another pull request: a
// branch named like another pull request's, report files that name another pull request and commit,
// and its head set to another pull request's head commit. Each case writes reports/attack/<case>.json
// for scripts/attack-summary.mjs; a case fails when its attack got through.
//
// The rule the cases expect: the pull request comes from the event payload and GitHub's API only (the
// open pull request of this repository whose head repository is workflow_run.head_repository and
// whose head commit is exactly workflow_run.head_sha, listed by that repository's owner and branch);
// the check run goes on workflow_run.head_sha; nothing in a report file picks either.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commentMarker } from '../../src/report/comment.js';
import { runAction } from '../helpers/action.js';
import { writeTree } from '../helpers/cluster.js';
import { repoEnv, startFakeGitHub, workflowRunEvent, type FakeGitHub } from '../helpers/github-server.js';
import { attackCase } from '../helpers/hostile.js';
import { fileText, twoClusters } from '../helpers/report-files.js';

const KUSTOMIZATIONS = 'clusters/*/flux-system/*.yaml';
const MAIN_SHA = 'main000000000000000000000000000000000ee';
const sha = (c: string) => c.repeat(40);

/** The victims: a pull request of the base repository and one from alice's fork, both on branch `feature`. */
const VICTIMS = [
  { number: 20, repo: 'org/repo', sha: sha('a') },
  { number: 21, repo: 'alice/repo', sha: sha('b') },
];

interface Case {
  attack: string;
  title: string;
  /** mallory's pull request: its number and head commit. */
  number: number;
  headSha: string;
  /** What mallory's report files hold beyond the report (the fields of a file are mallory's). */
  forge?: (text: string) => string;
}

/**
 * A report file's own fields that could name a place to post (revision: the commit; runUrl and job:
 * the run), set to another pull request's: the victim's head commit and a run of its. (Fields a
 * report file does not have, such as a pull request number, are refused by the parser, so a claim
 * can only be made in these.)
 */
const claimVictim = (text: string): string => {
  const file = JSON.parse(text) as Record<string, unknown>;
  const v = VICTIMS[0]!;
  return JSON.stringify(
    { ...file, revision: v.sha, runUrl: `https://github.com/org/repo/pull/${v.number}`, job: `pull/${v.number}` },
    null,
    2,
  );
};

const CASES: Case[] = [
  {
    attack: 'fork-route-branch-name',
    title: "a fork's branch named like two other pull requests' branch (feature) takes their comment",
    number: 22,
    headSha: sha('c'),
  },
  {
    attack: 'fork-route-report-claims',
    title:
      'report files that name another pull request and its head commit (revision, pullNumber, pull_request, headSha)',
    number: 23,
    headSha: sha('d'),
    forge: claimVictim,
  },
  {
    attack: 'fork-route-same-commit',
    title: "a fork's head set to another pull request's head commit (pushed to its own branch feature)",
    number: 24,
    headSha: VICTIMS[1]!.sha,
    forge: claimVictim,
  },
];

describe('the fork route: the comment goes to the pull request whose head commit the run built', () => {
  let fake: FakeGitHub;
  beforeAll(async () => {
    fake = await startFakeGitHub({ tokens: { 'tok-rw': { pull_requests: 'write', checks: 'write' } } });
    for (const v of VICTIMS) {
      fake.addPull({
        owner: 'org',
        repo: 'repo',
        number: v.number,
        head: { repo: v.repo, ref: 'feature', sha: v.sha },
      });
    }
  });
  afterAll(async () => {
    await fake.close();
  });

  it.each(CASES)('$attack', async (c) => {
    /** The route itself not working (no attack needed for that): fails the case, not counted as the attack. */
    const broken: string[] = [];
    await attackCase({ id: c.attack, title: c.title }, async (evidence, result) => {
      Object.assign(result, { broken, log: '' });
      // mallory's fork, branch `feature` (the victims' branch name); one pull request per case.
      const mallory = `mallory${c.number}/repo`;
      fake.addPull({
        owner: 'org',
        repo: 'repo',
        number: c.number,
        head: { repo: mallory, ref: 'feature', sha: c.headSha },
      });
      const files = Object.fromEntries(
        Object.entries(twoClusters()).map(([name, r]) => {
          const text = fileText(r);
          return [`reports/${name}`, c.forge ? c.forge(text) : text];
        }),
      );
      const workspace = await writeTree(files);
      const comments = fake.comments.length;
      const checks = fake.checkRuns.length;
      const res = await runAction(
        workspace,
        { mode: 'report', reports: 'reports/*.json', kustomizations: KUSTOMIZATIONS, 'github-token': 'tok-rw' },
        {
          env: { ...repoEnv(fake), GITHUB_SHA: MAIN_SHA, GITHUB_REF: 'refs/heads/main' },
          event: workflowRunEvent({ headSha: c.headSha, headBranch: 'feature', headRepo: mallory }),
        },
      );
      result['log'] = (res.stdout + res.stderr).slice(0, 4000);
      const marker = commentMarker(KUSTOMIZATIONS);
      const posted = fake.comments.slice(comments).filter((x) => x.body.split('\n', 1)[0] === marker);
      for (const p of posted) {
        if (p.issue_number !== c.number) evidence.push(`the comment went to pull request #${p.issue_number}`);
      }
      if (!posted.some((p) => p.issue_number === c.number)) {
        broken.push(`no comment on mallory's own pull request #${c.number}`);
      }
      for (const r of fake.checkRuns.slice(checks)) {
        if (r.head_sha !== c.headSha) evidence.push(`a check run went to commit ${r.head_sha}, not the run's`);
      }
      if (fake.checkRuns.slice(checks).length !== 1) {
        broken.push(`${fake.checkRuns.slice(checks).length} check runs were created, not 1`);
      }
      if (res.code !== 0) broken.push(`the report step exited ${String(res.code)}`);
    });
    expect(broken, 'the route works').toEqual([]);
  });
});
