// The stand-ins for actions/* that npm run workflows maps the workflows' steps to (test/act/actions):
// each does what the real action does to the job and refuses what the real one would refuse. Run
// here as act runs them: bash, with the inputs in IN_* and the runner's variables.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../helpers/paths.js';

const STAND_INS = join(REPO, 'test/act/actions');

interface Ran {
  status: number | null;
  out: string;
  outputs: string;
}

function run(script: string, args: string[], env: Record<string, string>, workspace?: string): Ran {
  const ws = workspace ?? mkdtempSync(join(tmpdir(), 'kr-standin-'));
  const output = join(mkdtempSync(join(tmpdir(), 'kr-standin-out-')), 'output');
  writeFileSync(output, '');
  const r = spawnSync('bash', [join(STAND_INS, script), ...args], {
    encoding: 'utf8',
    env: { ...process.env, GITHUB_WORKSPACE: ws, GITHUB_OUTPUT: output, ...env },
  });
  return { status: r.status, out: `${r.stdout}${r.stderr}`, outputs: readFileSync(output, 'utf8') };
}

const goVersion = spawnSync('go', ['env', 'GOVERSION'], { encoding: 'utf8' }).stdout.trim().replace(/^go/, '');
const goMinor = goVersion.split('.').slice(0, 2).join('.');
const nodeMajor = process.versions.node.split('.')[0]!;

describe('setup-go, setup-node and cache stand-ins', () => {
  const go = (env: Record<string, string>) =>
    run('setup.sh', ['go'], {
      IN_GO_VERSION: '',
      IN_GO_VERSION_FILE: '',
      IN_CACHE: 'false',
      IN_CACHE_DEPENDENCY_PATH: '',
      ...env,
    });
  const node = (env: Record<string, string>) =>
    run('setup.sh', ['node'], {
      IN_NODE_VERSION: '',
      IN_NODE_VERSION_FILE: '',
      IN_CACHE: '',
      IN_CACHE_DEPENDENCY_PATH: '',
      ...env,
    });
  const cache = (env: Record<string, string>) =>
    run('setup.sh', ['cache'], {
      IN_PATH: '~/.cache/x',
      IN_KEY: 'k-1',
      IN_RESTORE_KEYS: '',
      IN_FAIL_ON_CACHE_MISS: 'false',
      ...env,
    });

  it.each<[string, () => Ran, RegExp | null]>([
    ['go: the Go on PATH, by major.minor', () => go({ IN_GO_VERSION: goMinor }), null],
    [
      'go: a Go this machine does not have',
      () => go({ IN_GO_VERSION: '1.99' }),
      /asks for a Go this machine does not have/,
    ],
    ['go: no version at all', () => go({}), /neither go-version nor go-version-file/],
    ['go: cache is not a boolean', () => go({ IN_GO_VERSION: goMinor, IN_CACHE: 'yes' }), /'yes' is not a boolean/],
    ['go: cache: true without a go.sum', () => go({ IN_GO_VERSION: goMinor, IN_CACHE: 'true' }), /needs go.sum/],
    ['node: the Node running this', () => node({ IN_NODE_VERSION: nodeMajor }), null],
    ['node: an older Node', () => node({ IN_NODE_VERSION: '18' }), /asks for a Node this machine does not have/],
    ['node: cache npm without a lock file', () => node({ IN_CACHE: 'npm' }), /needs package-lock.json/],
    ['node: an unknown cache', () => node({ IN_CACHE: 'bun' }), /'bun' is not npm, yarn or pnpm/],
    ['cache: a plain key', () => cache({}), null],
    ['cache: a key with a comma', () => cache({ IN_KEY: 'a,b' }), /cannot contain commas/],
    ['cache: a hashFiles() of nothing', () => cache({ IN_KEY: 'kr-tools-Linux-' }), /matched no file/],
    ['cache: no path', () => cache({ IN_PATH: '\n' }), /Input required and not supplied: path/],
    ['cache: fail-on-cache-miss', () => cache({ IN_FAIL_ON_CACHE_MISS: 'true' }), /fail-on-cache-miss/],
  ])('%s', (_, ran, refused) => {
    const r = ran();
    if (refused === null) {
      expect(r.out).not.toContain('::error');
      expect(r.status).toBe(0);
    } else {
      expect(r.status).toBe(1);
      expect(r.out).toMatch(/::error title=\S+ stand-in::/);
      expect(r.out).toMatch(refused);
    }
  });

  it('a cache miss is an output, as the real action sets it', () => {
    expect(cache({}).outputs).toBe('cache-hit=false\n');
  });
});

describe('checkout stand-in', () => {
  const git = (cwd: string, ...args: string[]) => {
    const r = spawnSync('git', args, {
      cwd,
      encoding: 'utf8',
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 'a',
        GIT_AUTHOR_EMAIL: 'a@b',
        GIT_COMMITTER_NAME: 'a',
        GIT_COMMITTER_EMAIL: 'a@b',
      },
    });
    expect(r.status, r.stderr).toBe(0);
    return r.stdout.trim();
  };
  const origin = () => {
    const root = mkdtempSync(join(tmpdir(), 'kr-origin-'));
    const work = join(root, 'work');
    mkdirSync(work);
    git(work, 'init', '-q', '-b', 'main');
    for (const n of [1, 2, 3]) {
      writeFileSync(join(work, 'f'), String(n));
      git(work, 'add', '-A');
      git(work, 'commit', '-q', '-m', `c${n}`);
    }
    git(root, 'clone', '-q', '--bare', work, 'origin.git');
    git(join(root, 'origin.git'), 'config', 'uploadpack.allowAnySHA1InWant', 'true');
    return { bare: join(root, 'origin.git'), head: git(work, 'rev-parse', 'HEAD') };
  };
  const checkout = (o: { bare: string; head: string }, env: Record<string, string>, ws?: string) =>
    run(
      'checkout.sh',
      [],
      {
        KR_ACT_ORIGIN: o.bare,
        GITHUB_REPOSITORY: 'kr-test/fleet',
        GITHUB_REF: 'refs/heads/main',
        GITHUB_SHA: o.head,
        IN_REPOSITORY: 'kr-test/fleet',
        IN_REF: '',
        IN_FETCH_DEPTH: '1',
        IN_PATH: '',
        ...env,
      },
      ws,
    );

  it.each([
    ['one commit by default', '1', 1],
    ['the whole history with fetch-depth: 0', '0', 3],
  ])('%s', (_, depth, commits) => {
    const o = origin();
    const ws = mkdtempSync(join(tmpdir(), 'kr-ws-'));
    const r = checkout(o, { IN_FETCH_DEPTH: depth }, ws);
    expect(r.status, r.out).toBe(0);
    expect(git(ws, 'rev-parse', 'HEAD')).toBe(o.head);
    expect(git(ws, 'rev-list', '--count', 'HEAD')).toBe(String(commits));
    expect(git(ws, 'branch', '--show-current')).toBe('main');
  });

  it.each([
    ['a fetch-depth that is not a number', { IN_FETCH_DEPTH: 'all' }, /fetch-depth: 'all' is not a number/],
    ['another repository', { IN_REPOSITORY: 'someone/else' }, /only kr-test\/fleet is served here/],
    ['a path out of the workspace', { IN_PATH: '../x' }, /is not under the workspace/],
    ['a ref the repository does not have', { IN_REF: 'nope' }, /ref: nope is not in kr-test\/fleet/],
  ])('refuses %s', (_, env, refused) => {
    const r = checkout(origin(), env);
    expect(r.status).not.toBe(0);
    expect(r.out).toMatch(refused);
  });
});

describe('upload-artifact and download-artifact stand-ins', () => {
  const store = () => mkdtempSync(join(tmpdir(), 'kr-artifacts-'));
  const upload = (artifacts: string, ws: string, name: string, path: string, extra: Record<string, string> = {}) =>
    run(
      'artifacts.sh',
      ['upload'],
      {
        KR_ACT_ARTIFACTS: artifacts,
        GITHUB_RUN_ID: '7',
        IN_NAME: name,
        IN_PATH: path,
        IN_IF_NO_FILES_FOUND: 'warn',
        IN_OVERWRITE: 'false',
        ...extra,
      },
      ws,
    );

  it('keeps one file by its name, refuses a second upload of a name, and merges by pattern', () => {
    const artifacts = store();
    const ws = mkdtempSync(join(tmpdir(), 'kr-ws-'));
    mkdirSync(join(ws, 'reports'));
    writeFileSync(join(ws, 'reports/a.json'), '{"a":1}');
    writeFileSync(join(ws, 'reports/b.json'), '{"b":1}');
    expect(upload(artifacts, ws, 'report-a', 'reports/a.json').status).toBe(0);
    expect(upload(artifacts, ws, 'report-b', 'reports/b.json').status).toBe(0);
    expect(upload(artifacts, ws, 'other', 'reports/b.json').status).toBe(0);
    const again = upload(artifacts, ws, 'report-a', 'reports/a.json');
    expect(again.status).toBe(1);
    expect(again.out).toContain('an artifact with this name already exists on the workflow run');

    const dest = mkdtempSync(join(tmpdir(), 'kr-ws-'));
    const down = run(
      'artifacts.sh',
      ['download'],
      {
        KR_ACT_ARTIFACTS: artifacts,
        IN_NAME: '',
        IN_PATTERN: 'report-*',
        IN_PATH: 'reports',
        IN_MERGE_MULTIPLE: 'true',
        IN_RUN_ID: '7',
      },
      dest,
    );
    expect(down.status, down.out).toBe(0);
    expect(readdirSync(join(dest, 'reports')).sort()).toEqual(['a.json', 'b.json']);
  });

  it.each([
    ['error', 1, /No files were found with the provided path: nothing\/\*.json/],
    ['warn', 0, /::warning::No files were found/],
    ['fail', 1, /'fail' is not warn, error or ignore/],
  ])('if-no-files-found: %s', (mode, status, said) => {
    const r = upload(store(), mkdtempSync(join(tmpdir(), 'kr-ws-')), 'n', 'nothing/*.json', {
      IN_IF_NO_FILES_FOUND: mode,
    });
    expect(r.status).toBe(status);
    expect(r.out).toMatch(said);
  });
});
