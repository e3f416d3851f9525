/**
 * The reviewer's yes for destructive changes (input destructive-approval-label): whether the merged
 * pull request of the pushed commit carries the label. Asked of GitHub's API ("List pull requests
 * associated with a commit"), never of the tree or the event payload of the push: a label is set by
 * someone with triage rights on the repository, and what the API says is what GitHub has now.
 */
import { Octokit } from '@octokit/core';
import type { GitHubContext } from './context.js';

/** A pull request as the API lists it, with the fields read here. */
export interface AssociatedPull {
  number: number;
  merged_at?: string | null;
  merge_commit_sha?: string | null;
  labels?: ({ name?: string } | string)[];
}

export interface Approval {
  approved: boolean;
  /** Why, in words that complete "destructive changes need a reviewer's yes, and …". */
  why: string;
}

const labelsOf = (p: AssociatedPull): string[] =>
  (p.labels ?? []).map((l) => (typeof l === 'string' ? l : (l.name ?? '')));

/**
 * The answer from the pull requests GitHub associates with commit `sha` (pure): only the merged one
 * whose merge commit it is (its merge, squash or last rebased commit); approved when it carries
 * `label` (GitHub compares label names without case). The API also lists pull requests that merely
 * contain the commit: an old, labelled pull request whose commits a direct push reuses, or one merged
 * into another branch, is not this commit's review.
 */
export function approvalFrom(pulls: readonly AssociatedPull[], sha: string, label: string): Approval {
  const merged = pulls.filter((p) => typeof p.merged_at === 'string' && p.merged_at !== '');
  const pull = merged.find(
    (p) => typeof p.merge_commit_sha === 'string' && p.merge_commit_sha.toLowerCase() === sha.toLowerCase(),
  );
  if (pull === undefined) {
    const short = sha.slice(0, 12);
    if (merged.length === 0)
      return { approved: false, why: `no merged pull request has commit ${short} (a direct push?)` };
    const others = merged.map((p) => `#${p.number}`).join(', ');
    return {
      approved: false,
      why: `no merged pull request has commit ${short} as its merge commit (${others} only contain${merged.length === 1 ? 's' : ''} it)`,
    };
  }
  const has = labelsOf(pull).some((l) => l.toLowerCase() === label.toLowerCase());
  return has
    ? { approved: true, why: `pull request #${pull.number} carries the label "${label}"` }
    : { approved: false, why: `pull request #${pull.number} does not carry the label "${label}"` };
}

/** Looks the answer up for commit `sha`; any failure of the API is a no, with the reason. */
export async function lookUpApproval(
  ctx: GitHubContext | undefined,
  token: string,
  sha: string | undefined,
  label: string,
): Promise<Approval> {
  if (ctx === undefined)
    return { approved: false, why: 'the run is not in GitHub Actions, so no pull request was looked up' };
  if (sha === undefined || sha === '')
    return { approved: false, why: 'GITHUB_SHA is not set, so no pull request was looked up' };
  if (token === '') return { approved: false, why: 'github-token is empty, so no pull request was looked up' };
  const octokit = new Octokit({
    auth: token,
    baseUrl: ctx.apiUrl,
    userAgent: 'kustomize-reconcile',
    log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
  });
  try {
    const res = await octokit.request('GET /repos/{owner}/{repo}/commits/{commit_sha}/pulls', {
      owner: ctx.owner,
      repo: ctx.repo,
      commit_sha: sha,
      per_page: 100,
    });
    return approvalFrom(res.data, sha, label);
  } catch (err) {
    const status = (err as { status?: number }).status;
    return {
      approved: false,
      why: `the pull requests of commit ${sha.slice(0, 12)} could not be read (${status === undefined ? (err as Error).message : `HTTP ${status}`}; the token needs pull-requests: read)`,
    };
  }
}
