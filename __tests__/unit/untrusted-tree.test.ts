// The rules that keep a pull request's tree from choosing where a credential goes or what the
// runner reads as a workflow command: pure tables, plus the base commit read from a real git.
import { mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { controlCharacterProblem } from '../../src/flux/fields.js';
import { guardStream } from '../../src/action/stream-guard.js';
import { pairFlags } from '../../src/options/flags.js';
import { privateHostProblem, sourceAddress, type SourceKind } from '../../src/source/address.js';
import { baseScopes, substituteSecretsIn } from '../../src/source/base-sources.js';
import { checkHopUrl, checkSourceAddress } from '../../src/source/guarded.js';
import { RegistryClient } from '../../src/source/registry.js';
import {
  credentialScope,
  credentialVerdict,
  substituteScope,
  substituteVerdict,
  untrustedTreeOf,
  type FetchedDef,
} from '../../src/source/trust.js';
import { CommandGuard, neutraliseCommands } from '../../src/util/workflow-commands.js';
import { commitAll, gitIn, initRepository } from '../helpers/git-repos.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

/** The lines the Actions runner would run as commands: `::` after leading whitespace, or `##[` anywhere. */
const commandLines = (text: string) => text.split(/\r\n|\r|\n/).filter((l) => /^\s*::/.test(l) || l.includes('##['));

describe('workflow commands: text never becomes one', () => {
  it.each([
    ['plain text', 'Applying ConfigMap ns/a\n', 'Applying ConfigMap ns/a\n'],
    ['a path with a line break', './leak\n::stop-commands::k7f3\n', './leak\n%3A:stop-commands::k7f3\n'],
    ['leading spaces', 'x\n   ::add-mask::y', 'x\n   %3A:add-mask::y'],
    ['a carriage return', 'a\r::error::b', 'a\r%3A:error::b'],
    ['CRLF', 'a\r\n\t::warning::b', 'a\r\n\t%3A:warning::b'],
    ['the old form, anywhere', 'value ##[add-mask]x', 'value #%23[add-mask]x'],
    ['three hashes', '###[set-env name=a;]b', '##%23[set-env name=a;]b'],
    ['colons in the middle', 'image: nginx::1 a::b', 'image: nginx::1 a::b'],
    ['a single colon first', ':ok', ':ok'],
    ['a Unicode space before', '\u00a0::error::x', '\u00a0%3A:error::x'],
    [
      'a forged annotation in a file name',
      'clusters/prod/a\n::error file=SECURITY.md,line=1::LGTM\n.yaml',
      'clusters/prod/a\n%3A:error file=SECURITY.md,line=1::LGTM\n.yaml',
    ],
  ])('%s', (_, input, want) => {
    const got = neutraliseCommands(input);
    expect(got).toBe(want);
    expect(commandLines(got)).toEqual([]);
  });

  it('guards a stream: the writes it is told are commands pass, all else is neutralised', () => {
    const out: string[] = [];
    const stream = {
      write: (chunk: unknown) => {
        out.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'));
        return true;
      },
    } as unknown as NodeJS.WriteStream;
    let ours = false;
    guardStream(stream, () => ours);
    stream.write('a\n::stop-commands::x\n');
    ours = true;
    stream.write('::add-mask::v\n');
    ours = false;
    stream.write(Buffer.from('##[add-mask]y\n'));
    stream.write('ok\n', 'utf8');
    expect(out.join('')).toBe('a\n%3A:stop-commands::x\n::add-mask::v\n#%23[add-mask]y\nok\n');
  });

  it('catches a command split across writes', () => {
    const guard = new CommandGuard();
    const parts = ['x\n  ', ':', ':stop-commands::t\n', 'a #', '#[add-mask]b\n', 'ok\n'];
    const out = parts.map((p) => guard.write(p)).join('');
    expect(commandLines(out)).toEqual([]);
    expect(out).toContain('stop-commands');
    expect(out.endsWith('ok\n')).toBe(true);
  });
});

describe('control characters in Kustomization fields', () => {
  it.each([
    ['./apps', false, undefined],
    ['./leak\n::stop-commands::x', false, 'must not contain a line break (U+000A, at character 7)'],
    ['a\rb', false, 'must not contain a carriage return (U+000D, at character 2)'],
    ['a\tb', false, 'must not contain a tab (U+0009, at character 2)'],
    ['a\u2028b', false, 'must not contain a control character (U+2028, at character 2)'],
    ['a\u0085b', false, 'must not contain a control character (U+0085, at character 2)'],
    ['line one\nline two\n\tindented', true, undefined],
    ['patch\u0000', true, 'must not contain a control character (U+0000, at character 6)'],
    ['a\u001bb', true, 'must not contain a control character (U+001B, at character 2)'],
  ])('%j (multiline %s)', (text, multiline, want) => {
    expect(controlCharacterProblem(text, multiline)).toBe(want);
  });
});

describe('source addresses: read once, the way every reader reads them', () => {
  it.each<[SourceKind, string, string]>([
    ['GitRepository', 'https://github.com/org/repo', 'https github.com'],
    ['GitRepository', 'http://git.example.com:8443/org/repo.git', 'http git.example.com:8443'],
    ['GitRepository', 'ssh://git@github.com/org/repo', 'ssh github.com'],
    ['GitRepository', 'HTTPS://GitHub.com/Org/Repo', 'https github.com'],
    ['GitRepository', 'http://[::1]:8080/r', 'http [::1]:8080'],
    ['OCIRepository', 'oci://ghcr.io/org/app', 'oci ghcr.io'],
    ['OCIRepository', 'oci://127.0.0.1:5000/app', 'oci 127.0.0.1:5000'],
    ['Bucket', 'minio.minio.svc:9000', 'https minio.minio.svc:9000'],
    ['Bucket', 's3.amazonaws.com', 'https s3.amazonaws.com'],
  ])('%s %s', (kind, url, want) => {
    const a = sourceAddress(kind, url);
    expect('problem' in a ? a.problem : `${a.scheme} ${a.authority}`).toBe(want);
  });

  it.each<[SourceKind, string, string]>([
    ['GitRepository', 'http://github.com\\@127.0.0.1:9/org/repo', 'must not contain a backslash'],
    ['GitRepository', 'http://github.com@127.0.0.1:9/org/repo', 'must not carry a user name or password'],
    ['GitRepository', 'https://x-access-token:t@github.com/org/repo', 'must not carry a user name or password'],
    ['GitRepository', 'ssh://us:er@github.com/org/repo', 'must not carry a user name or password'],
    ['GitRepository', 'file:///srv/git/repo', 'the scheme file:// is not allowed'],
    ['GitRepository', 'ext::sh -c touch% /tmp/x', 'must not contain a space'],
    ['GitRepository', 'git@github.com:org/repo', 'must be a URL of the form'],
    ['GitRepository', 'https://github.com/org/repo\n', 'must not contain a control or space character (U+000A)'],
    ['GitRepository', 'http://2130706433/r', 'is not a plain address'],
    ['GitRepository', 'http://0x7f.1/r', 'URL parsers disagree on its host ("127.0.0.1" or "0x7f.1")'],
    ['OCIRepository', 'oci://0x7f.1/app', 'URL parsers disagree on its host ("127.0.0.1" or "0x7f.1")'],
    ['Bucket', '0x7f.1:9000', 'URL parsers disagree on its host'],
    ['GitRepository', 'http://0177.0.0.1/r', 'is not a plain address'],
    ['GitRepository', 'http://127.1/r', 'is not a plain address'],
    ['GitRepository', 'http://g%69thub.com/r', 'must not percent-encode its host'],
    ['GitRepository', 'https://gíthub.com/r', 'must be plain ASCII'],
    ['GitRepository', 'https://github.com:99999/r', 'out of range'],
    ['OCIRepository', 'oci://user:pw@ghcr.io/app', 'must not carry a user name'],
    ['OCIRepository', 'https://ghcr.io/app', 'the scheme https:// is not allowed'],
    ['Bucket', 'http://minio:9000', 'must be host[:port], nothing more'],
    ['Bucket', 'minio:9000/path', 'must be host[:port], nothing more'],
    ['Bucket', 'a@127.0.0.1', 'must be host[:port], nothing more'],
  ])('refuses %s %j', (kind, url, want) => {
    const a = sourceAddress(kind, url);
    expect('problem' in a ? a.problem : 'accepted').toContain(want);
  });

  it('does not repeat a password a refused URL carries', () => {
    const a = sourceAddress('GitRepository', 'https://x-access-token:ghp_s3cr3t@github.com/org/repo');
    expect('problem' in a ? a.problem : '').toBe(
      'spec.url "https://x-access-token:***@github.com/org/repo": must not carry a user name or password before the host (credentials come from Secrets and inputs)',
    );
  });

  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.8.9.10', 'loopback'],
    ['localhost', 'loopback'],
    ['api.localhost', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['169.254.169.254', 'metadata'],
    ['169.254.1.2', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fd00:ec2::254', 'metadata'],
    ['metadata.google.internal', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['10.0.0.5', undefined],
    ['192.168.1.1', undefined],
    ['github.com', undefined],
    ['2001:db8::1', undefined],
  ])('%s is %s', (host, want) => {
    const problem = privateHostProblem(host);
    if (want === undefined) expect(problem).toBeUndefined();
    else expect(problem).toContain(want);
  });

  const git = (url: string): FetchedDef => ({ kind: 'GitRepository', namespace: 'ns', name: 'r', file: 'r.yaml', url });
  it('refuses a private host, literal or resolved, unless allowed', async () => {
    const resolve = (map: Record<string, string[]>) => (host: string) => Promise.resolve(map[host] ?? ['140.82.112.3']);
    await expect(checkSourceAddress(git('http://127.0.0.1:9/r'), false, resolve({}))).rejects.toThrow(
      'GitRepository ns/r (r.yaml): the source host 127.0.0.1 is this machine (loopback); set the input allow-private-source-hosts',
    );
    await expect(
      checkSourceAddress(
        git('https://evil.example/r'),
        false,
        resolve({ 'evil.example': ['1.2.3.4', '169.254.169.254'] }),
      ),
    ).rejects.toThrow('resolves to 169.254.169.254: 169.254.169.254 is a cloud metadata service');
    await expect(checkSourceAddress(git('https://github.com/r'), false, resolve({}))).resolves.toBeUndefined();
    await expect(checkSourceAddress(git('http://127.0.0.1:9/r'), true, resolve({}))).resolves.toBeUndefined();
    // Allowed hosts do not lift the URL rules.
    await expect(checkSourceAddress(git('http://github.com@127.0.0.1:9/r'), true, resolve({}))).rejects.toThrow(
      'must not carry a user name',
    );
  });
});

describe('the trust rule', () => {
  const def = (over: Partial<FetchedDef> = {}): FetchedDef =>
    ({
      kind: 'GitRepository',
      namespace: 'flux-system',
      name: 'apps',
      file: 'a.yaml',
      url: 'https://git.example.com/apps',
      secretRef: 'git-auth',
      ...over,
    }) as FetchedDef;
  const base = new Set([credentialScope(def())]);
  const untrusted = { trusted: false as const, reason: 'this run is a preview, whose tree is not trusted', base };

  it.each<[string, FetchedDef, boolean]>([
    ['the same definition', def(), true],
    ['the same, in another file, with another ref', def({ file: 'b.yaml', ref: { tag: 'v2' } }), true],
    ['another URL', def({ url: 'http://127.0.0.1:9/apps' }), false],
    ['another Secret', def({ secretRef: 'registry-admin' }), false],
    ['another namespace', def({ namespace: 'kube-system' }), false],
    ['a secretRef added', def({ name: 'new' }), false],
  ])('%s', (_, d, use) => {
    const v = credentialVerdict(d, untrusted);
    expect(v.use).toBe(use);
    if (!v.use) expect(v.why).toContain('is not the same on the base commit');
    expect(credentialVerdict(d, { trusted: true }).use).toBe(true);
  });

  it('a Bucket: endpoint, bucket, provider and insecure all count', () => {
    const b = {
      kind: 'Bucket',
      namespace: 'n',
      name: 'b',
      file: 'b.yaml',
      provider: 'aws',
      endpoint: 's3.amazonaws.com',
      bucketName: 'x',
    } as const;
    const t = { ...untrusted, base: new Set([credentialScope(b)]) };
    expect(credentialVerdict(b, t).use).toBe(true);
    expect(credentialVerdict({ ...b, endpoint: '127.0.0.1:9', insecure: true }, t).use).toBe(false);
    expect(credentialVerdict({ ...b, bucketName: 'other' }, t).use).toBe(false);
  });

  it('no base: no credentials, saying why', () => {
    const v = credentialVerdict(def(), {
      ...untrusted,
      base: { problem: 'the base commit abc is not in this checkout' },
    });
    expect(v).toEqual({
      use: false,
      why: 'this run is a preview, whose tree is not trusted, and the base commit abc is not in this checkout',
    });
  });

  it.each([
    [{ mode: 'apply', eventName: 'push', event: { before: 'b1' } }, undefined],
    [{ mode: 'drift', eventName: 'schedule' }, undefined],
    [{ eventName: undefined }, undefined],
    // A push's before is the pusher's own commit: never the base (event-trust.ts).
    [
      { mode: 'preview', eventName: 'push', event: { before: 'b1', repository: { default_branch: 'main' } } },
      { reason: 'this run is a preview, whose tree is not trusted', onBranch: 'main' },
    ],
    [
      { mode: 'preview', eventName: 'pull_request', event: { pull_request: { base: { sha: 'pr1' } } } },
      { reason: 'this run is for a pull_request event, whose tree is not trusted', base: 'pr1' },
    ],
    [
      {
        mode: 'apply',
        eventName: 'pull_request_target',
        event: { pull_request: { base: { sha: 'pr1' } } },
        base: 'given',
      },
      { reason: 'this run is for a pull_request_target event, whose tree is not trusted', base: 'given' },
    ],
    [{ eventName: 'pull_request' }, { reason: 'this run is for a pull_request event, whose tree is not trusted' }],
  ])('untrustedTreeOf(%j)', (run, want) => {
    expect(untrustedTreeOf({ ...run, root: '/ws' })).toEqual(want && { ...want, root: '/ws' });
  });
});

describe('the base commit, read from git', () => {
  it('finds the definitions of the base commit, not of the working tree', async () => {
    const root = await mkdtemp(join(tmpdir(), 'kr-base-'));
    await mkdir(join(root, 'clusters', 'prod'), { recursive: true });
    const gitRepo = (url: string, secret: string) =>
      `apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: apps\n  namespace: flux-system\nspec:\n  url: ${url}\n  secretRef:\n    name: ${secret}\n`;
    await writeFile(join(root, 'clusters', 'prod', 'src.yaml'), gitRepo('https://git.example.com/apps', 'git-auth'));
    await writeFile(join(root, 'ünïcode.yaml'), 'kind: ConfigMap\ndata: {a: "ä"}\n');
    const base = initRepository(root);
    await writeFile(join(root, 'clusters', 'prod', 'src.yaml'), gitRepo('http://127.0.0.1:9/apps', 'registry-admin'));
    commitAll(root, 'the change');
    const scopes = await baseScopes(root, base);
    expect(scopes).toBeInstanceOf(Set);
    const set = scopes as Set<string>;
    const at = (url: string, secretRef: string): FetchedDef => ({
      kind: 'GitRepository',
      namespace: 'flux-system',
      name: 'apps',
      file: 'x',
      url,
      secretRef,
    });
    expect(set.has(credentialScope(at('https://git.example.com/apps', 'git-auth')))).toBe(true);
    expect(set.has(credentialScope(at('http://127.0.0.1:9/apps', 'registry-admin')))).toBe(false);
    // From a subdirectory of the repository, paths are the subdirectory's.
    expect(((await baseScopes(join(root, 'clusters'), base)) as Set<string>).size).toBe(1);
    expect(await baseScopes(root, 'f'.repeat(40))).toEqual({
      problem: `the base commit ${'f'.repeat(40)} is not in this checkout (actions/checkout with fetch-depth: 0 brings it)`,
    });
    expect(await baseScopes(root, undefined)).toHaveProperty('problem');
    expect(await baseScopes(root, '--output=/tmp/x')).toEqual({
      problem: 'the base "--output=/tmp/x" is not a commit name',
    });
    expect(gitIn(root, 'status', '--porcelain')).toBe('');
  });
});

describe('--git-credential and --registry-credential', () => {
  it('takes hosts with dots and ports, and never shows the value', () => {
    expect(pairFlags('git-credential', ['github.com=tok', 'git.example.com:8443=a=b'])).toEqual({
      'github.com': 'tok',
      'git.example.com:8443': 'a=b',
    });
    expect(() => pairFlags('git-credential', ['s3cr3t'])).toThrow(
      '--git-credential: expected HOST=VALUE (the argument is not shown: it may be a secret)',
    );
  });
});

describe('where a registry sends the pull', () => {
  it('checks every hop, and sends the login only to its own origin', async () => {
    const seen: { port: number; path: string; authorization?: string }[] = [];
    const listen = (answer: (req: http.IncomingMessage, res: http.ServerResponse) => void) =>
      new Promise<http.Server>((resolve) => {
        const server = http.createServer((req, res) => {
          seen.push({
            port: (server.address() as AddressInfo).port,
            path: req.url ?? '',
            ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
          });
          answer(req, res);
        });
        server.listen(0, '127.0.0.1', () => {
          resolve(server);
        });
      });
    const far = await listen((_, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    const farUrl = `http://127.0.0.1:${(far.address() as AddressInfo).port}`;
    const near = await listen((req, res) => {
      const to = req.url?.includes('go-far') ? `${farUrl}/blocked` : `${farUrl}/ok`;
      res.writeHead(302, { location: to }).end();
    });
    const base = `http://127.0.0.1:${(near.address() as AddressInfo).port}/v2`;
    try {
      const login = { username: 'u', password: 'p' };
      const checked: string[] = [];
      const client = new RegistryClient(
        { registry: 'r', base, repository: 'app' },
        login,
        () => {},
        AbortSignal.timeout(10_000),
        (url) => {
          checked.push(url);
          return url.endsWith('/blocked') ? Promise.reject(new Error(`refused ${url}`)) : Promise.resolve();
        },
      );
      // A login the client has (as after basic auth) goes to the registry, not to where it redirects.
      (client as unknown as { authorization: string }).authorization = 'Basic dTpw';
      await client.get('/app/manifests/ok', undefined, 1024, 'the manifest');
      expect(checked).toEqual([`${base}/app/manifests/ok`, `${farUrl}/ok`]);
      expect(seen.map((s) => s.authorization)).toEqual(['Basic dTpw', undefined]);
      await expect(client.get('/app/manifests/go-far', undefined, 1024, 'the manifest')).rejects.toThrow(
        `refused ${farUrl}/blocked`,
      );
      expect(seen.filter((s) => s.path === '/blocked')).toEqual([]);
    } finally {
      near.close();
      far.close();
    }
  });

  it('refuses a hop to this machine unless allowed', async () => {
    const def: FetchedDef = {
      kind: 'OCIRepository',
      namespace: 'n',
      name: 'o',
      file: 'o.yaml',
      url: 'oci://ghcr.io/app',
    };
    await expect(
      checkHopUrl(def, 'http://169.254.169.254/latest/meta-data', false, () => Promise.resolve([])),
    ).rejects.toThrow(
      'OCIRepository n/o (o.yaml): its server sent the fetch to http://169.254.169.254: 169.254.169.254 is a cloud metadata service',
    );
    await expect(
      checkHopUrl(def, 'https://pkg-containers.githubusercontent.com/x', false, () =>
        Promise.resolve(['185.199.108.154']),
      ),
    ).resolves.toBeUndefined();
    await expect(checkHopUrl(def, 'http://127.0.0.1:9/x', true)).resolves.toBeUndefined();
  });
});

describe('Secrets of postBuild.substituteFrom in an untrusted tree', () => {
  const ks = (ns: string | undefined, name: string, from: string) =>
    `apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: ${name}\n${ns ? `  namespace: ${ns}\n` : ''}spec:\n  postBuild:\n    substituteFrom:\n${from}`;
  it.each([
    ['a Secret', ks('apps', 'web', '      - kind: Secret\n        name: db\n'), [substituteScope('apps', 'web', 'db')]],
    [
      'the default namespace',
      ks(undefined, 'web', '      - {kind: Secret, name: db}\n'),
      [substituteScope('flux-system', 'web', 'db')],
    ],
    ['a ConfigMap only', ks('apps', 'web', '      - {kind: ConfigMap, name: vars}\n'), []],
    [
      'a null entry',
      ks('apps', 'web', '      -\n      - {kind: Secret, name: db}\n'),
      [substituteScope('apps', 'web', 'db')],
    ],
    ['another kind', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: substituteFrom}\n', []],
  ])('%s', (_, text, want) => {
    expect(substituteSecretsIn(text)).toEqual(want);
  });

  it('reads one only for the Kustomization that reads it on the base commit', () => {
    const trust = {
      trusted: false as const,
      reason: 'this run is a preview, whose tree is not trusted',
      base: new Set([substituteScope('apps', 'web', 'db')]),
    };
    expect(substituteVerdict('apps', 'web', 'db', trust)).toEqual({ use: true });
    expect(substituteVerdict('kube-system', 'web', 'db', trust).use).toBe(false);
    expect(substituteVerdict('apps', 'web', 'db-admin', trust).use).toBe(false);
    const other = substituteVerdict('apps', 'evil', 'db', trust);
    expect(other.use ? '' : other.why).toContain("the base commit's Kustomization apps/evil does not read it");
    expect(substituteVerdict('apps', 'evil', 'db', { trusted: true }).use).toBe(true);
  });
});
