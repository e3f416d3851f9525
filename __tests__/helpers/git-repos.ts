// Bare git repositories on local disk for the tests of GitRepository sources, served over HTTP on
// loopback (git's own http-backend, git-http.ts) as the action fetches them: it refuses file://
// URLs. Real git, no network beyond this machine.
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gitHttpServer, type GitHttpServer } from './git-http.js';

let shared: Promise<{ root: string; server: GitHttpServer }> | undefined;
let count = 0;

/** One anonymous HTTP server (per test process) for every bare repository made here. */
function sharedServer(): Promise<{ root: string; server: GitHttpServer }> {
  shared ??= (async () => {
    const root = await mkdtemp(join(tmpdir(), 'kr-git-bare-'));
    return { root, server: await gitHttpServer(pathToFileURL(join(root, 'any.git')).href) };
  })();
  return shared;
}

const ENV = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };

/**
 * A bare repository whose branches hold the given files (branch → path → text), each branch one
 * commit of its own; returns its HTTP URL on loopback (sources there need allowPrivateSourceHosts),
 * its file:// URL (for a server of a test's own, git-http.ts) and each branch's commit.
 */
export async function bareRepository(
  branches: Record<string, Record<string, string>>,
): Promise<{ url: string; fileUrl: string; commits: Record<string, string> }> {
  const work = await mkdtemp(join(tmpdir(), 'kr-git-work-'));
  const { root, server } = await sharedServer();
  const bare = join(root, `repo-${process.pid}-${++count}.git`);
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: work, env: { ...process.env, ...ENV } })
      .toString()
      .trim();
  git('init', '-q', '-b', 'init');
  git('commit', '-q', '--allow-empty', '-m', 'init');
  const commits: Record<string, string> = {};
  for (const [branch, files] of Object.entries(branches)) {
    git('checkout', '-q', '-B', branch, 'init');
    git('rm', '-q', '-r', '--ignore-unmatch', '.');
    for (const [path, text] of Object.entries(files)) {
      await mkdir(dirname(join(work, path)), { recursive: true });
      await writeFile(join(work, path), text);
    }
    git('add', '-A');
    git('commit', '-q', '-m', branch);
    commits[branch] = git('rev-parse', 'HEAD');
  }
  execFileSync('git', ['clone', '-q', '--bare', work, bare]);
  await rm(work, { recursive: true, force: true });
  const fileUrl = pathToFileURL(bare).href;
  return { url: server.urlOf(fileUrl), fileUrl, commits };
}

/** git in `root` with a test identity; its output trimmed. */
export function gitIn(root: string, ...args: string[]): string {
  return execFileSync('git', ['-C', root, ...args], { encoding: 'utf8', env: { ...process.env, ...ENV } }).trim();
}

/** Makes `root` a git repository (branch main) with everything in it committed; returns the commit. */
export function commitAll(root: string, message = 'commit'): string {
  gitIn(root, 'add', '-A');
  gitIn(root, 'commit', '-q', '--allow-empty', '-m', message);
  return gitIn(root, 'rev-parse', 'HEAD');
}

/** A new git repository (branch main) at `root`, with everything in it committed; returns the commit. */
export function initRepository(root: string): string {
  execFileSync('git', ['init', '-q', '-b', 'main', root]);
  return commitAll(root, 'first');
}
