/**
 * What the workflow run says about itself: repository, event, the commit to report on and the pull
 * request, from GitHub's environment variables and event payload. Pure: the caller reads the files
 * (and asks GitHub's API for the pull request of a workflow_run, with choosePull's rule).
 */
export interface GitHubContext {
  /** REST API base URL (GITHUB_API_URL; GitHub Enterprise Server differs). */
  apiUrl: string;
  owner: string;
  repo: string;
  eventName: string;
  /**
   * The commit a check run belongs to: the PR's head commit, not the merge commit GITHUB_SHA names;
   * for a workflow_run, the triggering run's head commit (workflow_run.head_sha), never GITHUB_SHA
   * (the default branch's).
   */
  headSha?: string;
  /**
   * The pull request of a pull_request or pull_request_target event; of a workflow_run triggered by
   * a pull_request, when the payload's pull_requests names exactly one (GitHub leaves that list empty
   * for a fork's: the caller then looks it up, see `workflowRun`).
   */
  pullNumber?: number;
  /** A pull request from a fork: GITHUB_TOKEN is read-only there. */
  fork: boolean;
  runUrl?: string;
  /** A workflow_run event: the run that triggered this one. */
  workflowRun?: TriggeringRun;
}

/** The run a workflow_run event is about, from the payload (GitHub's, not the triggering run's files). */
export interface TriggeringRun {
  /** Its event: only a pull_request run has a pull request to comment on. */
  event: string;
  id?: number;
  /** Its head commit, branch and repository (`owner/name`; the fork, for a fork's pull request). */
  headSha?: string;
  headBranch?: string;
  headRepository?: string;
  conclusion?: string;
  /** Why no pull request can be told from the payload alone, when none is (pullNumber unset). */
  unresolved?: string;
}

/** A pull request as GitHub's API lists it (the fields choosePull reads). */
export interface PullCandidate {
  number: number;
  state?: string;
  head: { sha: string; repo: { full_name: string } | null };
  base: { repo: { full_name: string } };
}

type Repo = {
  id?: number;
  name?: string;
  full_name?: string;
  url?: string;
  owner?: { login?: string } | null;
} | null;

type Payload = {
  pull_request?: { number?: number; head?: { sha?: string; repo?: { full_name?: string } | null } };
  repository?: Repo;
  workflow_run?: {
    id?: number;
    event?: string;
    head_sha?: string;
    head_branch?: string | null;
    head_repository?: Repo;
    conclusion?: string | null;
    pull_requests?: { number?: number; head?: { sha?: string }; base?: { repo?: Repo } }[] | null;
  };
};

/** The context, or undefined outside GitHub Actions (no GITHUB_REPOSITORY). */
export function githubContext(env: NodeJS.ProcessEnv, payload: unknown): GitHubContext | undefined {
  const full = env['GITHUB_REPOSITORY'];
  const slash = full?.indexOf('/') ?? -1;
  if (!full || slash <= 0) return undefined;
  const event = (typeof payload === 'object' && payload !== null ? payload : {}) as Payload;
  const eventName = env['GITHUB_EVENT_NAME'] ?? '';
  const server = env['GITHUB_SERVER_URL'] || 'https://github.com';
  const runId = env['GITHUB_RUN_ID'];
  const apiUrl = (env['GITHUB_API_URL'] || 'https://api.github.com').replace(/\/$/, '');
  const base = {
    apiUrl,
    owner: full.slice(0, slash),
    repo: full.slice(slash + 1),
    eventName,
    ...(runId ? { runUrl: `${server}/${full}/actions/runs/${runId}` } : {}),
  };
  if (eventName === 'workflow_run') return { ...base, fork: false, ...fromWorkflowRun(event, full, apiUrl) };
  const pr = event.pull_request;
  const headSha = str(pr?.head?.sha) ?? env['GITHUB_SHA'];
  const headRepo = pr?.head?.repo?.full_name;
  return {
    ...base,
    ...(headSha ? { headSha } : {}),
    ...(typeof pr?.number === 'number' ? { pullNumber: pr.number } : {}),
    // pull_request_target runs with the base repository's token, which can write.
    fork: pr !== undefined && eventName === 'pull_request' && headRepo !== undefined && headRepo !== full,
  };
}

/**
 * A workflow_run's commit and pull request. The pull request is one the payload names only when it
 * is of this repository (its base) and its head commit is exactly the run's; GitHub fills that list
 * for a pull request of the same repository only.
 */
function fromWorkflowRun(
  event: Payload,
  full: string,
  apiUrl: string,
): Pick<GitHubContext, 'headSha' | 'pullNumber' | 'workflowRun'> {
  const run = event.workflow_run ?? {};
  const headSha = str(run.head_sha);
  const headRepository = repoName(run.head_repository);
  const origin: TriggeringRun = {
    event: str(run.event) ?? '',
    ...(typeof run.id === 'number' ? { id: run.id } : {}),
    ...(headSha ? { headSha } : {}),
    ...(str(run.head_branch) ? { headBranch: run.head_branch! } : {}),
    ...(headRepository ? { headRepository } : {}),
    ...(str(run.conclusion) ? { conclusion: run.conclusion! } : {}),
  };
  const out = { ...(headSha ? { headSha } : {}), workflowRun: origin };
  if (origin.event !== 'pull_request' || !headSha) return out;
  const self = event.repository;
  const ours = (r: Repo | undefined): boolean =>
    (typeof r?.id === 'number' && typeof self?.id === 'number' && r.id === self.id) ||
    (typeof r?.url === 'string' && same(r.url, `${apiUrl}/repos/${full}`)) ||
    (typeof r?.full_name === 'string' && same(r.full_name, full));
  const named = (run.pull_requests ?? []).filter(
    (p) => typeof p.number === 'number' && p.head?.sha === headSha && ours(p.base?.repo),
  );
  const numbers = [...new Set(named.map((p) => p.number!))];
  if (numbers.length === 1) return { ...out, pullNumber: numbers[0]! };
  if (numbers.length > 1) {
    origin.unresolved = `The workflow_run payload names ${numbers.length} pull requests of ${full} with the head commit ${headSha} (${numbers.map((n) => `#${n}`).join(', ')})`;
  }
  return out;
}

/**
 * The pull request a workflow_run triggered by a pull_request run is for, among those GitHub's API
 * listed: open, of this repository (`full`, its base), its head repository the run's and its head
 * commit exactly the run's. Nothing the triggering run wrote (its report files) takes part. Exactly
 * one, or why not.
 */
export function choosePull(
  run: TriggeringRun,
  full: string,
  listed: readonly PullCandidate[],
): { number: number } | { refused: string } {
  const sha = run.headSha?.toLowerCase();
  const head = run.headRepository;
  if (!sha || !head) {
    return { refused: `The workflow_run payload names no ${!sha ? 'head_sha' : 'head_repository'}` };
  }
  const found = listed.filter(
    (p) =>
      (p.state === undefined || p.state === 'open') &&
      Number.isInteger(p.number) &&
      p.number > 0 &&
      p.head.sha.toLowerCase() === sha &&
      p.head.repo !== null &&
      same(p.head.repo.full_name, head) &&
      same(p.base.repo.full_name, full),
  );
  const numbers = [...new Set(found.map((p) => p.number))].sort((a, b) => a - b);
  if (numbers.length === 1) return { number: numbers[0]! };
  if (numbers.length === 0) {
    return {
      refused:
        `No open pull request of ${full} has the head commit ${run.headSha} from ${head}${run.headBranch ? ` (branch ${run.headBranch})` : ''}: ` +
        'it was closed, or has a newer commit since (whose own run posts then)',
    };
  }
  return {
    refused: `${numbers.length} open pull requests of ${full} have the head commit ${run.headSha} (${numbers.map((n) => `#${n}`).join(', ')}): not choosing one`,
  };
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
const repoName = (r: Repo | undefined): string | undefined => {
  const owner = str(r?.owner?.login);
  const name = str(r?.name);
  return str(r?.full_name) ?? (owner && name ? `${owner}/${name}` : undefined);
};

/**
 * The permission a 403 names, as a `permissions:` line: GitHub sends the permissions the endpoint
 * accepts in x-accepted-github-permissions (`pull_requests=write; issues=write`); the first one is
 * what to grant.
 */
export function missingPermission(header: string | undefined, fallback: string): string {
  const first = header
    ?.split(';')
    .map((p) => p.trim())
    .find((p) => p.includes('='));
  if (!first) return fallback;
  const [name = '', level = ''] = first.split('=');
  const named = `${name.replace(/_/g, '-')}: ${level}`;
  // A read refused on the way to a write (listing comments before updating one): the write is what to grant.
  return named.split(':')[0] === fallback.split(':')[0] ? fallback : named;
}
