// The edges of the workflow runs under act: the test clusters, the emulated origin repositories and
// one `act` run of a workflow on this machine (steps on the host: -P ubuntu-latest=-self-hosted).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { jobIdsOf, mapWorkflow, readActLog, type JobRun } from './results.ts';
import type { Tree } from './trees.ts';

export const REPO = join(dirname(fileURLToPath(import.meta.url)), '../..');
export const ACT = join(REPO, 'test/act/bin/act');
const STAND_INS = join(REPO, 'test/act/actions');
/** A Tree value that Origin.commit commits as a symbolic link to what follows it. */
export const SYMLINK = 'symlink:';

export interface Cluster {
  kubeconfig: string;
  stop(): Promise<void>;
}

/** A test cluster (tier b: with a scheduler, controllers and kwok nodes, so workloads get ready). */
export async function startCluster(name: string): Promise<Cluster> {
  const dir = mkdtempSync(join(tmpdir(), `kr-act-${name}-`));
  const child: ChildProcess = spawn(join(REPO, 'test/cluster/bin/testcluster'), ['up', '--tier', 'b', '--dir', dir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const err: string[] = [];
  child.stderr?.on('data', (d: Buffer) => err.push(d.toString()));
  const kubeconfig = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.startsWith('KUBECONFIG=')) resolve(line.slice('KUBECONFIG='.length));
    });
    child.on('exit', (code) => {
      reject(new Error(`the ${name} test cluster exited with ${code}: ${err.join('')}`));
    });
  });
  return {
    kubeconfig,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.on('exit', r));
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function git(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): string {
  const r = spawnSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'Dev',
      GIT_AUTHOR_EMAIL: 'dev@example.com',
      GIT_COMMITTER_NAME: 'Dev',
      GIT_COMMITTER_EMAIL: 'dev@example.com',
      ...env,
    },
  });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} in ${cwd}: ${r.stderr}`);
  return r.stdout.trim();
}

/**
 * A repository as GitHub holds it, emulated: a bare repository (what the checkout stand-in clones),
 * a clone to make commits in, and the directory act reads the run's commit, ref and repository from.
 */
export class Origin {
  readonly bare: string;
  private readonly scratch: string;
  readonly actDir: string;
  readonly fullName: string;
  constructor(root: string, fullName: string) {
    this.fullName = fullName;
    this.bare = join(root, `${fullName.replace('/', '_')}.git`);
    this.scratch = join(root, `${fullName.replace('/', '_')}-scratch`);
    this.actDir = join(root, `${fullName.replace('/', '_')}-act`);
    mkdirSync(this.scratch, { recursive: true });
    git(root, ['init', '-q', '--bare', '-b', 'main', this.bare]);
    // actions/checkout fetches a commit by its sha; GitHub allows it.
    git(this.bare, ['config', 'uploadpack.allowAnySHA1InWant', 'true']);
    git(this.scratch, ['init', '-q', '-b', 'main']);
    git(this.scratch, ['remote', 'add', 'origin', this.bare]);
  }

  /** Whether the scratch clone has `ref`. */
  private has(ref: string): boolean {
    return spawnSync('git', ['rev-parse', '--verify', '-q', ref], { cwd: this.scratch }).status === 0;
  }

  /** Commits the tree's changes (null deletes a file) on `branch` (made from `from`), pushes, returns the sha. */
  commit(changes: Tree, message: string, branch = 'main', from?: string): string {
    if (!this.has('HEAD')) git(this.scratch, ['symbolic-ref', 'HEAD', `refs/heads/${branch}`]);
    else if (from) git(this.scratch, ['checkout', '-q', '-B', branch, from]);
    else if (this.has(branch)) git(this.scratch, ['checkout', '-q', branch]);
    else git(this.scratch, ['checkout', '-q', '-B', branch]);
    for (const [file, text] of Object.entries(changes)) {
      const p = join(this.scratch, file);
      if (text === null) rmSync(p, { force: true });
      else {
        mkdirSync(dirname(p), { recursive: true });
        // `symlink:TARGET` commits a symbolic link, as a pull request can.
        if (text.startsWith(SYMLINK)) symlinkSync(text.slice(SYMLINK.length), p);
        else writeFileSync(p, text);
      }
    }
    git(this.scratch, ['add', '-A']);
    git(this.scratch, ['commit', '-q', '-m', message]);
    git(this.scratch, ['push', '-q', '-f', 'origin', `${branch}:refs/heads/${branch}`]);
    return git(this.scratch, ['rev-parse', 'HEAD']);
  }

  /** Merges `branch` into main with a merge commit, as GitHub's merge button does; returns its sha. */
  merge(branch: string, message: string): string {
    git(this.scratch, ['checkout', '-q', 'main']);
    git(this.scratch, ['merge', '-q', '--no-ff', '-m', message, branch]);
    git(this.scratch, ['push', '-q', 'origin', 'main:refs/heads/main']);
    return git(this.scratch, ['rev-parse', 'HEAD']);
  }

  /** A pull request's refs as GitHub makes them: refs/pull/N/head and the test merge refs/pull/N/merge. */
  pullRefs(n: number, headSha: string, baseSha: string): string {
    // The commits may have been pushed from elsewhere (pushFrom).
    git(this.scratch, ['fetch', '-q', 'origin', '+refs/heads/*:refs/remotes/origin/*']);
    git(this.scratch, ['checkout', '-q', '--detach', baseSha]);
    git(this.scratch, ['merge', '-q', '--no-ff', '-m', `Merge ${headSha} into ${baseSha}`, headSha]);
    const merge = git(this.scratch, ['rev-parse', 'HEAD']);
    git(this.scratch, [
      'push',
      '-q',
      '-f',
      'origin',
      `${headSha}:refs/pull/${n}/head`,
      `${merge}:refs/pull/${n}/merge`,
    ]);
    if (this.has('main')) git(this.scratch, ['checkout', '-q', 'main']);
    return merge;
  }

  /** Pushes a local repository's HEAD as this one's main; returns the sha. */
  pushFrom(dir: string): string {
    git(dir, ['push', '-q', '-f', this.bare, 'HEAD:refs/heads/main']);
    return git(dir, ['rev-parse', 'HEAD']);
  }

  /** Points the directory act reads at `sha`, on `branch` (a push, a schedule) or detached (a pull request). */
  at(sha: string, branch?: string): string {
    rmSync(this.actDir, { recursive: true, force: true });
    git(dirname(this.actDir), ['clone', '-q', '--no-checkout', this.bare, this.actDir]);
    git(this.actDir, ['fetch', '-q', 'origin', '+refs/pull/*:refs/remotes/pull/*']);
    if (branch) git(this.actDir, ['checkout', '-q', '-B', branch, sha]);
    else git(this.actDir, ['checkout', '-q', '--detach', sha]);
    git(this.actDir, ['remote', 'set-url', 'origin', `https://github.com/${this.fullName}.git`]);
    return this.actDir;
  }
}

export interface ActRun {
  jobs: JobRun[];
  /** Wall-clock seconds of the run, for the line that reports it. */
  seconds: number;
  exitCode: number | null;
  log: string;
}

export interface ActOptions {
  /** The workflow as printed (the README's `<owner>/...@v1` included). */
  workflow: string;
  event: 'push' | 'pull_request' | 'schedule' | 'workflow_dispatch' | 'workflow_run';
  payload: Record<string, unknown>;
  origin: Origin;
  /** The commit act runs at, and the branch for a push or a schedule. */
  sha: string;
  branch?: string;
  runId: number;
  secrets: Record<string, string>;
  vars?: Record<string, string>;
  env?: Record<string, string>;
  githubApi: string;
  /** Where the run keeps its artifacts (the upload/download stand-ins). */
  artifacts: string;
  /** The copy of the action that `<owner>/kustomize-reconcile@v1` maps to. */
  actionDir: string;
  timeoutMs?: number;
  /** The node binary first on PATH (default: the one running this). */
  node?: string;
  /**
   * Where act's own Actions cache server keeps its entries (ACTIONS_CACHE_URL, the cache service's
   * REST protocol that @actions/cache speaks without ACTIONS_CACHE_SERVICE_V2): runs given the same
   * directory share the cache, as runs of one repository do on GitHub. Absent: no cache server.
   */
  cacheServer?: string;
}

/** What a run names itself; the rest of ActOptions is the whole set of runs' (run.ts, Env.act). */
export type RunOptions = Omit<ActOptions, 'githubApi' | 'artifacts' | 'actionDir'>;

/** Runs a workflow under act and reads its JSON log. */
export async function runAct(o: ActOptions): Promise<ActRun> {
  const work = mkdtempSync(join(tmpdir(), 'kr-act-run-'));
  try {
    const mapped = mapWorkflow(o.workflow, o.actionDir, STAND_INS);
    const wf = join(work, 'workflow.yml');
    writeFileSync(wf, mapped.yaml);
    const eventFile = join(work, 'event.json');
    writeFileSync(eventFile, JSON.stringify(o.payload));
    const dir = o.origin.at(o.sha, o.branch);
    const args = [
      o.event,
      '-W',
      wf,
      '-e',
      eventFile,
      '-C',
      dir,
      '--json',
      '-P',
      'ubuntu-latest=-self-hosted',
      '-P',
      'ubuntu-24.04=-self-hosted',
      '--no-skip-checkout',
      '--concurrent-jobs',
      '8',
      '--defaultbranch',
      'main',
      '--action-cache-path',
      join(work, 'cache'),
      ...(o.cacheServer
        ? ['--cache-server-path', o.cacheServer, '--cache-server-addr', '127.0.0.1']
        : ['--no-cache-server']),
      '--env-file',
      '/dev/null',
      '--secret-file',
      '/dev/null',
      '--var-file',
      '/dev/null',
      ...mapped.localRepositories.flatMap((l) => ['--local-repository', l]),
      ...Object.entries({ GITHUB_TOKEN: '', ...o.secrets }).flatMap(([k, v]) => ['-s', `${k}=${v}`]),
      ...Object.entries(o.vars ?? {}).flatMap(([k, v]) => ['--var', `${k}=${v}`]),
      ...Object.entries({
        GITHUB_API_URL: o.githubApi,
        GITHUB_RUN_ID: String(o.runId),
        KR_ACT_ORIGIN: o.origin.bare,
        KR_ACT_ARTIFACTS: o.artifacts,
        KR_ACT_STANDINS: STAND_INS,
        ...o.env,
      }).flatMap(([k, v]) => ['--env', `${k}=${v}`]),
    ];
    // The runner's Node first on PATH (the action is node24), then kustomize; git is the machine's.
    let nodeDir = dirname(process.execPath);
    if (o.node) {
      nodeDir = join(work, 'node-bin');
      mkdirSync(nodeDir);
      symlinkSync(o.node, join(nodeDir, 'node'));
    }
    const PATH = [nodeDir, join(REPO, 'test/cluster/bin'), process.env['PATH']].join(':');
    const started = Date.now();
    const child = spawn(ACT, args, { cwd: dir, env: { ...process.env, PATH }, stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    child.stdout.on('data', (d: Buffer) => (log += d.toString()));
    child.stderr.on('data', (d: Buffer) => (log += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 600_000);
    const exitCode = await new Promise<number | null>((r) => {
      child.on('close', r);
    });
    clearTimeout(timer);
    const seconds = Math.round((Date.now() - started) / 1000);
    return { jobs: readActLog(log, jobIdsOf(mapped.yaml)), seconds, exitCode, log };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** A node older than the action's node24 on this machine (the distribution's, say), if there is one. */
export function olderNode(): string | undefined {
  for (const dir of (process.env['PATH'] ?? '').split(':')) {
    const node = join(dir, 'node');
    const r = spawnSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8' });
    if (r.status === 0 && Number(r.stdout.split('.')[0]) < 24) return node;
  }
  return undefined;
}

/**
 * A copy of the action as a tag of it holds what runs: action.yml, dist/ and package.json.
 * KR_ACTION_DIST: a bundle of the working tree made elsewhere (`node scripts/bundle.mjs DIR`) as dist/.
 */
export function actionCopy(root: string): string {
  const dir = join(root, 'action');
  for (const f of ['action.yml', 'package.json']) cpSync(join(REPO, f), join(dir, f), { recursive: true });
  cpSync(process.env['KR_ACTION_DIST'] ?? join(REPO, 'dist'), join(dir, 'dist'), { recursive: true });
  return dir;
}
