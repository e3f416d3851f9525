/**
 * The GitHub edge: the sticky PR comment and the check run, through Octokit. Rendering is pure
 * (src/report/comment.ts); here are only the requests and what their failures mean. Nothing here
 * fails a run: every problem becomes a warning that says what to change.
 */
import { Octokit } from '@octokit/core';
import { paginateRest } from '@octokit/plugin-paginate-rest';
import { RequestError } from '@octokit/request-error';
import type { Report } from '../report/model.js';
import {
  CHECK_TEXT_LIMIT,
  checkConclusion,
  commentMarker,
  renderCheckOutput,
  renderComment,
} from '../report/comment.js';
import { annotationBatches, checkAnnotations } from '../report/annotations.js';
import { choosePull, missingPermission, type GitHubContext, type TriggeringRun } from './context.js';

const Client = Octokit.plugin(paginateRest);
type Client = InstanceType<typeof Client>;

export interface PublishOptions {
  token: string;
  /** Post or update the sticky comment on the pull request (preview mode). */
  comment: boolean;
  /** Create a check run on the head commit. */
  checkRun: boolean;
  /** What identifies this set of Kustomizations: the sticky comment's marker and the check's name. */
  key: string;
  userAgent?: string;
}

export interface Published {
  commentUrl?: string;
  checkRunUrl?: string;
  /** Why something was not posted; each names the fix. */
  warnings: string[];
}

export async function publish(report: Report, ctx: GitHubContext, opts: PublishOptions): Promise<Published> {
  const out: Published = { warnings: [] };
  const octokit = new Client({
    auth: opts.token,
    baseUrl: ctx.apiUrl,
    userAgent: opts.userAgent ?? 'kustomize-reconcile',
    // Octokit logs every 4xx as a warning of its own; the warnings here say what to do instead.
    log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
  });
  if (ctx.fork && (opts.comment || opts.checkRun)) {
    out.warnings.push(
      'This pull request comes from a fork, where GITHUB_TOKEN is read-only: no comment or check run was posted, ' +
        'the preview is in the job summary. To comment on fork PRs, write it with report-file, upload it, and post it ' +
        'from a workflow_run workflow with mode: report (docs/reference/fork-pull-requests.md)',
    );
    return out;
  }
  if (opts.comment && report.mode === 'preview') {
    let pull = ctx.pullNumber;
    if (pull === undefined && ctx.workflowRun) {
      try {
        const found = await workflowRunPull(octokit, ctx, ctx.workflowRun);
        if ('number' in found) pull = found.number;
        else out.warnings.push(`${found.refused}: no pull request comment was posted`);
      } catch (err) {
        out.warnings.push(explain(err, 'the list of pull requests', 'pull-requests: write'));
      }
    }
    if (pull !== undefined) {
      try {
        out.commentUrl = await upsertComment(octokit, ctx, pull, report, opts.key);
      } catch (err) {
        out.warnings.push(explain(err, 'the pull request comment', 'pull-requests: write'));
      }
    }
  }
  if (opts.checkRun && !ctx.headSha && ctx.workflowRun) {
    out.warnings.push('The workflow_run payload names no head_sha: no check run was posted');
  }
  if (opts.checkRun && ctx.headSha) {
    try {
      out.checkRunUrl = await createCheckRun(octokit, ctx, ctx.headSha, report, opts.key);
    } catch (err) {
      out.warnings.push(explain(err, 'the check run', 'checks: write'));
    }
  }
  return out;
}

/**
 * The pull request of a workflow_run triggered by a pull_request run. GitHub names it in the payload
 * for a pull request of this repository only (githubContext took it from there); for a fork's, the
 * open pull requests of this repository from the run's head repository owner and branch are listed
 * and choosePull keeps the one whose head commit is exactly the run's. The branch's name is the
 * fork's to choose, so it only narrows the list: the head repository and commit decide.
 */
async function workflowRunPull(
  octokit: Client,
  ctx: GitHubContext,
  run: TriggeringRun,
): Promise<{ number: number } | { refused: string }> {
  if (run.event !== 'pull_request') {
    const what = run.event ? `a ${run.event} event` : 'an event the payload does not name';
    return { refused: `The run that triggered this workflow_run was triggered by ${what}, not a pull_request` };
  }
  if (run.unresolved) return { refused: `${run.unresolved}: not choosing one` };
  const owner = run.headRepository?.split('/')[0];
  if (!owner || !run.headBranch || !run.headSha) {
    const missing = !run.headSha ? 'head_sha' : !owner ? 'head_repository' : 'head_branch';
    return { refused: `The workflow_run payload names no ${missing}` };
  }
  const listed = await octokit.paginate('GET /repos/{owner}/{repo}/pulls', {
    owner: ctx.owner,
    repo: ctx.repo,
    state: 'open',
    head: `${owner}:${run.headBranch}`,
    per_page: 100,
  });
  return choosePull(run, `${ctx.owner}/${ctx.repo}`, listed);
}

/**
 * Finds our comment (its first line is the marker, and this token wrote it) and updates it, or creates
 * it; returns its URL.
 */
async function upsertComment(
  octokit: Client,
  ctx: GitHubContext,
  pull: number,
  report: Report,
  key: string,
): Promise<string> {
  const marker = commentMarker(key);
  const { body } = renderComment(report, { marker, ...(ctx.runUrl ? { runUrl: ctx.runUrl } : {}) });
  const repo = { owner: ctx.owner, repo: ctx.repo };
  const comments = await octokit.paginate('GET /repos/{owner}/{repo}/issues/{issue_number}/comments', {
    ...repo,
    issue_number: pull,
    per_page: 100,
  });
  const marked = comments.filter((c) => c.body?.split('\n', 1)[0] === marker);
  // Anyone who can comment can write the marker: only a comment this token wrote is updated.
  const author = marked.length > 0 ? await tokenAuthor(octokit) : undefined;
  const mine = marked.find((c) => author !== undefined && wroteIt(author, c.user));
  if (mine) {
    const res = await octokit.request('PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}', {
      ...repo,
      comment_id: mine.id,
      body,
    });
    return res.data.html_url;
  }
  const res = await octokit.request('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', {
    ...repo,
    issue_number: pull,
    body,
  });
  return res.data.html_url;
}

/** Who this token writes comments as: a user's login, or an app's bot (GITHUB_TOKEN). */
type Author = { login: string } | { bot: true };

/**
 * A personal access token is a user, whom GET /user names; an app's installation token (GITHUB_TOKEN)
 * has no user (GitHub answers 403 "Resource not accessible by integration") and writes as its bot.
 * Undefined when it cannot be told: no comment is then taken for this run's.
 */
async function tokenAuthor(octokit: Client): Promise<Author | undefined> {
  try {
    const res = await octokit.request('GET /user');
    return { login: res.data.login };
  } catch (err) {
    const status = (err as { status?: unknown }).status;
    return status === 403 || status === 401 ? { bot: true } : undefined;
  }
}

/** Whether a comment's author is the token's identity: its user, or for an app's token a bot. */
function wroteIt(author: Author, user: { login?: string; type?: string } | null | undefined): boolean {
  if (!user) return false;
  return 'login' in author ? user.login === author.login : user.type === 'Bot';
}

/** Creates a completed check run; annotations beyond the first 50 follow in updates of 50 each. */
async function createCheckRun(
  octokit: Client,
  ctx: GitHubContext,
  sha: string,
  report: Report,
  key: string,
): Promise<string> {
  const output = checkOutput(report, ctx.runUrl);
  const batches = annotationBatches(checkAnnotations(report.problems ?? []));
  const repo = { owner: ctx.owner, repo: ctx.repo };
  const created = await octokit.request('POST /repos/{owner}/{repo}/check-runs', {
    ...repo,
    name: checkName(report, key),
    head_sha: sha,
    status: 'completed',
    conclusion: checkConclusion(report),
    ...(ctx.runUrl ? { details_url: ctx.runUrl } : {}),
    output: { ...output, ...(batches[0] ? { annotations: batches[0] } : {}) },
  });
  for (const batch of batches.slice(1)) {
    await octokit.request('PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}', {
      ...repo,
      check_run_id: created.data.id,
      output: { title: output.title, summary: output.summary, annotations: batch },
    });
  }
  return created.data.html_url ?? '';
}

/**
 * The check run's output within GitHub's limit, which is 65,535 characters and also 65,535 UTF-8
 * bytes for summary and text: non-ASCII text is rendered again with a smaller character budget.
 */
function checkOutput(report: Report, runUrl: string | undefined): ReturnType<typeof renderCheckOutput> {
  let limit = CHECK_TEXT_LIMIT;
  for (;;) {
    const out = renderCheckOutput(report, { ...(runUrl ? { runUrl } : {}), limit });
    const bytes = Math.max(Buffer.byteLength(out.summary), Buffer.byteLength(out.text));
    if (bytes <= CHECK_TEXT_LIMIT || limit < 1000) return out;
    limit = Math.floor((limit * CHECK_TEXT_LIMIT) / bytes) - 16;
  }
}

/**
 * The check's name: GitHub attaches a check run to the first workflow run of the commit, so a name
 * that says what it checks keeps it recognisable wherever it lands.
 */
export function checkName(report: Pick<Report, 'mode'>, key: string): string {
  const name = `kustomize-reconcile ${report.mode}: ${key}`;
  return name.length > 100 ? `${name.slice(0, 99)}…` : name;
}

function explain(err: unknown, what: string, permission: string): string {
  if (err instanceof RequestError) {
    const message = (err.response?.data as { message?: string } | undefined)?.message ?? err.message;
    if (err.status === 403 || err.status === 404) {
      const header = err.response?.headers['x-accepted-github-permissions'];
      const perm = missingPermission(typeof header === 'string' ? header : undefined, permission);
      return (
        `GitHub refused ${what} (${err.status} ${message}): the token needs "${perm}". ` +
        `Add it to the workflow's permissions: block (the report is in the job summary)`
      );
    }
    if (err.status === 401) return `GitHub refused ${what} (401 ${message}): check the github-token input`;
    return `GitHub refused ${what} (${err.status} ${message})`;
  }
  return `Could not post ${what}: ${(err as Error).message}`;
}
