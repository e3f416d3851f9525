/**
 * What the workflow run says about itself: repository, event, the commit to report on and the pull
 * request, from GitHub's environment variables and event payload. Pure: the caller reads the files.
 */
export interface GitHubContext {
  /** REST API base URL (GITHUB_API_URL; GitHub Enterprise Server differs). */
  apiUrl: string;
  owner: string;
  repo: string;
  eventName: string;
  /** The commit a check run belongs to: the PR's head commit, not the merge commit GITHUB_SHA names. */
  headSha?: string;
  /** The pull request of a pull_request or pull_request_target event. */
  pullNumber?: number;
  /** A pull request from a fork: GITHUB_TOKEN is read-only there. */
  fork: boolean;
  runUrl?: string;
}

type Payload = {
  pull_request?: { number?: number; head?: { sha?: string; repo?: { full_name?: string } | null } };
  repository?: { full_name?: string };
};

/** The context, or undefined outside GitHub Actions (no GITHUB_REPOSITORY). */
export function githubContext(env: NodeJS.ProcessEnv, payload: unknown): GitHubContext | undefined {
  const full = env['GITHUB_REPOSITORY'];
  const slash = full?.indexOf('/') ?? -1;
  if (!full || slash <= 0) return undefined;
  const event = (typeof payload === 'object' && payload !== null ? payload : {}) as Payload;
  const pr = event.pull_request;
  const eventName = env['GITHUB_EVENT_NAME'] ?? '';
  const server = env['GITHUB_SERVER_URL'] || 'https://github.com';
  const runId = env['GITHUB_RUN_ID'];
  const headSha = pr?.head?.sha ?? env['GITHUB_SHA'];
  const headRepo = pr?.head?.repo?.full_name;
  return {
    apiUrl: (env['GITHUB_API_URL'] || 'https://api.github.com').replace(/\/$/, ''),
    owner: full.slice(0, slash),
    repo: full.slice(slash + 1),
    eventName,
    ...(headSha ? { headSha } : {}),
    ...(typeof pr?.number === 'number' ? { pullNumber: pr.number } : {}),
    // pull_request_target runs with the base repository's token, which can write.
    fork: pr !== undefined && eventName === 'pull_request' && headRepo !== undefined && headRepo !== full,
    ...(runId ? { runUrl: `${server}/${full}/actions/runs/${runId}` } : {}),
  };
}

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
