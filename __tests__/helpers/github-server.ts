// A local emulation of the GitHub REST endpoints the action uses (issue comments on a pull request,
// check runs, the list of a repository's pull requests), for tests: nothing here can reach api.github.com. It answers the way GitHub does, as
// far as that is known: the same paths (also under /repositories/{id}, which GitHub's Link headers
// use), the same JSON shapes, the same pagination (per_page/page and a Link header), the same
// permission model for a GITHUB_TOKEN (403 "Resource not accessible by integration" with
// x-accepted-github-permissions), and the same validation errors, including where GitHub's real limits
// differ from what its documentation or its own error messages say (see the notes at each limit).
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type GitHubPermission = 'pull_requests' | 'checks' | 'contents' | 'issues';
export type GitHubAccess = 'read' | 'write';

export interface FakeGitHubOptions {
  /** token → permissions granted, e.g. { 'tok-rw': { pull_requests: 'write', checks: 'write', contents: 'read' } }. A request with an unknown token gets 401 {"message":"Bad credentials",...}. */
  tokens: Record<string, Partial<Record<GitHubPermission, GitHubAccess>>>;
  /** Page size cap the server uses when per_page is larger (GitHub caps at 100); default 100. */
  maxPerPage?: number;
  /**
   * token → login, for personal access tokens: comments they write are that user's, and GET /user
   * answers with the user. Other tokens are an app's installation token, as GITHUB_TOKEN is: their
   * comments are github-actions[bot]'s, and GET /user answers 403 "Resource not accessible by
   * integration", as GitHub does.
   */
  users?: Record<string, string>;
}

/**
 * An issue comment as the fake stores it: the fields of GitHub's issue-comment object (the API adds
 * the full user object, reactions and the like when it renders one), plus where it belongs.
 */
export interface StoredComment {
  id: number;
  node_id: string;
  url: string;
  html_url: string;
  issue_url: string;
  body: string;
  user: { login: string; id: number; type: string };
  created_at: string;
  updated_at: string;
  author_association: string;
  owner: string;
  repo: string;
  issue_number: number;
}

export interface StoredAnnotation {
  path: string;
  start_line: number;
  end_line: number;
  start_column: number | null;
  end_column: number | null;
  annotation_level: 'notice' | 'warning' | 'failure';
  message: string;
  title: string | null;
  raw_details: string | null;
}

/**
 * A check run as the fake stores it: the fields of GitHub's check-run object (output.annotations_count
 * follows `annotations`), plus where it belongs and every annotation it was given, the create's and
 * every update's, in order.
 */
export interface StoredCheckRun {
  id: number;
  node_id: string;
  url: string;
  html_url: string;
  head_sha: string;
  name: string;
  status: string;
  conclusion: string | null;
  started_at: string | null;
  completed_at: string | null;
  details_url: string | null;
  external_id: string | null;
  output: {
    title: string | null;
    summary: string | null;
    text: string | null;
    annotations_count: number;
    annotations_url: string;
  };
  check_suite: { id: number };
  owner: string;
  repo: string;
  annotations: StoredAnnotation[];
}

/**
 * A pull request as the fake stores it: what GitHub's pull-request object is made from, plus the
 * repository it belongs to (its base). `head.repo` is `owner/name`, or null once the head repository
 * (a fork) was deleted, as GitHub shows it then.
 */
export interface StoredPull {
  id: number;
  node_id: string;
  number: number;
  state: 'open' | 'closed';
  title: string;
  body: string | null;
  draft: boolean;
  /** The author, also the head's user. */
  user: string;
  created_at: string;
  updated_at: string;
  closed_at: string | null;
  merged_at: string | null;
  merge_commit_sha: string | null;
  owner: string;
  repo: string;
  head: { repo: string | null; ref: string; sha: string; user: string };
  base: { ref: string; sha: string };
  /** Label names; tests may change them (GitHub reads them at request time too). */
  labels: string[];
}

/** A pull request to add: `head.repo` is `owner/name` (a fork when not the base's), or null. */
export interface NewPull {
  owner: string;
  repo: string;
  /** Default: the repository's next number. */
  number?: number;
  state?: 'open' | 'closed';
  title?: string;
  draft?: boolean;
  head: { repo: string | null; ref: string; sha: string; user?: string };
  base?: { ref?: string; sha?: string };
  /** ISO time; default now. Also updated_at. */
  created_at?: string;
  labels?: string[];
  /** Merged (state closed): its merge commit on the base branch. */
  merged?: { commitSha: string; at?: string };
}

export interface FakeGitHubRequest {
  method: string;
  /** The URL path, without the query. */
  path: string;
  /** The query string including the leading '?', or ''. */
  query: string;
  status: number;
}

export interface FakeGitHub {
  /** Base URL, e.g. http://127.0.0.1:PORT (use as Octokit baseUrl and GITHUB_API_URL). */
  url: string;
  /** All issue comments, any repo, in creation order. */
  comments: StoredComment[];
  checkRuns: StoredCheckRun[];
  /** Pull requests, any repo, in the order they were added (addPull). */
  pulls: StoredPull[];
  /** Opens (or records closed) a pull request; GET /repos/{owner}/{repo}/pulls lists it. */
  addPull(p: NewPull): StoredPull;
  /** A comment that the user `login` wrote (in the web UI, say) on issue or pull request `issue`. */
  addComment(c: { owner: string; repo: string; issue: number; body: string; login: string }): StoredComment;
  /** Every request, in arrival order. */
  requests: FakeGitHubRequest[];
  /** Make the next matching request (path without query) fail once with this status and GitHub-shaped JSON body. */
  failNext(method: string, pathPattern: RegExp, status: number, message: string): void;
  close(): Promise<void>;
}

const DOCS = 'https://docs.github.com/rest';
const COMMENT_DOCS = `${DOCS}/issues/comments`;
const CHECK_DOCS = `${DOCS}/checks/runs`;
const PULL_DOCS = `${DOCS}/pulls/pulls`;

/**
 * GitHub enforces 262,144 UTF-8 bytes on an issue comment body (measured; 'a'.repeat(262144) and
 * '🌈'.repeat(65536) are accepted, one byte more is not), while its error message says "maximum is
 * 65536 characters". The fake does the same.
 */
export const COMMENT_BODY_MAX_BYTES = 262_144;
/** output.summary and output.text: at most 65535 characters (JSON schema) and at most 65535 UTF-8 bytes. */
export const CHECK_OUTPUT_MAX = 65_535;
export const ANNOTATIONS_PER_REQUEST = 50;

const BOT = {
  login: 'github-actions[bot]',
  id: 41898282,
  node_id: 'MDM6Qm90NDE4OTgyODI=',
  type: 'Bot',
};

const ACTIONS_APP = {
  id: 15368,
  slug: 'github-actions',
  node_id: 'MDM6QXBwMTUzNjg=',
  owner: {
    login: 'github',
    id: 9919,
    node_id: 'MDEyOk9yZ2FuaXphdGlvbjk5MTk=',
    avatar_url: 'https://avatars.githubusercontent.com/u/9919?v=4',
    gravatar_id: '',
    html_url: 'https://github.com/github',
    type: 'Organization',
    site_admin: false,
  },
  name: 'GitHub Actions',
  description: 'Automate your workflow from idea to production',
  external_url: 'https://help.github.com/en/actions',
  html_url: 'https://github.com/apps/github-actions',
  created_at: '2018-07-30T09:30:17Z',
  updated_at: '2019-12-10T19:04:12Z',
  permissions: {},
  events: [],
};

type Json = Record<string, unknown>;

/** An error answered as a GitHub error document. */
class ApiError extends Error {
  readonly status: number;
  readonly body: Json;
  constructor(status: number, body: Json) {
    super(typeof body['message'] === 'string' ? body['message'] : `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

function errorBody(status: number, message: string, doc: string, extra: Json = {}): Json {
  return { message, ...extra, documentation_url: doc, status: String(status) };
}

function notFound(doc: string): ApiError {
  return new ApiError(404, errorBody(404, 'Not Found', doc));
}

/** A JSON-schema failure: GitHub answers 422 "Invalid request.\n\n" followed by one line per problem. */
function invalidRequest(lines: string[], doc: string): ApiError {
  return new ApiError(422, errorBody(422, `Invalid request.\n\n${lines.join('\n')}`, doc));
}

interface FieldError {
  resource: string;
  code: string;
  field: string;
  message?: string;
}

/** A model validation failure: 422 "Validation Failed" with an errors array. */
function validationFailed(errors: FieldError[], doc: string): ApiError {
  return new ApiError(422, { message: 'Validation Failed', errors, documentation_url: doc, status: '422' });
}

/** A value the way GitHub's (Ruby) validator prints it in messages. */
function inspect(v: unknown): string {
  if (v === null || v === undefined) return 'nil';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[${v.map(inspect).join(', ')}]`;
  if (typeof v === 'object') {
    return `{${Object.entries(v)
      .map(([k, x]) => `${JSON.stringify(k)} => ${inspect(x)}`)
      .join(', ')}}`;
  }
  return typeof v === 'bigint' ? v.toString() : 'nil';
}

function notSupplied(names: string[]): string {
  const list = [...names]
    .sort()
    .map((n) => `"${n}"`)
    .join(', ');
  return `${list} ${names.length === 1 ? "wasn't" : "weren't"} supplied.`;
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Characters as JSON schema (and Ruby) count them: code points, not UTF-16 units. */
function codePoints(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

function timestamp(d: Date = new Date()): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function normalizeTime(v: string): string {
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? v : timestamp(d);
}

function requestId(): string {
  const h = (n: number) => randomBytes(n).toString('hex').toUpperCase();
  return `${h(2)}:${h(3)}:${h(3)}:${h(3)}:${h(4)}`;
}

/** Alternatives: any one of them grants access (write implies read). */
type Requirement = [GitHubPermission, GitHubAccess][];

interface Repo {
  id: number;
  owner: string;
  name: string;
}

interface Ctx {
  repo: Repo;
  /** The sub-route match, after /repos/{owner}/{repo}. */
  params: string[];
  query: URLSearchParams;
  /** The request path without query, as received. */
  path: string;
  input: Json;
  /** The request's token. */
  token: string;
}

interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

interface Route {
  method: string;
  pattern: RegExp;
  doc: string;
  needs: Requirement;
  hasBody?: boolean;
  handle: (ctx: Ctx) => Reply;
}

export async function startFakeGitHub(opts: FakeGitHubOptions): Promise<FakeGitHub> {
  const maxPerPage = opts.maxPerPage ?? 100;
  const comments: StoredComment[] = [];
  const checkRuns: StoredCheckRun[] = [];
  const pulls: StoredPull[] = [];
  const requests: FakeGitHubRequest[] = [];
  const faults: { method: string; pattern: RegExp; status: number; message: string }[] = [];
  const repos = new Map<string, Repo>();
  const used = new Map<string, number>();
  const resetAt = Math.floor(Date.now() / 1000) + 3600;
  let nextRepoId = 700_000_001;
  let nextCommentId = 2_100_000_001;
  let nextCheckRunId = 31_000_000_001;
  let nextSuiteId = 29_000_000_001;
  let nextPullId = 1_800_000_001;
  const suites = new Map<string, number>();
  let base = '';

  const repoFor = (owner: string, name: string): Repo => {
    const key = `${owner}/${name}`.toLowerCase();
    let r = repos.get(key);
    if (!r) {
      r = { id: nextRepoId++, owner, name };
      repos.set(key, r);
    }
    return r;
  };
  const repoById = (id: number): Repo | undefined => [...repos.values()].find((r) => r.id === id);
  const sameRepo = (r: Repo, owner: string, name: string) =>
    `${r.owner}/${r.name}`.toLowerCase() === `${owner}/${name}`.toLowerCase();
  const apiRepo = (r: Repo) => `${base}/repos/${r.owner}/${r.name}`;
  const splitFull = (full: string): [string, string] => {
    const i = full.indexOf('/');
    return [full.slice(0, i), full.slice(i + 1)];
  };

  const renderUser = () => ({
    login: BOT.login,
    id: BOT.id,
    node_id: BOT.node_id,
    avatar_url: 'https://avatars.githubusercontent.com/in/15368?v=4',
    gravatar_id: '',
    url: `${base}/users/github-actions%5Bbot%5D`,
    html_url: 'https://github.com/apps/github-actions',
    followers_url: `${base}/users/github-actions%5Bbot%5D/followers`,
    following_url: `${base}/users/github-actions%5Bbot%5D/following{/other_user}`,
    gists_url: `${base}/users/github-actions%5Bbot%5D/gists{/gist_id}`,
    starred_url: `${base}/users/github-actions%5Bbot%5D/starred{/owner}{/repo}`,
    subscriptions_url: `${base}/users/github-actions%5Bbot%5D/subscriptions`,
    organizations_url: `${base}/users/github-actions%5Bbot%5D/orgs`,
    repos_url: `${base}/users/github-actions%5Bbot%5D/repos`,
    events_url: `${base}/users/github-actions%5Bbot%5D/events{/privacy}`,
    received_events_url: `${base}/users/github-actions%5Bbot%5D/received_events`,
    type: BOT.type,
    user_view_type: 'public',
    site_admin: false,
  });

  /** A new comment by `login` (a user), or by github-actions[bot] without one. */
  const storeComment = (repo: Repo, issueNumber: number, body: string, login?: string): StoredComment => {
    const now = timestamp();
    const id = nextCommentId++;
    const api = apiRepo(repo);
    const c: StoredComment = {
      id,
      node_id: `IC_kwDO${Buffer.from(`${repo.id}:${id}`).toString('base64url')}`,
      url: `${api}/issues/comments/${id}`,
      html_url: `https://github.com/${repo.owner}/${repo.name}/pull/${issueNumber}#issuecomment-${id}`,
      issue_url: `${api}/issues/${issueNumber}`,
      body,
      user: login ? { login, id: accountId(login), type: 'User' } : { login: BOT.login, id: BOT.id, type: BOT.type },
      created_at: now,
      updated_at: now,
      author_association: login ? 'CONTRIBUTOR' : 'NONE',
      owner: repo.owner,
      repo: repo.name,
      issue_number: issueNumber,
    };
    comments.push(c);
    return c;
  };

  const renderComment = (c: StoredComment) => ({
    url: c.url,
    html_url: c.html_url,
    issue_url: c.issue_url,
    id: c.id,
    node_id: c.node_id,
    user: c.user.type === 'Bot' ? renderUser() : renderAccount(c.user.login),
    created_at: c.created_at,
    updated_at: c.updated_at,
    body: c.body,
    author_association: c.author_association,
    reactions: {
      url: `${c.url}/reactions`,
      total_count: 0,
      '+1': 0,
      '-1': 0,
      laugh: 0,
      hooray: 0,
      confused: 0,
      heart: 0,
      rocket: 0,
      eyes: 0,
    },
    performed_via_github_app: null,
  });

  const renderCheckRun = (r: StoredCheckRun) => ({
    id: r.id,
    name: r.name,
    node_id: r.node_id,
    head_sha: r.head_sha,
    external_id: r.external_id,
    url: r.url,
    html_url: r.html_url,
    details_url: r.details_url,
    status: r.status,
    conclusion: r.conclusion,
    started_at: r.started_at,
    completed_at: r.completed_at,
    output: { ...r.output, annotations_count: r.annotations.length },
    check_suite: { ...r.check_suite },
    app: ACTIONS_APP,
    pull_requests: [],
  });

  const renderAnnotation = (r: StoredCheckRun, a: StoredAnnotation) => ({
    path: a.path,
    blob_href: `https://github.com/${r.owner}/${r.repo}/blob/${r.head_sha}/${a.path}`,
    start_line: a.start_line,
    start_column: a.start_column,
    end_line: a.end_line,
    end_column: a.end_column,
    annotation_level: a.annotation_level,
    title: a.title,
    message: a.message,
    raw_details: a.raw_details,
  });

  /** A stable id per login (GitHub's are fixed per account). */
  const accountId = (login: string): number => {
    let n = 7;
    const lower = login.toLowerCase();
    for (let i = 0; i < lower.length; i++) n = (n * 31 + lower.charCodeAt(i)) % 9_000_000;
    return 1_000_000 + n;
  };

  // A user as pull requests show one (the head's, the base's and the author): a plain account.
  const renderAccount = (login: string) => {
    const url = `${base}/users/${login}`;
    return {
      login,
      id: accountId(login),
      node_id: `U_kgDO${Buffer.from(login.toLowerCase()).toString('base64url')}`,
      avatar_url: `https://avatars.githubusercontent.com/${login}?v=4`,
      gravatar_id: '',
      url,
      html_url: `https://github.com/${login}`,
      followers_url: `${url}/followers`,
      following_url: `${url}/following{/other_user}`,
      gists_url: `${url}/gists{/gist_id}`,
      starred_url: `${url}/starred{/owner}{/repo}`,
      subscriptions_url: `${url}/subscriptions`,
      organizations_url: `${url}/orgs`,
      repos_url: `${url}/repos`,
      events_url: `${url}/events{/privacy}`,
      received_events_url: `${url}/received_events`,
      type: 'User',
      user_view_type: 'public',
      site_admin: false,
    };
  };

  /** A repository as a pull request's head and base show it (GitHub's full repository object, abridged to what is stable). */
  const renderRepository = (r: Repo, fork: boolean) => {
    const api = apiRepo(r);
    return {
      id: r.id,
      node_id: `R_kgDO${Buffer.from(String(r.id)).toString('base64url')}`,
      name: r.name,
      full_name: `${r.owner}/${r.name}`,
      private: false,
      owner: renderAccount(r.owner),
      html_url: `https://github.com/${r.owner}/${r.name}`,
      description: null,
      fork,
      url: api,
      pulls_url: `${api}/pulls{/number}`,
      issues_url: `${api}/issues{/number}`,
      commits_url: `${api}/commits{/sha}`,
      git_url: `git://github.com/${r.owner}/${r.name}.git`,
      ssh_url: `git@github.com:${r.owner}/${r.name}.git`,
      clone_url: `https://github.com/${r.owner}/${r.name}.git`,
      visibility: 'public',
      default_branch: 'main',
    };
  };

  /** A pull request as GET /repos/{owner}/{repo}/pulls lists it ("Pull Request Simple"). */
  const renderPull = (p: StoredPull) => {
    const baseRepo = repoFor(p.owner, p.repo);
    const api = apiRepo(baseRepo);
    const html = `https://github.com/${p.owner}/${p.repo}/pull/${p.number}`;
    const headRepo = p.head.repo === null ? null : repoFor(...splitFull(p.head.repo));
    const url = `${api}/pulls/${p.number}`;
    return {
      url,
      id: p.id,
      node_id: p.node_id,
      html_url: html,
      diff_url: `${html}.diff`,
      patch_url: `${html}.patch`,
      issue_url: `${api}/issues/${p.number}`,
      commits_url: `${url}/commits`,
      review_comments_url: `${url}/comments`,
      review_comment_url: `${api}/pulls/comments{/number}`,
      comments_url: `${api}/issues/${p.number}/comments`,
      statuses_url: `${api}/statuses/${p.head.sha}`,
      number: p.number,
      state: p.state,
      locked: false,
      title: p.title,
      user: renderAccount(p.user),
      body: p.body,
      labels: p.labels.map((name, i) => ({
        id: p.id * 100 + i,
        node_id: `LA_${Buffer.from(`${p.id}:${name}`).toString('base64url')}`,
        url: `${api}/labels/${encodeURIComponent(name)}`,
        name,
        color: 'ededed',
        default: false,
        description: null,
      })),
      milestone: null,
      active_lock_reason: null,
      created_at: p.created_at,
      updated_at: p.updated_at,
      closed_at: p.closed_at,
      merged_at: p.merged_at,
      merge_commit_sha: p.merge_commit_sha,
      assignee: null,
      assignees: [],
      requested_reviewers: [],
      requested_teams: [],
      head: {
        // GitHub keeps the label (and user) of a deleted head repository's pull request.
        label: `${p.head.user}:${p.head.ref}`,
        ref: p.head.ref,
        sha: p.head.sha,
        user: renderAccount(p.head.user),
        repo: headRepo === null ? null : renderRepository(headRepo, headRepo.id !== baseRepo.id),
      },
      base: {
        label: `${p.owner}:${p.base.ref}`,
        ref: p.base.ref,
        sha: p.base.sha,
        user: renderAccount(p.owner),
        repo: renderRepository(baseRepo, false),
      },
      _links: {
        self: { href: url },
        html: { href: html },
        issue: { href: `${api}/issues/${p.number}` },
        comments: { href: `${api}/issues/${p.number}/comments` },
        review_comments: { href: `${url}/comments` },
        review_comment: { href: `${api}/pulls/comments{/number}` },
        commits: { href: `${url}/commits` },
        statuses: { href: `${api}/statuses/${p.head.sha}` },
      },
      author_association:
        p.head.repo !== null && sameRepo(baseRepo, ...splitFull(p.head.repo)) ? 'MEMBER' : 'CONTRIBUTOR',
      auto_merge: null,
      draft: p.draft,
    };
  };

  /** One page of `items`, with GitHub's Link header (rels in GitHub's order: prev, next, last, first). */
  const paginate = <T>(items: T[], ctx: Ctx): { page: T[]; headers: Record<string, string> } => {
    const asInt = (v: string | null) => (v !== null && /^\d+$/.test(v.trim()) ? Number(v.trim()) : NaN);
    const pp = asInt(ctx.query.get('per_page'));
    const perPage = Number.isNaN(pp) || pp < 1 ? 30 : Math.min(pp, maxPerPage);
    const p = asInt(ctx.query.get('page'));
    const page = Number.isNaN(p) || p < 1 ? 1 : p;
    const last = Math.max(1, Math.ceil(items.length / perPage));
    const slice = items.slice((page - 1) * perPage, page * perPage);
    // GitHub links the repository by id, keeps the other query parameters in their order and
    // replaces (or appends) page.
    const sub = ctx.path.replace(/^\/repos\/[^/]+\/[^/]+/, '').replace(/^\/repositories\/\d+/, '');
    const link = (n: number) => {
      const q = new URLSearchParams();
      let placed = false;
      for (const [k, v] of ctx.query) {
        if (k === 'page') {
          if (!placed) q.append('page', String(n));
          placed = true;
        } else {
          q.append(k, v);
        }
      }
      if (!placed) q.append('page', String(n));
      return `<${base}/repositories/${ctx.repo.id}${sub}?${q.toString()}>`;
    };
    const rels: string[] = [];
    if (page > 1) rels.push(`${link(page - 1)}; rel="prev"`);
    if (page < last) rels.push(`${link(page + 1)}; rel="next"`, `${link(last)}; rel="last"`);
    if (page > 1) rels.push(`${link(1)}; rel="first"`);
    return { page: slice, headers: rels.length ? { link: rels.join(', ') } : {} };
  };

  // --- issue comments ---------------------------------------------------------------------------

  const commentBody = (input: Json, doc: string): string => {
    if (!('body' in input)) throw invalidRequest([notSupplied(['body'])], doc);
    const body = input['body'];
    if (typeof body !== 'string')
      throw invalidRequest([`For 'properties/body', ${inspect(body)} is not a string.`], doc);
    if (body.trim() === '') {
      throw validationFailed(
        [{ resource: 'IssueComment', code: 'unprocessable', field: 'data', message: 'Body cannot be blank' }],
        doc,
      );
    }
    if (Buffer.byteLength(body, 'utf8') > COMMENT_BODY_MAX_BYTES) {
      throw validationFailed(
        [
          {
            resource: 'IssueComment',
            code: 'unprocessable',
            field: 'data',
            message: 'Body is too long (maximum is 65536 characters)',
          },
        ],
        doc,
      );
    }
    return body;
  };

  const findComment = (ctx: Ctx, doc: string): StoredComment => {
    const id = Number(ctx.params[0]);
    const c = comments.find((x) => x.id === id && sameRepo(ctx.repo, x.owner, x.repo));
    if (!c) throw notFound(doc);
    return c;
  };

  // --- check runs -------------------------------------------------------------------------------

  const CREATE_STATUSES = ['queued', 'in_progress', 'completed'];
  const UPDATE_STATUSES = ['queued', 'in_progress', 'completed', 'waiting', 'requested', 'pending'];
  const CONCLUSIONS = [
    'action_required',
    'cancelled',
    'failure',
    'neutral',
    'success',
    'skipped',
    'stale',
    'timed_out',
  ];
  const LEVELS = ['notice', 'warning', 'failure'];
  const ANNOTATION_REQUIRED = ['path', 'start_line', 'end_line', 'annotation_level', 'message'];

  /** Validates a create (update=false) or update body; returns the annotations it carries. */
  const validateCheckRun = (input: Json, update: boolean, doc: string): StoredAnnotation[] => {
    const lines: string[] = [];
    if (!update) {
      const missing = ['name', 'head_sha'].filter((k) => !(k in input));
      if (missing.length) lines.push(notSupplied(missing));
    }
    const str = (obj: Json, k: string) => {
      if (k in obj && typeof obj[k] !== 'string')
        lines.push(`For 'properties/${k}', ${inspect(obj[k])} is not a string.`);
    };
    const member = (obj: Json, k: string, allowed: string[]) => {
      if (k in obj && (typeof obj[k] !== 'string' || !allowed.includes(obj[k]))) {
        lines.push(`For 'properties/${k}', ${inspect(obj[k])} is not a member of ${inspect(allowed)}.`);
      }
    };
    for (const k of ['name', 'head_sha', 'details_url', 'external_id', 'started_at', 'completed_at']) str(input, k);
    member(input, 'status', update ? UPDATE_STATUSES : CREATE_STATUSES);
    member(input, 'conclusion', CONCLUSIONS);
    if (input['status'] === 'completed' && !('conclusion' in input)) {
      lines.push('No subschema in "anyOf" matched.', notSupplied(['conclusion']));
    }

    const annotations: StoredAnnotation[] = [];
    let invalidAnnotation = false;
    const tooManyBytes: string[] = [];
    if ('output' in input) {
      const out = input['output'];
      if (!isObject(out)) {
        lines.push(`For 'properties/output', ${inspect(out)} is not an object.`);
      } else {
        const missing = (update ? ['summary'] : ['title', 'summary']).filter((k) => !(k in out));
        if (missing.length) lines.push(notSupplied(missing));
        for (const k of ['title', 'summary', 'text']) str(out, k);
        for (const k of ['summary', 'text']) {
          const v = out[k];
          if (typeof v !== 'string') continue;
          const n = codePoints(v);
          if (n > CHECK_OUTPUT_MAX) lines.push(`Only ${CHECK_OUTPUT_MAX} characters are allowed; ${n} were supplied.`);
          else if (Buffer.byteLength(v, 'utf8') > CHECK_OUTPUT_MAX) tooManyBytes.push(k);
        }
        if ('annotations' in out) {
          const list = out['annotations'];
          if (!Array.isArray(list)) {
            lines.push(`For 'properties/annotations', ${inspect(list)} is not an array.`);
          } else {
            if (list.length > ANNOTATIONS_PER_REQUEST) {
              lines.push(`No more than ${ANNOTATIONS_PER_REQUEST} items are allowed; ${list.length} were supplied.`);
            }
            for (const a of list as unknown[]) {
              if (!isObject(a)) {
                lines.push(`For 'items', ${inspect(a)} is not an object.`);
                continue;
              }
              const absent = ANNOTATION_REQUIRED.filter((k) => !(k in a));
              if (absent.length) lines.push(notSupplied(absent));
              // GitHub answers a null field with "Validation Failed" (invalid annotations), not a schema error.
              if (ANNOTATION_REQUIRED.some((k) => k in a && a[k] === null)) {
                invalidAnnotation = true;
                continue;
              }
              for (const k of ['path', 'message', 'title', 'raw_details']) {
                if (k in a && a[k] !== null && typeof a[k] !== 'string') {
                  lines.push(`For 'properties/${k}', ${inspect(a[k])} is not a string.`);
                }
              }
              for (const k of ['start_line', 'end_line', 'start_column', 'end_column']) {
                if (k in a && a[k] !== null && !Number.isInteger(a[k])) {
                  lines.push(`For 'properties/${k}', ${inspect(a[k])} is not an integer.`);
                }
              }
              member(a, 'annotation_level', LEVELS);
              if (absent.length) continue;
              const start = a['start_line'] as number;
              const end = a['end_line'] as number;
              const hasColumns = a['start_column'] != null || a['end_column'] != null;
              // Columns are only supported on a single line; lines start at 1.
              if ((hasColumns && start !== end) || start < 1 || end < start) invalidAnnotation = true;
              annotations.push({
                path: a['path'] as string,
                start_line: start,
                end_line: end,
                start_column: (a['start_column'] as number | undefined) ?? null,
                end_column: (a['end_column'] as number | undefined) ?? null,
                annotation_level: a['annotation_level'] as StoredAnnotation['annotation_level'],
                message: a['message'] as string,
                title: (a['title'] as string | undefined) ?? null,
                raw_details: (a['raw_details'] as string | undefined) ?? null,
              });
            }
          }
        }
      }
    }
    if (lines.length) throw invalidRequest(lines, doc);

    const errors: FieldError[] = tooManyBytes.map((k) => ({
      resource: 'CheckRun',
      code: 'custom',
      field: k,
      message: `${k} exceeds a maximum bytesize of ${CHECK_OUTPUT_MAX}`,
    }));
    if (invalidAnnotation) errors.push({ resource: 'CheckRun', code: 'invalid', field: 'annotations' });
    // Not verified against GitHub (its documentation says a conclusion sets the status to completed).
    if ('conclusion' in input && 'status' in input && input['status'] !== 'completed') {
      errors.push({
        resource: 'CheckRun',
        code: 'invalid',
        field: 'status',
        message: `conclusion can only be given with status "completed", not ${inspect(input['status'])}`,
      });
    }
    if (errors.length) throw validationFailed(errors, doc);
    return annotations;
  };

  const findRun = (ctx: Ctx, doc: string): StoredCheckRun => {
    const id = Number(ctx.params[0]);
    const r = checkRuns.find((x) => x.id === id && sameRepo(ctx.repo, x.owner, x.repo));
    if (!r) throw notFound(doc);
    return r;
  };

  const COMMENTS_READ: Requirement = [
    ['pull_requests', 'read'],
    ['issues', 'read'],
  ];
  const COMMENTS_WRITE: Requirement = [
    ['pull_requests', 'write'],
    ['issues', 'write'],
  ];

  const PULLS_READ: Requirement = [['pull_requests', 'read']];

  /**
   * GET /repos/{owner}/{repo}/pulls: state (open, closed, all; default open), head (`user:ref-name`:
   * the head repository's owner and branch; a value without `user:` is ignored, as GitHub ignores it
   * and lists every pull request), base (branch), sort (created, updated; default created) and
   * direction (default desc for created, asc otherwise), paginated.
   */
  const listPulls = (ctx: Ctx): Reply => {
    const state = ctx.query.get('state') ?? 'open';
    const head = ctx.query.get('head');
    const baseRef = ctx.query.get('base');
    const sort = ctx.query.get('sort') ?? 'created';
    const direction = ctx.query.get('direction') ?? (sort === 'created' ? 'desc' : 'asc');
    const colon = head?.indexOf(':') ?? -1;
    const headUser = head && colon > 0 ? head.slice(0, colon).toLowerCase() : undefined;
    const headRef = head && colon > 0 ? head.slice(colon + 1) : undefined;
    const all = pulls
      .filter((p) => sameRepo(ctx.repo, p.owner, p.repo))
      .filter((p) => state === 'all' || p.state === state)
      .filter((p) => headUser === undefined || (p.head.user.toLowerCase() === headUser && p.head.ref === headRef))
      .filter((p) => baseRef === null || p.base.ref === baseRef);
    const key = (p: StoredPull) =>
      (sort === 'updated' ? p.updated_at : p.created_at) + String(p.number).padStart(12, '0');
    all.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
    if (direction === 'desc') all.reverse();
    const { page, headers } = paginate(all, ctx);
    return { status: 200, body: page.map(renderPull), headers };
  };

  const routes: Route[] = [
    {
      // "List pull requests associated with a commit": those it is the merge commit or the head of.
      method: 'GET',
      pattern: /^\/commits\/([0-9a-f]{7,40})\/pulls$/,
      doc: `${DOCS}/commits/commits#list-pull-requests-associated-with-a-commit`,
      needs: PULLS_READ,
      handle: (ctx) => {
        const sha = ctx.params[0]!;
        const all = pulls
          .filter((p) => sameRepo(ctx.repo, p.owner, p.repo))
          .filter((p) => p.merge_commit_sha?.startsWith(sha) === true || p.head.sha.startsWith(sha));
        const { page, headers } = paginate(all, ctx);
        return { status: 200, body: page.map(renderPull), headers };
      },
    },
    {
      method: 'GET',
      pattern: /^\/pulls$/,
      doc: `${PULL_DOCS}#list-pull-requests`,
      needs: PULLS_READ,
      handle: listPulls,
    },
    {
      method: 'GET',
      pattern: /^\/issues\/(\d+)\/comments$/,
      doc: `${COMMENT_DOCS}#list-issue-comments`,
      needs: COMMENTS_READ,
      handle: (ctx) => {
        const n = Number(ctx.params[0]);
        const all = comments.filter((c) => c.issue_number === n && sameRepo(ctx.repo, c.owner, c.repo));
        const { page, headers } = paginate(all, ctx);
        return { status: 200, body: page.map(renderComment), headers };
      },
    },
    {
      method: 'POST',
      pattern: /^\/issues\/(\d+)\/comments$/,
      doc: `${COMMENT_DOCS}#create-an-issue-comment`,
      needs: COMMENTS_WRITE,
      hasBody: true,
      handle: (ctx) => {
        const body = commentBody(ctx.input, `${COMMENT_DOCS}#create-an-issue-comment`);
        const login = opts.users?.[ctx.token];
        const c = storeComment(ctx.repo, Number(ctx.params[0]), body, login);
        return { status: 201, body: renderComment(c), headers: { location: c.url } };
      },
    },
    {
      method: 'GET',
      pattern: /^\/issues\/comments\/(\d+)$/,
      doc: `${COMMENT_DOCS}#get-an-issue-comment`,
      needs: COMMENTS_READ,
      handle: (ctx) => ({ status: 200, body: renderComment(findComment(ctx, `${COMMENT_DOCS}#get-an-issue-comment`)) }),
    },
    {
      method: 'PATCH',
      pattern: /^\/issues\/comments\/(\d+)$/,
      doc: `${COMMENT_DOCS}#update-an-issue-comment`,
      needs: COMMENTS_WRITE,
      hasBody: true,
      handle: (ctx) => {
        const doc = `${COMMENT_DOCS}#update-an-issue-comment`;
        const c = findComment(ctx, doc);
        c.body = commentBody(ctx.input, doc);
        c.updated_at = timestamp();
        return { status: 200, body: renderComment(c) };
      },
    },
    {
      method: 'POST',
      pattern: /^\/check-runs$/,
      doc: `${CHECK_DOCS}#create-a-check-run`,
      needs: [['checks', 'write']],
      hasBody: true,
      handle: (ctx) => {
        const input = ctx.input;
        const annotations = validateCheckRun(input, false, `${CHECK_DOCS}#create-a-check-run`);
        const now = timestamp();
        const conclusion = (input['conclusion'] as string | undefined) ?? null;
        const status = conclusion !== null ? 'completed' : ((input['status'] as string | undefined) ?? 'queued');
        const out = isObject(input['output']) ? input['output'] : undefined;
        const id = nextCheckRunId++;
        const headSha = input['head_sha'] as string;
        const suiteKey = `${ctx.repo.owner}/${ctx.repo.name}@${headSha}`.toLowerCase();
        if (!suites.has(suiteKey)) suites.set(suiteKey, nextSuiteId++);
        const api = apiRepo(ctx.repo);
        const run: StoredCheckRun = {
          id,
          node_id: `CR_kwDO${Buffer.from(`${ctx.repo.id}:${id}`).toString('base64url')}`,
          url: `${api}/check-runs/${id}`,
          html_url: `https://github.com/${ctx.repo.owner}/${ctx.repo.name}/runs/${id}`,
          head_sha: headSha,
          name: input['name'] as string,
          status,
          conclusion,
          started_at: typeof input['started_at'] === 'string' ? normalizeTime(input['started_at']) : now,
          completed_at:
            status === 'completed'
              ? typeof input['completed_at'] === 'string'
                ? normalizeTime(input['completed_at'])
                : now
              : null,
          // Without one, GitHub uses the app's homepage.
          details_url: (input['details_url'] as string | undefined) ?? ACTIONS_APP.external_url,
          external_id: (input['external_id'] as string | undefined) ?? '',
          output: {
            title: (out?.['title'] as string | undefined) ?? null,
            summary: (out?.['summary'] as string | undefined) ?? null,
            text: (out?.['text'] as string | undefined) ?? null,
            annotations_count: annotations.length,
            annotations_url: `${api}/check-runs/${id}/annotations`,
          },
          check_suite: { id: suites.get(suiteKey)! },
          owner: ctx.repo.owner,
          repo: ctx.repo.name,
          annotations,
        };
        checkRuns.push(run);
        return { status: 201, body: renderCheckRun(run), headers: { location: run.url } };
      },
    },
    {
      method: 'GET',
      pattern: /^\/check-runs\/(\d+)$/,
      doc: `${CHECK_DOCS}#get-a-check-run`,
      needs: [['checks', 'read']],
      handle: (ctx) => ({ status: 200, body: renderCheckRun(findRun(ctx, `${CHECK_DOCS}#get-a-check-run`)) }),
    },
    {
      method: 'PATCH',
      pattern: /^\/check-runs\/(\d+)$/,
      doc: `${CHECK_DOCS}#update-a-check-run`,
      needs: [['checks', 'write']],
      hasBody: true,
      handle: (ctx) => {
        const doc = `${CHECK_DOCS}#update-a-check-run`;
        const run = findRun(ctx, doc);
        const input = ctx.input;
        const annotations = validateCheckRun(input, true, doc);
        const now = timestamp();
        if (typeof input['name'] === 'string') run.name = input['name'];
        if (typeof input['details_url'] === 'string') run.details_url = input['details_url'];
        if (typeof input['external_id'] === 'string') run.external_id = input['external_id'];
        if (typeof input['started_at'] === 'string') run.started_at = normalizeTime(input['started_at']);
        if (typeof input['conclusion'] === 'string') {
          run.conclusion = input['conclusion'];
          run.status = 'completed';
          run.completed_at = typeof input['completed_at'] === 'string' ? normalizeTime(input['completed_at']) : now;
        } else if (typeof input['status'] === 'string') {
          run.status = input['status'];
          run.conclusion = null;
          run.completed_at = null;
        }
        const out = input['output'];
        if (isObject(out)) {
          if (typeof out['title'] === 'string') run.output.title = out['title'];
          if (typeof out['summary'] === 'string') run.output.summary = out['summary'];
          if (typeof out['text'] === 'string') run.output.text = out['text'];
        }
        // GitHub appends the annotations of an update to those the run already has.
        run.annotations.push(...annotations);
        run.output.annotations_count = run.annotations.length;
        return { status: 200, body: renderCheckRun(run) };
      },
    },
    {
      method: 'GET',
      pattern: /^\/check-runs\/(\d+)\/annotations$/,
      doc: `${CHECK_DOCS}#list-check-run-annotations`,
      needs: [['checks', 'read']],
      handle: (ctx) => {
        const run = findRun(ctx, `${CHECK_DOCS}#list-check-run-annotations`);
        const { page, headers } = paginate(run.annotations, ctx);
        return { status: 200, body: page.map((a) => renderAnnotation(run, a)), headers };
      },
    },
  ];

  const levels: Record<GitHubAccess, number> = { read: 1, write: 2 };
  const allowed = (token: string, needs: Requirement): boolean => {
    const granted = opts.tokens[token] ?? {};
    return needs.some(([perm, access]) => {
      const has = granted[perm];
      return has !== undefined && levels[has] >= levels[access];
    });
  };

  const readBody = (req: http.IncomingMessage): Promise<string> =>
    new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        resolve(Buffer.concat(chunks).toString('utf8'));
      });
      req.on('error', reject);
    });

  const handle = async (req: http.IncomingMessage): Promise<Reply & { token?: string }> => {
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', 'http://fake.invalid');
    const path = url.pathname;
    const raw = await readBody(req);

    const faultIndex = faults.findIndex((f) => f.method === method && f.pattern.test(path));
    if (faultIndex >= 0) {
      const [fault] = faults.splice(faultIndex, 1);
      return { status: fault!.status, body: errorBody(fault!.status, fault!.message, DOCS) };
    }

    const auth = req.headers.authorization;
    if (!auth) return { status: 401, body: errorBody(401, 'Requires authentication', DOCS) };
    let token: string | undefined;
    const m = /^(?:token|bearer)\s+(\S+)\s*$/i.exec(auth);
    if (m) token = m[1];
    const basic = /^basic\s+(\S+)\s*$/i.exec(auth);
    if (basic) token = Buffer.from(basic[1]!, 'base64').toString('utf8').split(':').slice(1).join(':');
    if (token === undefined || !(token in opts.tokens)) {
      return { status: 401, body: errorBody(401, 'Bad credentials', DOCS) };
    }

    // GET /user: the token's user; an installation token (GITHUB_TOKEN) has none.
    if (method === 'GET' && path === '/user') {
      const login = opts.users?.[token];
      return login
        ? { status: 200, body: renderAccount(login), token }
        : {
            status: 403,
            body: errorBody(
              403,
              'Resource not accessible by integration',
              `${DOCS}/users/users#get-the-authenticated-user`,
            ),
            token,
          };
    }

    let repo: Repo | undefined;
    let sub: string | undefined;
    const byName = /^\/repos\/([^/]+)\/([^/]+)(\/.*)$/.exec(path);
    const byId = /^\/repositories\/(\d+)(\/.*)$/.exec(path);
    if (byName) {
      repo = repoFor(decodeURIComponent(byName[1]!), decodeURIComponent(byName[2]!));
      sub = byName[3];
    } else if (byId) {
      repo = repoById(Number(byId[1]));
      sub = byId[2];
    }
    const route = sub === undefined ? undefined : routes.find((r) => r.method === method && r.pattern.test(sub));
    if (!repo || !route || sub === undefined) return { status: 404, body: errorBody(404, 'Not Found', DOCS), token };

    const accepted = route.needs.map(([p, a]) => `${p}=${a}`).join('; ');
    const withPerms = (r: Reply): Reply => ({
      ...r,
      headers: { ...r.headers, 'x-accepted-github-permissions': accepted },
    });
    if (!allowed(token, route.needs)) {
      return {
        ...withPerms({ status: 403, body: errorBody(403, 'Resource not accessible by integration', route.doc) }),
        token,
      };
    }
    let input: Json = {};
    if (route.hasBody && raw.trim() !== '') {
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw);
      } catch {
        return { ...withPerms({ status: 400, body: errorBody(400, 'Problems parsing JSON', route.doc) }), token };
      }
      if (!isObject(parsed)) {
        return { ...withPerms({ status: 400, body: errorBody(400, 'Problems parsing JSON', route.doc) }), token };
      }
      input = parsed;
    }
    try {
      const params = route.pattern.exec(sub)!.slice(1);
      return { ...withPerms(route.handle({ repo, params, query: url.searchParams, path, input, token })), token };
    } catch (err) {
      if (err instanceof ApiError) return { ...withPerms({ status: err.status, body: err.body }), token };
      throw err;
    }
  };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake.invalid');
    const record: FakeGitHubRequest = { method: req.method ?? 'GET', path: url.pathname, query: url.search, status: 0 };
    requests.push(record);
    handle(req)
      .then((reply) => {
        const key = reply.token ?? '(anonymous)';
        const limit = reply.token === undefined ? 60 : 5000;
        const count = (used.get(key) ?? 0) + 1;
        used.set(key, count);
        const text = reply.body === undefined ? '' : JSON.stringify(reply.body);
        record.status = reply.status;
        res.writeHead(reply.status, {
          'content-type': 'application/json; charset=utf-8',
          'content-length': Buffer.byteLength(text),
          'x-github-request-id': requestId(),
          'x-github-media-type': 'github.v3; format=json',
          'x-github-api-version-selected': '2022-11-28',
          'x-ratelimit-limit': String(limit),
          'x-ratelimit-remaining': String(Math.max(0, limit - count)),
          'x-ratelimit-reset': String(resetAt),
          'x-ratelimit-used': String(count),
          'x-ratelimit-resource': 'core',
          ...reply.headers,
        });
        res.end(text);
      })
      .catch((err: unknown) => {
        record.status = 500;
        const text = JSON.stringify(errorBody(500, `fake GitHub: ${String(err)}`, DOCS));
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
        res.end(text);
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      resolve();
    });
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: base,
    comments,
    checkRuns,
    pulls,
    addComment: (c) => storeComment(repoFor(c.owner, c.repo), c.issue, c.body, c.login),
    addPull: (p) => {
      const repo = repoFor(p.owner, p.repo);
      const taken = pulls.filter((x) => sameRepo(repo, x.owner, x.repo)).map((x) => x.number);
      const number = p.number ?? Math.max(0, ...taken) + 1;
      const id = nextPullId++;
      const at = p.created_at ? normalizeTime(p.created_at) : timestamp();
      const state = p.merged ? 'closed' : (p.state ?? 'open');
      const user = p.head.user ?? (p.head.repo === null ? 'ghost' : splitFull(p.head.repo)[0]);
      const stored: StoredPull = {
        id,
        node_id: `PR_kwDO${Buffer.from(`${repo.id}:${id}`).toString('base64url')}`,
        number,
        state,
        title: p.title ?? `Pull request ${number}`,
        body: null,
        draft: p.draft ?? false,
        user,
        created_at: at,
        updated_at: at,
        closed_at: state === 'closed' || p.merged ? at : null,
        merged_at: p.merged ? (p.merged.at ?? at) : null,
        merge_commit_sha: p.merged?.commitSha ?? null,
        labels: [...(p.labels ?? [])],
        owner: repo.owner,
        repo: repo.name,
        head: { repo: p.head.repo, ref: p.head.ref, sha: p.head.sha, user },
        base: { ref: p.base?.ref ?? 'main', sha: p.base?.sha ?? 'base0000000000000000000000000000000000cc' },
      };
      if (p.head.repo !== null) repoFor(...splitFull(p.head.repo));
      pulls.push(stored);
      return stored;
    },
    requests,
    failNext: (method, pathPattern, status, message) => {
      faults.push({ method: method.toUpperCase(), pattern: pathPattern, status, message });
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      });
    },
  };
}

/** The environment of a run of repository org/repo whose API is the fake (run 99, a merge commit). */
export const repoEnv = (fake: { url: string }): NodeJS.ProcessEnv => ({
  GITHUB_REPOSITORY: 'org/repo',
  GITHUB_API_URL: fake.url,
  GITHUB_SERVER_URL: 'https://github.example',
  GITHUB_RUN_ID: '99',
  GITHUB_SHA: 'merge0000000000000000000000000000000000aa',
});

/** A pull_request event for PR 7 of org/repo, its head in `headRepo` (a fork when not org/repo). */
export const prEvent = (headRepo = 'org/repo') => ({
  name: 'pull_request',
  payload: {
    action: 'synchronize',
    number: 7,
    pull_request: {
      number: 7,
      head: { sha: 'head000000000000000000000000000000000bb', repo: { full_name: headRepo } },
    },
    repository: { full_name: 'org/repo' },
  },
});

/** What a workflow_run event says about the run that triggered it (defaults: a fork's pull_request run). */
export interface TriggeringRun {
  /** The triggering run's event. */
  event?: string;
  headSha: string;
  headBranch: string;
  /** owner/name of the head commit's repository. */
  headRepo: string;
  conclusion?: string;
  /** workflow_run.pull_requests: what GitHub fills in for a pull request of the same repository only. */
  pullRequests?: { number: number; headSha: string; headRef: string; baseRepo?: string }[];
}

/**
 * A workflow_run `completed` event in org/repo (repository id 4242) for the run `t` describes, as
 * GitHub sends it: the triggering run's head commit, branch and repository, its event and
 * conclusion, and pull_requests, which GitHub leaves empty for a pull request from a fork.
 */
export const workflowRunEvent = (t: TriggeringRun) => {
  const repoObj = (full: string, id: number) => {
    const [owner = '', name = ''] = full.split('/');
    return {
      id,
      name,
      full_name: full,
      private: false,
      owner: { login: owner, type: 'User' },
      html_url: `https://github.com/${full}`,
      fork: full !== 'org/repo',
      url: `https://api.github.com/repos/${full}`,
    };
  };
  const repoRef = (full: string, id: number) => ({
    id,
    url: `https://api.github.com/repos/${full}`,
    name: full.split('/')[1],
  });
  const repository = repoObj('org/repo', 4242);
  const headRepository = t.headRepo === 'org/repo' ? repository : repoObj(t.headRepo, 5151);
  return {
    name: 'workflow_run',
    payload: {
      action: 'completed',
      workflow_run: {
        id: 8801,
        name: 'preview',
        display_title: 'A change',
        path: '.github/workflows/preview.yaml',
        run_number: 12,
        run_attempt: 1,
        event: t.event ?? 'pull_request',
        status: 'completed',
        conclusion: t.conclusion ?? 'success',
        head_branch: t.headBranch,
        head_sha: t.headSha,
        workflow_id: 161335,
        url: 'https://api.github.com/repos/org/repo/actions/runs/8801',
        html_url: 'https://github.com/org/repo/actions/runs/8801',
        pull_requests: (t.pullRequests ?? []).map((p) => ({
          url: `https://api.github.com/repos/${p.baseRepo ?? 'org/repo'}/pulls/${p.number}`,
          id: 1_700_000_000 + p.number,
          number: p.number,
          head: { ref: p.headRef, sha: p.headSha, repo: repoRef('org/repo', 4242) },
          base: {
            ref: 'main',
            sha: 'base0000000000000000000000000000000000cc',
            repo: p.baseRepo && p.baseRepo !== 'org/repo' ? repoRef(p.baseRepo, 6161) : repoRef('org/repo', 4242),
          },
        })),
        head_commit: { id: t.headSha, tree_id: 'tree000000000000000000000000000000000dd', message: 'A change' },
        repository,
        head_repository: headRepository,
      },
      workflow: { id: 161335, name: 'preview', path: '.github/workflows/preview.yaml', state: 'active' },
      repository,
      sender: { login: 'someone', type: 'User' },
    },
  };
};
