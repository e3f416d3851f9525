/**
 * Which GitHub events build a trusted tree, and which commit an untrusted tree's credentials are
 * compared with (pure; one row per event, unknown events untrusted).
 *
 * A tree is trusted when only someone who may already run the workflow's own code with its secrets
 * chose it, on the branch the workflow's filters allow: a push (its `branches:` filter), a schedule
 * and a repository_dispatch (both run on the default branch), a workflow_dispatch of the default
 * branch, a workflow_run that follows a push to the default branch of this repository. Every other
 * event is untrusted: the pull request events, where the tree is the pull request's; merge_group,
 * whose merge commit holds queued changes; issue_comment and the other workflow_runs, which run with
 * the base's secrets and commonly check out a pull request's head; a workflow_dispatch of another
 * branch (dispatch has no branch filter); and any event not listed.
 *
 * The base is a commit the author of the change did not write: a commit on the default branch. A
 * pull request's base commit when it targets the default branch, else its merge-base with the
 * default branch; for every other event the merge-base of the checked-out commit with the default
 * branch (trust-base.ts does the git), never a push's `before`, which the same pusher may have
 * written a minute earlier.
 */

/** How to find the base: `commit` (a commit name), and when `onBranch` is set, its merge-base with that branch. */
export interface BaseChoice {
  commit?: string;
  /** The default branch: the base is the merge-base of `commit` (else HEAD) with it. */
  onBranch?: string;
}

export interface EventRow {
  trusted: boolean | ((payload: Payload) => boolean);
  base: (payload: Payload) => BaseChoice;
}

/** The fields of an event payload read here (GitHub writes the payload; nothing in the tree does). */
export interface Payload {
  ref?: unknown;
  repository?: { default_branch?: unknown; full_name?: unknown };
  pull_request?: { base?: { sha?: unknown; ref?: unknown } };
  merge_group?: { base_sha?: unknown; base_ref?: unknown };
  workflow_run?: { event?: unknown; head_branch?: unknown; head_repository?: { full_name?: unknown } };
}

const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** The repository's default branch, as the payload names it. */
export const defaultBranchOf = (p: Payload): string | undefined => text(p.repository?.default_branch);

/** The merge-base of the checked-out commit with the default branch. */
const headOnDefault = (p: Payload): BaseChoice => {
  const branch = defaultBranchOf(p);
  return branch === undefined ? {} : { onBranch: branch };
};

/**
 * A base commit of a branch (`ref` as `main` or `refs/heads/main`): taken as it is when that branch
 * is the default one (or the payload names no default), else its merge-base with the default branch.
 */
const baseOf = (sha: unknown, ref: unknown, p: Payload): BaseChoice => {
  const commit = text(sha);
  const branch = defaultBranchOf(p);
  const target = text(ref)?.replace(/^refs\/heads\//, '');
  if (commit === undefined) return headOnDefault(p);
  if (branch === undefined || target === branch) return { commit };
  return { commit, onBranch: branch };
};

const pullRequest: EventRow = {
  trusted: false,
  base: (p) => baseOf(p.pull_request?.base?.sha, p.pull_request?.base?.ref, p),
};

const onDefaultBranch = (p: Payload): boolean => {
  const branch = defaultBranchOf(p);
  return branch !== undefined && text(p.ref) === `refs/heads/${branch}`;
};

/**
 * A workflow_run after a push to the default branch of this repository (the usual "deploy when CI
 * passed" chain): that tree is the push's. A fork's branch may be called main too: its repository
 * is not this one.
 */
const afterPushToDefault = (p: Payload): boolean => {
  const run = p.workflow_run;
  const branch = defaultBranchOf(p);
  const repo = text(p.repository?.full_name);
  return (
    branch !== undefined &&
    repo !== undefined &&
    run?.event === 'push' &&
    text(run.head_branch) === branch &&
    text(run.head_repository?.full_name) === repo
  );
};

/** Every event with a row; the rest are `UNKNOWN`. */
export const EVENT_TRUST: Readonly<Record<string, EventRow>> = {
  push: { trusted: true, base: headOnDefault },
  schedule: { trusted: true, base: headOnDefault },
  repository_dispatch: { trusted: true, base: headOnDefault },
  workflow_dispatch: { trusted: onDefaultBranch, base: headOnDefault },
  pull_request: pullRequest,
  pull_request_target: pullRequest,
  pull_request_review: pullRequest,
  pull_request_review_comment: pullRequest,
  merge_group: { trusted: false, base: (p) => baseOf(p.merge_group?.base_sha, p.merge_group?.base_ref, p) },
  issue_comment: { trusted: false, base: headOnDefault },
  workflow_run: { trusted: afterPushToDefault, base: headOnDefault },
};

/** Any event not in the table. */
export const UNKNOWN: EventRow = { trusted: false, base: headOnDefault };

/** The row of event `name` and whether it makes the tree trusted for this payload. */
export function eventTrust(name: string, payload: unknown): { trusted: boolean; base: BaseChoice } {
  const p = (typeof payload === 'object' && payload !== null ? payload : {}) as Payload;
  const row = Object.hasOwn(EVENT_TRUST, name) ? EVENT_TRUST[name]! : UNKNOWN;
  return { trusted: typeof row.trusted === 'function' ? row.trusted(p) : row.trusted, base: row.base(p) };
}
