/**
 * Another GitRepository's artifact, as source-controller makes it: the repository fetched with
 * `git` at the revision its spec.ref chooses (commit, then name, then semver, then tag, then branch;
 * `master` when none is set, as Flux defaults; semver picks the highest matching tag, semver.ts), without its history, with spec.ignore added to the root's
 * .sourceignore. Credentials come from the `git-credentials` input (host → token), else from the
 * Secret spec.secretRef names (username and password, or bearerToken) when the action can read it;
 * they are sent as an HTTP header through git's environment, never on its command line, and masked. The revision is named
 * as Flux names it: `main@sha1:<sha>`, `v1.0.0@sha1:<sha>`, `refs/heads/main@sha1:<sha>`,
 * `sha1:<sha>`.
 */
import { execFile } from 'node:child_process';
import { appendFile, lstat, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { GitRepositoryDef } from '../flux/source-defs.js';
import { scratchDir } from '../util/scratch.js';
import { trackChild } from '../util/lifecycle.js';
import { sourceAddress, type SourceAddress } from './address.js';
import { ExtractBudget } from './budget.js';
import { pickTag } from './semver.js';

/** What to fetch for a spec.ref, and how the revision is named, pure. */
export interface FetchPlan {
  /** The refspec or commit given to `git fetch`. */
  want: string;
  /** The commit the fetched tree must be at, when spec.ref pins one. */
  commit?: string;
  /** Flux's revision for the commit fetched. */
  revision: (sha: string) => string;
  /** The ref, for messages. */
  describe: string;
  /** spec.ref.semver: the tag is chosen among the repository's tags (see semver.ts). */
  semver?: string;
}

/** The plan of the tag a semver plan chose. */
export function tagPlan(tag: string, range: string): FetchPlan {
  return {
    want: `refs/tags/${tag}`,
    revision: (sha) => `${tag}@sha1:${sha}`,
    describe: `tag ${tag} (semver ${range})`,
  };
}

/** The tag names of `git ls-remote --tags` output (peeled `^{}` lines left out). */
export function lsRemoteTags(out: string): string[] {
  const tags: string[] = [];
  for (const line of out.split('\n')) {
    const m = /^[0-9a-f]+\trefs\/tags\/(.+)$/.exec(line.trim());
    if (m && !m[1]!.endsWith('^{}')) tags.push(m[1]!);
  }
  return tags;
}

export function fetchPlan(ref: GitRepositoryDef['ref']): FetchPlan {
  const r = ref ?? {};
  if (r.commit !== undefined) {
    const commit = r.commit;
    return {
      want: commit,
      commit,
      revision: (sha) => (r.branch !== undefined ? `${r.branch}@sha1:${sha}` : `sha1:${sha}`),
      describe: `commit ${commit}`,
    };
  }
  if (r.name !== undefined) {
    const name = r.name;
    return { want: name, revision: (sha) => `${name}@sha1:${sha}`, describe: `ref ${name}` };
  }
  if (r.semver !== undefined) {
    const range = r.semver;
    return { want: '', semver: range, revision: (sha) => `sha1:${sha}`, describe: `semver ${range}` };
  }
  if (r.tag !== undefined) {
    const tag = r.tag;
    return { want: `refs/tags/${tag}`, revision: (sha) => `${tag}@sha1:${sha}`, describe: `tag ${tag}` };
  }
  const branch = r.branch ?? 'master';
  return { want: `refs/heads/${branch}`, revision: (sha) => `${branch}@sha1:${sha}`, describe: `branch ${branch}` };
}

/** The host (and port) whose git-credentials token an address gets: http(s) only (ssh has its own keys). */
export function credentialHost(address: SourceAddress): string | undefined {
  return address.scheme === 'ssh' ? undefined : address.authority;
}

/** `url` without the user and password it may carry, for messages. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/]*@/i, '$1');
}

/**
 * git's environment for a fetch: no prompts, only the http, https and ssh transports (never
 * `file://` or `ext::`), and the Authorization header when there is one, scoped with git's own
 * URL-matched configuration (`http.<scheme>://<host>/.extraHeader`) so that git, not our reading of
 * the URL, decides whether a request goes to that host; with no redirects followed, since git would
 * send the header to wherever a redirect points.
 */
export function gitEnv(
  authorization: string | undefined,
  scope?: { scheme: string; authority: string },
  followRedirects = true,
): Record<string, string> {
  const env: Record<string, string> = {
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: 'true',
    GIT_ALLOW_PROTOCOL: 'http:https:ssh',
  };
  const config: [string, string][] = [];
  if (authorization !== undefined && scope !== undefined) {
    config.push([`http.${scope.scheme}://${scope.authority}/.extraHeader`, `Authorization: ${authorization}`]);
  }
  if (config.length > 0 || !followRedirects) config.push(['http.followRedirects', 'false']);
  if (config.length === 0) return env;
  const out: Record<string, string> = { ...env, GIT_CONFIG_COUNT: String(config.length) };
  config.forEach(([key, value], i) => {
    out[`GIT_CONFIG_KEY_${i}`] = key;
    out[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return out;
}

/** HTTP basic auth's header value. */
export const basicAuth = (user: string, password: string): string =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/**
 * The Authorization header of a GitRepository's spec.secretRef Secret (its data decoded), as
 * source-controller reads it for HTTPS: `bearerToken`, or `username` and `password` as basic auth;
 * undefined when it holds neither.
 */
export function secretAuthorization(data: Readonly<Record<string, string>>): string | undefined {
  if (data['bearerToken']) return `Bearer ${data['bearerToken']}`;
  if (data['username'] !== undefined || data['password'] !== undefined) {
    return basicAuth(data['username'] ?? '', data['password'] ?? '');
  }
  return undefined;
}

export interface FetchOptions {
  /** Host (`github.com`, `git.example.com:8443`) → token, from the git-credentials input. */
  credentials: Readonly<Record<string, string>>;
  /** Masks a value in every later log line. */
  secret: (value: string) => void;
  /** Reads a Secret's data, decoded (spec.secretRef, in the GitRepository's namespace). */
  readSecret?: (namespace: string, name: string) => Promise<Record<string, string>>;
  timeoutMs?: number;
  /** Why no credential at all may be used (the trust rule, trust.ts): the fetch is anonymous. */
  anonymous?: string;
  /**
   * false: a redirect is not followed (an untrusted tree's server could send git to a host the
   * address rule refuses, such as the metadata service). Default true, as git's `initial`.
   */
  followRedirects?: boolean;
  /** The run's budget for what sources write (budget.ts): the fetched pack and the checked-out tree count. */
  budget?: ExtractBudget;
}

export interface Fetched {
  root: string;
  revision: string;
  /** Removes the tree. */
  cleanup: () => Promise<void>;
}

/** The Authorization header for `repo`: its host's token, else its spec.secretRef; why none, when none. */
async function authorizationFor(
  repo: GitRepositoryDef,
  host: string | undefined,
  opts: FetchOptions,
): Promise<{ authorization?: string; missing?: string }> {
  if (host === undefined) return {};
  if (opts.anonymous !== undefined) return { missing: `fetched without credentials: ${opts.anonymous}` };
  const token = opts.credentials[host];
  if (token !== undefined) {
    opts.secret(token);
    const authorization = basicAuth('x-access-token', token);
    opts.secret(authorization.slice('Basic '.length));
    return { authorization };
  }
  const noToken = `no token for ${host} in the git-credentials input (--git-credential on the CLI)`;
  if (repo.secretRef === undefined) return { missing: noToken };
  let data: Record<string, string>;
  try {
    data = (await opts.readSecret?.(repo.namespace, repo.secretRef)) ?? {};
  } catch (err) {
    return { missing: `${noToken}; spec.secretRef ${repo.secretRef} could not be read: ${(err as Error).message}` };
  }
  for (const v of Object.values(data)) if (v.trim() !== '') opts.secret(v);
  const authorization = secretAuthorization(data);
  if (authorization === undefined) {
    return { missing: `${noToken}; spec.secretRef ${repo.secretRef} holds no username and password or bearerToken` };
  }
  opts.secret(authorization.replace(/^\S+ /, ''));
  return { authorization };
}

/**
 * git's low-speed limit for HTTP: a transfer slower than 1 KiB/s for 20 s is abandoned, so a server
 * that trickles a byte every few seconds cannot hold the runner until the (tree-chosen) timeout.
 */
const LOW_SPEED = ['-c', 'http.lowSpeedLimit=1024', '-c', 'http.lowSpeedTime=20'];
/** Blobs past 16 MiB are streamed, not inflated whole in git's memory, as the fetch indexes them. */
const BIG_FILES = ['-c', 'core.bigFileThreshold=16m'];

/**
 * What checking out a tree writes, from `git ls-tree -r -l -z` (NUL-separated `mode type sha size\tpath`):
 * the blobs' bytes and the entries' count (a submodule or a symlink counts as a file). Pure.
 */
export function treeSize(out: string): { bytes: number; files: number } {
  let bytes = 0;
  let files = 0;
  for (const entry of out.split('\0')) {
    const m = /^\d+ (\w+) [0-9a-f]+ +(\d+|-)\t/.exec(entry);
    if (!m) continue;
    files++;
    if (m[1] === 'blob' && m[2] !== '-') bytes += Number(m[2]);
  }
  return { bytes, files };
}

/** Bytes of the files under `dir` (0 when it is gone), without following links. */
async function directoryBytes(dir: string): Promise<number> {
  let total = 0;
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    if (!e.isFile()) continue;
    total += (await lstat(join(e.parentPath, e.name)).catch(() => undefined))?.size ?? 0;
  }
  return total;
}

/** Fetches `repo` into a new temporary directory; throws a sentence naming it on failure. */
export async function fetchGitRepository(repo: GitRepositoryDef, opts: FetchOptions): Promise<Fetched> {
  let plan = fetchPlan(repo.ref);
  const address = sourceAddress('GitRepository', repo.url);
  if ('problem' in address)
    throw new Error(`GitRepository ${repo.namespace}/${repo.name} (${repo.file}): ${address.problem}`);
  const { authorization, missing } = await authorizationFor(repo, credentialHost(address), opts);

  const { dir: root, remove: cleanup } = await scratchDir('kr-source-');
  const env = { ...process.env, ...gitEnv(authorization, address, opts.followRedirects ?? true) };
  const budget = opts.budget ?? new ExtractBudget();
  const what = `GitRepository ${repo.namespace}/${repo.name}`;
  /** Runs git; with `watch`, the repository's size is measured while it runs and git is stopped past the budget. */
  const git = (args: string[], watch = false) =>
    new Promise<string>((resolve, reject) => {
      let over: string | undefined;
      const child = execFile(
        'git',
        args,
        { cwd: root, env, timeout: opts.timeoutMs ?? 60_000, maxBuffer: 16 << 20 },
        (err, stdout, stderr) => {
          clearInterval(timer);
          if (over !== undefined) reject(new Error(over));
          else if (err) {
            const said = stderr.trim().split('\n').filter(Boolean).pop() ?? err.message;
            reject(new Error(said));
          } else resolve(stdout.trim());
        },
      );
      const timer = !watch
        ? undefined
        : setInterval(() => {
            void directoryBytes(join(root, '.git')).then((bytes) => {
              if (over !== undefined) return;
              try {
                budget.check(bytes, 0, `${what}, what git fetched`);
              } catch (err) {
                over = (err as Error).message;
                child.kill('SIGKILL');
              }
            });
          }, 250);
      trackChild(child, false);
    });
  try {
    await git(['init', '-q']);
    if (plan.semver !== undefined) {
      const range = plan.semver;
      const tags = lsRemoteTags(await git([...LOW_SPEED, 'ls-remote', '--tags', '--', repo.url]));
      const tag = pickTag(tags, range);
      if (tag === undefined) {
        const some = tags.slice(0, 10).join(', ') + (tags.length > 10 ? ', …' : '');
        throw new Error(`no tag satisfies the constraint (tags: ${some || 'none'})`);
      }
      plan = tagPlan(tag, range);
    }
    await git(
      [...LOW_SPEED, ...BIG_FILES, 'fetch', '-q', '--depth', '1', '--no-tags', '--', repo.url, plan.want],
      true,
    );
    const fetchedBytes = await directoryBytes(join(root, '.git'));
    budget.check(fetchedBytes, 0, `${what}, what git fetched`);
    // The tree's sizes before it is written: a small pack can check out to gigabytes (zeros compress ~1000x).
    const tree = treeSize(await git(['ls-tree', '-r', '-l', '-z', '--full-tree', 'FETCH_HEAD']));
    budget.take(tree.bytes, tree.files, `${what} at ${plan.describe}, ${tree.files} files of ${tree.bytes} bytes`);
    await git(['-c', 'advice.detachedHead=false', 'checkout', '-q', '--detach', 'FETCH_HEAD']);
    const sha = await git(['rev-parse', 'HEAD']);
    if (plan.commit !== undefined && sha !== plan.commit.toLowerCase()) {
      throw new Error(`fetched ${sha}, not the commit asked for (spec.ref.commit takes the full 40-character SHA)`);
    }
    await rm(join(root, '.git'), { recursive: true, force: true });
    if (repo.ignore !== undefined) await appendFile(join(root, '.sourceignore'), `\n${repo.ignore}\n`);
    return { root, revision: plan.revision(sha), cleanup };
  } catch (err) {
    await cleanup();
    const hint = missing === undefined ? '' : ` (${missing})`;
    const what = `GitRepository ${repo.namespace}/${repo.name} (${repo.file}): ${redactUrl(repo.url)} at ${plan.describe}`;
    throw new Error(`fetching ${what} failed: ${(err as Error).message}${hint}`, { cause: err });
  }
}
