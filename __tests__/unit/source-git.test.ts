// Fetching another GitRepository (src/source/git.ts): the plan for each spec.ref, the revision Flux
// would report, credentials kept to their host, and real fetches from a local repository (file://)
// by branch, tag, commit and name.
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GitRepositoryDef } from '../../src/flux/source-defs.js';
import {
  basicAuth,
  fetchGitRepository,
  fetchPlan,
  gitEnv,
  credentialHost,
  lsRemoteTags,
  redactUrl,
  secretAuthorization,
} from '../../src/source/git.js';
import { pathToFileURL } from 'node:url';
import { sourceAddress } from '../../src/source/address.js';
import { bareRepository } from '../helpers/git-repos.js';
import { gitHttpServer } from '../helpers/git-http.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

const SHA = '0123456789abcdef0123456789abcdef01234567';

describe('fetchPlan', () => {
  it.each<[string, GitRepositoryDef['ref'], string, string]>([
    ['no ref: branch master, as Flux defaults', undefined, 'refs/heads/master', `master@sha1:${SHA}`],
    ['a branch', { branch: 'main' }, 'refs/heads/main', `main@sha1:${SHA}`],
    ['a tag', { tag: 'v1.2.0', branch: 'main' }, 'refs/tags/v1.2.0', `v1.2.0@sha1:${SHA}`],
    ['a name', { name: 'refs/pull/4/head', tag: 'v1' }, 'refs/pull/4/head', `refs/pull/4/head@sha1:${SHA}`],
    ['a commit', { commit: SHA, name: 'refs/heads/x' }, SHA, `sha1:${SHA}`],
    ['a commit on a branch', { commit: SHA, branch: 'main' }, SHA, `main@sha1:${SHA}`],
    ['semver before a tag (the tag is chosen when fetching)', { semver: '^1', tag: 'v2' }, '', `sha1:${SHA}`],
  ])('%s', (_, ref, want, revision) => {
    const plan = fetchPlan(ref);
    expect(plan.want).toBe(want);
    expect(plan.revision(SHA)).toBe(revision);
  });
});

describe('lsRemoteTags', () => {
  it('lists the tags, without the peeled lines', () => {
    const out = `${SHA}\trefs/tags/v1\n${SHA}\trefs/tags/v1^{}\n${SHA}\trefs/tags/release/2.0\n`;
    expect(lsRemoteTags(out)).toEqual(['v1', 'release/2.0']);
  });
});

describe('credentials and messages', () => {
  it.each([
    ['https://github.com/acme/app', 'github.com'],
    ['https://GIT.example.com:8443/a.git', 'git.example.com:8443'],
    ['file:///tmp/repo.git', undefined],
    ['ssh://git@github.com/acme/app', undefined],
  ])('the host of %s', (url, host) => {
    // A URL the address rule refuses gets no token at all.
    const address = sourceAddress('GitRepository', url);
    expect('problem' in address ? undefined : credentialHost(address)).toBe(host);
  });

  it('drops a user and password from a URL shown', () => {
    expect(redactUrl('https://bob:hunter2@github.com/acme/app')).toBe('https://github.com/acme/app');
    expect(redactUrl('https://github.com/acme/app')).toBe('https://github.com/acme/app');
  });

  it('puts the header in git’s environment, scoped to the URL’s host by git, never prompts', () => {
    const base = { GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: 'true', GIT_ALLOW_PROTOCOL: 'http:https:ssh' };
    expect(gitEnv(undefined)).toEqual(base);
    const env = gitEnv(basicAuth('x-access-token', 'tok'), { scheme: 'https', authority: 'github.com' });
    expect(env).toEqual({
      ...base,
      GIT_CONFIG_COUNT: '2',
      GIT_CONFIG_KEY_0: 'http.https://github.com/.extraHeader',
      GIT_CONFIG_VALUE_0: `Authorization: Basic ${Buffer.from('x-access-token:tok').toString('base64')}`,
      GIT_CONFIG_KEY_1: 'http.followRedirects',
      GIT_CONFIG_VALUE_1: 'false',
    });
    expect(gitEnv(undefined, undefined, false)).toEqual({
      ...base,
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'http.followRedirects',
      GIT_CONFIG_VALUE_0: 'false',
    });
  });

  it('refuses a URL whose host parsers read differently, and file://, before running git', async () => {
    const opts = { credentials: { 'github.com': 'tok' }, secret: () => {} };
    const at = (url: string): GitRepositoryDef => ({ namespace: 'n', name: 'r', file: 'r.yaml', url });
    await expect(fetchGitRepository(at('http://github.com\\@127.0.0.1:9/org/repo'), opts)).rejects.toThrow(
      'GitRepository n/r (r.yaml): spec.url "http://github.com\\\\@127.0.0.1:9/org/repo": must not contain a backslash',
    );
    await expect(fetchGitRepository(at('file:///etc'), opts)).rejects.toThrow('the scheme file:// is not allowed');
  });

  it.each([
    ['username and password', { username: 'bob', password: 'pw' }, basicAuth('bob', 'pw')],
    ['a bearer token', { bearerToken: 'bt', username: 'x' }, 'Bearer bt'],
    ['neither (an SSH identity)', { identity: 'key' }, undefined],
  ])('a secretRef with %s', (_, data, header) => {
    expect(secretAuthorization(data)).toBe(header);
  });
});

/** A bare repository with a branch main (two commits), a branch tenant, and a tag v1 on main's first commit. */
async function repository(): Promise<{ url: string; first: string; second: string }> {
  const work = await mkdtemp(join(tmpdir(), 'kr-git-work-'));
  const bare = await mkdtemp(join(tmpdir(), 'kr-git-bare-'));
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: work,
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@t',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@t',
      },
    })
      .toString()
      .trim();
  git('init', '-q', '-b', 'main');
  await writeFile(join(work, 'app.yaml'), 'first\n');
  await writeFile(join(work, 'notes.md'), 'ignored\n');
  git('add', '.');
  git('commit', '-q', '-m', 'first');
  const first = git('rev-parse', 'HEAD');
  git('tag', '-a', 'v1', '-m', 'v1');
  await writeFile(join(work, 'app.yaml'), 'second\n');
  git('commit', '-q', '-am', 'second');
  const second = git('rev-parse', 'HEAD');
  git('tag', 'v1.1.0');
  git('tag', 'latest');
  git('checkout', '-q', '-b', 'tenant', first);
  await writeFile(join(work, 'app.yaml'), 'tenant\n');
  git('commit', '-q', '-am', 'tenant');
  execFileSync('git', ['clone', '-q', '--bare', work, bare + '/r.git']);
  // Served by git's http-backend on loopback: the fetcher refuses file:// URLs, as Flux does.
  const server = await gitHttpServer(pathToFileURL(`${bare}/r.git`).href);
  return { url: server.urlOf(pathToFileURL(`${bare}/r.git`).href), first, second };
}

describe('fetchGitRepository, from a local repository', () => {
  const opts = { credentials: {}, secret: () => {} };
  const def = (url: string, ref?: GitRepositoryDef['ref'], ignore?: string): GitRepositoryDef => ({
    namespace: 'apps',
    name: 'tenant',
    url,
    file: 'clusters/tenant.yaml',
    ...(ref ? { ref } : {}),
    ...(ignore ? { ignore } : {}),
  });

  it('by branch, tag, commit and name, each at the revision Flux names', async () => {
    const r = await repository();
    const cases: [GitRepositoryDef['ref'], string, string][] = [
      [{ branch: 'main' }, 'second\n', `main@sha1:${r.second}`],
      [{ tag: 'v1' }, 'first\n', `v1@sha1:${r.first}`],
      [{ commit: r.first }, 'first\n', `sha1:${r.first}`],
      [{ name: 'refs/heads/tenant' }, 'tenant\n', 'refs/heads/tenant@sha1:'],
      // semver: the highest tag in range (v1 reads as 1.0.0; `latest` is no version).
      [{ semver: '>=1.0.0' }, 'second\n', `v1.1.0@sha1:${r.second}`],
      [{ semver: '<1.1', tag: 'v1.1.0' }, 'first\n', `v1@sha1:${r.first}`],
    ];
    for (const [ref, content, revision] of cases) {
      const got = await fetchGitRepository(def(r.url, ref), opts);
      expect(await readFile(join(got.root, 'app.yaml'), 'utf8')).toBe(content);
      expect(got.revision.startsWith(revision)).toBe(true);
      // No history is kept: the tree is the artifact.
      expect(await readdir(got.root)).not.toContain('.git');
      await got.cleanup();
      expect(await readdir(got.root).catch(() => 'gone')).toBe('gone');
    }
  });

  it('adds spec.ignore to the root .sourceignore', async () => {
    const r = await repository();
    const got = await fetchGitRepository(def(r.url, { branch: 'main' }, '*.md'), opts);
    expect(await readFile(join(got.root, '.sourceignore'), 'utf8')).toContain('*.md');
    await got.cleanup();
  });

  it('fails naming the GitRepository, its file and the ref, and leaves nothing behind', async () => {
    const r = await repository();
    await expect(fetchGitRepository(def(r.url, { branch: 'nope' }), opts)).rejects.toThrow(
      /^fetching GitRepository apps\/tenant \(clusters\/tenant\.yaml\): http:\/\/127\.0\.0\.1:\d+\/r\.git at branch nope failed: /,
    );
    await expect(fetchGitRepository(def(r.url, { semver: '>=2.0.0' }), opts)).rejects.toThrow(
      /at semver >=2\.0\.0 failed: no tag satisfies the constraint \(tags: latest, v1, v1\.1\.0\)/,
    );
    await expect(fetchGitRepository(def(r.url, { semver: 'latest' }), opts)).rejects.toThrow(
      /at semver latest failed: "latest" is not a version constraint/,
    );
    await expect(fetchGitRepository(def(r.url, { commit: 'f'.repeat(40) }), opts)).rejects.toThrow(
      /at commit f{40} failed/,
    );
  });

  it('names the missing credential when a host refuses', async () => {
    const got = fetchGitRepository(def('http://127.0.0.1:9/acme/app.git', { branch: 'main' }), opts);
    await expect(got).rejects.toThrow(
      /\(no token for 127\.0\.0\.1:9 in the git-credentials input \(--git-credential on the CLI\)\)$/,
    );
  });
});

describe('fetchGitRepository, over HTTP with credentials', () => {
  const def = (url: string, secretRef?: string): GitRepositoryDef => ({
    namespace: 'apps',
    name: 'tenant',
    url,
    file: 'tenant.yaml',
    ref: { branch: 'main' },
    ...(secretRef ? { secretRef } : {}),
  });

  it('sends the host’s token from git-credentials, masks it, and fails without it', async () => {
    const repo = await bareRepository({ main: { 'app.yaml': 'private\n' } });
    const server = await gitHttpServer(repo.fileUrl, basicAuth('x-access-token', 's3cret-token'));
    try {
      const url = server.urlOf(repo.fileUrl);
      const host = new URL(url).host;
      const masked: string[] = [];
      const got = await fetchGitRepository(def(url), {
        credentials: { [host]: 's3cret-token' },
        secret: (v) => masked.push(v),
      });
      expect(await readFile(join(got.root, 'app.yaml'), 'utf8')).toBe('private\n');
      expect(got.revision).toBe(`main@sha1:${repo.commits['main']}`);
      expect(masked).toContain('s3cret-token');
      await got.cleanup();
      // Another host's token is not sent.
      await expect(
        fetchGitRepository(def(url), { credentials: { 'github.com': 's3cret-token' }, secret: () => {} }),
      ).rejects.toThrow(
        new RegExp(
          `\\(no token for ${host.replace(/\./g, '\\.')} in the git-credentials input \\(--git-credential on the CLI\\)\\)$`,
        ),
      );
      expect(server.seen.filter((h) => h !== undefined && h !== basicAuth('x-access-token', 's3cret-token'))).toEqual(
        [],
      );
    } finally {
      await server.close();
    }
  });

  it('reads spec.secretRef when there is no token, and says why when it cannot', async () => {
    const repo = await bareRepository({ main: { 'app.yaml': 'private\n' } });
    const server = await gitHttpServer(repo.fileUrl, basicAuth('bob', 'hunter2'));
    try {
      const url = server.urlOf(repo.fileUrl);
      const read: string[] = [];
      const masked: string[] = [];
      const got = await fetchGitRepository(def(url, 'tenant-auth'), {
        credentials: {},
        secret: (v) => masked.push(v),
        readSecret: (ns, name) => {
          read.push(`${ns}/${name}`);
          return Promise.resolve({ username: 'bob', password: 'hunter2' });
        },
      });
      expect(read).toEqual(['apps/tenant-auth']);
      expect(masked).toContain('hunter2');
      await got.cleanup();
      await expect(
        fetchGitRepository(def(url, 'tenant-auth'), {
          credentials: {},
          secret: () => {},
          readSecret: () => Promise.reject(new Error('secrets "tenant-auth" is forbidden')),
        }),
      ).rejects.toThrow(/; spec\.secretRef tenant-auth could not be read: secrets "tenant-auth" is forbidden\)$/);
    } finally {
      await server.close();
    }
  });
});

describe('fetchGitRepository and redirects', () => {
  it('follows a redirect by default, and not when told (an untrusted tree)', async () => {
    const repo = await bareRepository({ main: { 'app.yaml': 'redirected\n' } });
    const target = await gitHttpServer(repo.fileUrl);
    const hops: string[] = [];
    const redirect = http.createServer((req, res) => {
      hops.push(req.url ?? '');
      res
        .writeHead(302, { location: `${target.urlOf(repo.fileUrl)}${(req.url ?? '').replace(/^\/r\.git/, '')}` })
        .end();
    });
    await new Promise<void>((r) => redirect.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(redirect.address() as AddressInfo).port}/r.git`;
    const at: GitRepositoryDef = { namespace: 'n', name: 'r', file: 'r.yaml', url, ref: { branch: 'main' } };
    try {
      const got = await fetchGitRepository(at, { credentials: {}, secret: () => {} });
      expect(await readFile(join(got.root, 'app.yaml'), 'utf8')).toBe('redirected\n');
      await got.cleanup();
      const before = target.seen.length;
      await expect(
        fetchGitRepository(at, { credentials: {}, secret: () => {}, followRedirects: false }),
      ).rejects.toThrow(/fetching GitRepository n\/r/);
      expect(target.seen.length).toBe(before);
      expect(hops.length).toBeGreaterThan(1);
    } finally {
      redirect.close();
      await target.close();
    }
  });
});
