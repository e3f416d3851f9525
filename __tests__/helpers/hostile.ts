// The hostile-PR suite's tools (__tests__/attack/): loopback listeners that record every request,
// canaries planted in every credential source and looked for in every request and output channel,
// the workflow-command reading of the action's output the way the Actions runner reads it, and one
// run of the bundled action in preview on a pull_request event from a real git workspace (a BASE
// commit and the PR's HEAD commit).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { runAction, type ActionResult } from './action.js';
import { adminClient, kubeconfigPath } from './cluster.js';
import { startFakeGitHub, type FakeGitHub } from './github-server.js';
import { commitAll, gitIn } from './git-repos.js';
import { REPO } from './paths.js';

// ---- listeners ------------------------------------------------------------------------------------

/** One request as a listener received it. */
export interface Recorded {
  /** The connection it came on (1, 2, … per listener). */
  connection: number;
  method: string;
  url: string;
  /** Every header line, as sent (name, value), in order. */
  headers: [string, string][];
  /** The body (at most 1 MiB kept). */
  body: Buffer;
}

/**
 * How a listener answers:
 * - `challenge`: a request without Authorization gets 401 `WWW-Authenticate: Basic realm="x"` (so a
 *   client that sends credentials only when challenged sends them), one with it gets 404;
 * - `s3`: 403 with S3's XML error (AccessDenied); `message` replaces its Message text;
 * - `s3-endless`: a ListObjectsV2 (`list-type=2`) gets 200 and a body that never ends (until the
 *   client hangs up, or 2 GiB); any other request 404 NoSuchKey;
 * - `oci-tags`: a registry that lists `tags` for any repository (and 401s nothing);
 * - `oci-error`: a registry error (`errors[0].message` = `message`) for every request;
 * - `stall`: never answers.
 */
export type ListenerMode =
  | { kind: 'challenge' }
  | { kind: 's3'; message?: string }
  | { kind: 's3-endless' }
  | { kind: 'oci-tags'; tags: string[] }
  | { kind: 'oci-error'; message: string; status?: number }
  | { kind: 'stall' };

export interface Listener {
  name: string;
  /** `127.0.0.1:PORT`. */
  host: string;
  port: number;
  records: Recorded[];
  /** TCP connections accepted (a client that connects and sends nothing, or TLS, counts too). */
  connections: number;
  /** Bytes of body sent by `s3-endless`. */
  sent: number;
  close(): Promise<void>;
}

const KEEP_BODY = 1 << 20;

export async function startListener(name: string, mode: ListenerMode = { kind: 'challenge' }): Promise<Listener> {
  const records: Recorded[] = [];
  const sockets = new Set<Socket>();
  const ids = new WeakMap<Socket, number>();
  const state = { connections: 0, sent: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    let kept = 0;
    req.on('data', (c: Buffer) => {
      if (kept < KEEP_BODY) {
        chunks.push(c);
        kept += c.length;
      }
    });
    req.on('end', () => {
      const headers: [string, string][] = [];
      for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) headers.push([req.rawHeaders[i]!, req.rawHeaders[i + 1]!]);
      records.push({
        connection: ids.get(req.socket) ?? 0,
        method: req.method ?? '',
        url: req.url ?? '',
        headers,
        body: Buffer.concat(chunks),
      });
      answer(mode, req, res, state);
    });
  });
  server.on('connection', (socket: Socket) => {
    state.connections++;
    ids.set(socket, state.connections);
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  // A client that speaks TLS or garbage: still a connection, recorded as such.
  server.on('clientError', (_err, socket: Socket) => {
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    name,
    host: `127.0.0.1:${port}`,
    port,
    records,
    get connections() {
      return state.connections;
    },
    get sent() {
      return state.sent;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => {
          resolve();
        });
      }),
  };
}

function s3Error(code: string, message: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message><RequestId>KR0001</RequestId><HostId>kr</HostId></Error>`;
}

function answer(
  mode: ListenerMode,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  state: { sent: number },
): void {
  switch (mode.kind) {
    case 'challenge': {
      if (req.headers.authorization === undefined) {
        res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="x"', 'Content-Type': 'text/plain' }).end('unauthorized');
      } else res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
      return;
    }
    case 's3':
      res
        .writeHead(403, { 'Content-Type': 'application/xml' })
        .end(s3Error('AccessDenied', mode.message ?? 'Access Denied'));
      return;
    case 'oci-tags': {
      const u = new URL(req.url ?? '/', 'http://x');
      if (u.pathname === '/v2/' || u.pathname === '/v2') {
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
      } else if (/\/tags\/list$/.test(u.pathname)) {
        const repo = u.pathname.slice('/v2/'.length, -'/tags/list'.length);
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ name: repo, tags: mode.tags }));
      } else {
        res
          .writeHead(404, { 'Content-Type': 'application/json' })
          .end('{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}');
      }
      return;
    }
    case 'oci-error':
      res
        .writeHead(mode.status ?? 404, { 'Content-Type': 'application/json' })
        .end(JSON.stringify({ errors: [{ code: 'MANIFEST_UNKNOWN', message: mode.message }] }));
      return;
    case 's3-endless': {
      if (!/[?&]list-type=2/.test(req.url ?? '')) {
        res
          .writeHead(404, { 'Content-Type': 'application/xml' })
          .end(s3Error('NoSuchKey', 'The specified key does not exist.'));
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/xml' });
      const head =
        '<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix></Prefix><KeyCount>1000</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>';
      const entry = (i: number) =>
        `<Contents><Key>k/${String(i).padStart(12, '0')}.yaml</Key><LastModified>2024-01-01T00:00:00.000Z</LastModified><ETag>&quot;0123456789abcdef0123456789abcdef&quot;</ETag><Size>1</Size><StorageClass>STANDARD</StorageClass></Contents>`;
      let i = 0;
      let stopped = false;
      res.on('close', () => {
        stopped = true;
      });
      const chunkOf = () => {
        let s = '';
        for (let n = 0; n < 256; n++) s += entry(i++);
        return s;
      };
      res.write(head);
      const pump = () => {
        while (!stopped && state.sent < 2 * 1024 ** 3) {
          const chunk = chunkOf();
          state.sent += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        if (!stopped) res.end('</ListBucketResult>');
      };
      pump();
      return;
    }
    case 'stall':
      return;
  }
}

// ---- canaries ------------------------------------------------------------------------------------

/** A unique secret value planted in one credential source. */
export interface Canary {
  /** Where it was planted, e.g. `Secret kube-system/registry-admin password`. */
  where: string;
  value: string;
}

const hex = (n: number) => randomBytes(n).toString('hex');
const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const upper = (n: number) => Array.from(randomBytes(n), (b) => B32[b % 32]).join('');

/** The canaries of one Secret: the fields source Secrets have, each a fresh value. */
export interface SecretCanaries {
  username: Canary;
  password: Canary;
  bearerToken: Canary;
  accesskey: Canary;
  secretkey: Canary;
  /** The login of the Secret's .dockerconfigjson (`auths` for every host given to secretData). */
  dockerUser: Canary;
  dockerPassword: Canary;
}

export function secretCanaries(where: string): SecretCanaries {
  const c = (field: string, value: string): Canary => ({ where: `${where} ${field}`, value });
  return {
    username: c('username', `kruser${hex(8)}`),
    password: c('password', `krpass${hex(12)}`),
    bearerToken: c('bearerToken', `krbearer${hex(12)}`),
    accesskey: c('accesskey', `AKIA${upper(16)}`),
    secretkey: c('secretkey', `krsecretkey${hex(14)}`),
    dockerUser: c('.dockerconfigjson username', `krdockeruser${hex(6)}`),
    dockerPassword: c('.dockerconfigjson password', `krdockerpass${hex(12)}`),
  };
}

export const canaryList = (s: SecretCanaries): Canary[] => [
  s.username,
  s.password,
  s.bearerToken,
  s.accesskey,
  s.secretkey,
  s.dockerUser,
  s.dockerPassword,
];

/** The Secret's data (stringData) for `s`, its .dockerconfigjson with a login for each of `hosts`. */
export function secretData(s: SecretCanaries, hosts: readonly string[]): Record<string, string> {
  const auth = Buffer.from(`${s.dockerUser.value}:${s.dockerPassword.value}`).toString('base64');
  const auths = Object.fromEntries(
    hosts.map((h) => [h, { username: s.dockerUser.value, password: s.dockerPassword.value, auth }]),
  );
  return {
    username: s.username.value,
    password: s.password.value,
    bearerToken: s.bearerToken.value,
    accesskey: s.accesskey.value,
    secretkey: s.secretkey.value,
    '.dockerconfigjson': JSON.stringify({ auths }),
  };
}

/** Creates (or replaces) an Opaque Secret holding `data`. */
export async function putSecret(
  client: ClusterClient,
  namespace: string,
  name: string,
  data: Record<string, string>,
): Promise<void> {
  await client.request('DELETE', `/api/v1/namespaces/${namespace}/secrets/${name}`).catch(() => undefined);
  await client.request('POST', `/api/v1/namespaces/${namespace}/secrets`, {
    body: { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace }, type: 'Opaque', stringData: data },
  });
}

/** The canaries of the action's inputs and environment. */
export interface InputCanaries {
  gitToken: Canary;
  registryUser: Canary;
  registryPassword: Canary;
  githubToken: Canary;
  ageKey: Canary;
  awsKeyId: Canary;
  awsSecret: Canary;
  awsSession: Canary;
}

export const inputCanaryList = (i: InputCanaries): Canary[] => [
  i.gitToken,
  i.registryUser,
  i.registryPassword,
  i.githubToken,
  i.ageKey,
  i.awsKeyId,
  i.awsSecret,
  i.awsSession,
];

export async function inputCanaries(): Promise<InputCanaries> {
  const { generateIdentity } = await import('age-encryption');
  return {
    gitToken: { where: 'input git-credentials (github.com)', value: `krgittoken${hex(12)}` },
    registryUser: { where: 'input registry-credentials user (ghcr.io)', value: `krreguser${hex(6)}` },
    registryPassword: { where: 'input registry-credentials password (ghcr.io)', value: `krregpass${hex(12)}` },
    githubToken: { where: 'input github-token', value: `ghs_kr${hex(16)}` },
    ageKey: { where: 'input sops-age-key', value: await generateIdentity() },
    awsKeyId: { where: 'env AWS_ACCESS_KEY_ID', value: `ASIA${upper(16)}` },
    awsSecret: { where: 'env AWS_SECRET_ACCESS_KEY', value: `krawssecret${hex(14)}` },
    awsSession: { where: 'env AWS_SESSION_TOKEN', value: `krawssession${hex(20)}` },
  };
}

/** The user names a credential may be paired with in basic auth. */
const USERS = ['x-access-token', 'token', 'oauth2', 'git', 'AWS', ''];

/**
 * Which of `canaries` appear in `text`: raw, base64 (of the value, and of `user:value` for the
 * usual user names and the other canaries), inside any base64 or URL-encoded run of the text.
 */
export function canariesIn(text: string, canaries: readonly Canary[]): Canary[] {
  if (text === '') return [];
  const expanded = [text];
  for (const m of text.matchAll(/[A-Za-z0-9+/_-]{12,}={0,2}/g)) {
    for (const alphabet of ['base64', 'base64url'] as const) {
      const decoded = Buffer.from(m[0], alphabet).toString('latin1');
      if (/[\x20-\x7e]{8,}/.test(decoded)) expanded.push(decoded);
    }
  }
  if (text.includes('%')) {
    try {
      expanded.push(decodeURIComponent(text));
    } catch {
      expanded.push(text.replace(/%([0-9a-f]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16))));
    }
  }
  const hay = expanded.join('\n');
  const users = [...USERS, ...canaries.map((c) => c.value)];
  return canaries.filter((c) => {
    if (hay.includes(c.value)) return true;
    const forms = [c.value, ...users.map((u) => `${u}:${c.value}`)].map((f) => Buffer.from(f).toString('base64'));
    // The encoding of the value (or user:value) at the start of a longer run: its last group may differ.
    return forms.some((f) => hay.includes(f.replace(/=+$/, '').slice(0, -2)));
  });
}

/** A recorded request as one text, for canariesIn. */
export function requestText(r: Recorded): string {
  return [`${r.method} ${r.url}`, ...r.headers.map(([k, v]) => `${k}: ${v}`), r.body.toString('latin1')].join('\n');
}

// ---- workflow commands ---------------------------------------------------------------------------

export interface Command {
  /** `v2` (`::name props::data` after leading whitespace) or `legacy` (`##[name props]data` anywhere). */
  format: 'v2' | 'legacy';
  name: string;
  props: string;
  data: string;
  line: string;
  stream: 'stdout' | 'stderr';
}

/** Commands the action never issues: one of them in its output means the output was taken over. */
export const FORBIDDEN_COMMANDS = ['stop-commands', 'add-path', 'set-env', 'set-output', 'save-state', 'echo'];

/**
 * .NET's String.TrimStart(): every Char.IsWhiteSpace character, which is not JavaScript's \s:
 * U+0085 (NEL) is white space to .NET and not to JavaScript (and U+FEFF the other way round).
 */
export function dotnetTrimStart(s: string): string {
  return s.replace(/^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/, '');
}

/** The commands the runner registers (actions/runner ActionCommandManager and its extensions). */
const REGISTERED = new Set([
  'add-mask',
  'add-path',
  'add-matcher',
  'remove-matcher',
  'debug',
  'notice',
  'warning',
  'error',
  'group',
  'endgroup',
  'echo',
  'save-state',
  'set-env',
  'set-output',
  'stop-commands',
  'internal-set-repo-path',
]);

/**
 * The command a line is to the runner, or undefined: the v2 form when its name is a registered
 * command, else the legacy form; a v2-looking line with an unknown name is still returned (its
 * name may carry a marker).
 */
export function commandOf(line: string, stream: 'stdout' | 'stderr'): Command | undefined {
  const t = dotnetTrimStart(line);
  let v2: Command | undefined;
  if (t.startsWith('::')) {
    const end = t.indexOf('::', 2);
    if (end >= 0) {
      const info = t.slice(2, end);
      const sp = info.indexOf(' ');
      v2 = {
        format: 'v2',
        name: sp < 0 ? info : info.slice(0, sp),
        props: sp < 0 ? '' : info.slice(sp + 1),
        data: t.slice(end + 2),
        line,
        stream,
      };
      if (REGISTERED.has(v2.name)) return v2;
    }
  }
  const at = line.indexOf('##[');
  if (at >= 0) {
    const rb = line.indexOf(']', at);
    if (rb >= 0) {
      const info = line.slice(at + 3, rb);
      const sp = info.indexOf(' ');
      return {
        format: 'legacy',
        name: sp < 0 ? info : info.slice(0, sp),
        props: sp < 0 ? '' : info.slice(sp + 1),
        data: line.slice(rb + 1),
        line,
        stream,
      };
    }
  }
  return v2;
}

/**
 * The output as the runner reads it: the commands it would run, and the lines it would show (an
 * `add-mask` is consumed, not shown; after `stop-commands::TOKEN` nothing is a command until
 * `::TOKEN::`, so later masks are shown, and ignored). Lines split at \n and at a lone \r too, as
 * .NET's ReadLine splits the runner's input.
 */
export function runnerView(text: string, stream: 'stdout' | 'stderr'): { commands: Command[]; shown: string[] } {
  const commands: Command[] = [];
  const shown: string[] = [];
  let stopped: string | undefined;
  for (const line of text.split(/\r\n|\n|\r/)) {
    if (stopped !== undefined) {
      if (line.trim() === `::${stopped}::`) stopped = undefined;
      else shown.push(line);
      continue;
    }
    const cmd = commandOf(line, stream);
    if (cmd === undefined) {
      shown.push(line);
      continue;
    }
    commands.push(cmd);
    if (cmd.name === 'stop-commands') stopped = cmd.data;
    else if (cmd.name !== 'add-mask') shown.push(line);
  }
  return { commands, shown };
}

/**
 * What in the output is a command the action did not mean: a command any of whose name or
 * properties holds `marker`, or whose data starts with it (each fixture puts its marker right after
 * the command it tries to inject); and any command the action never issues.
 */
export function injectedCommands(stdout: string, stderr: string, marker?: string): string[] {
  const out: string[] = [];
  for (const [stream, text] of [
    ['stdout', stdout],
    ['stderr', stderr],
  ] as const) {
    for (const c of runnerView(text, stream).commands) {
      const forged =
        marker !== undefined &&
        (c.name.includes(marker) || c.props.includes(marker) || c.data.trimStart().startsWith(marker));
      if (forged || FORBIDDEN_COMMANDS.includes(c.name.toLowerCase())) {
        out.push(`${stream} ${c.format} command ${c.name}: ${JSON.stringify(c.line.slice(0, 300))}`);
      }
    }
  }
  return out;
}

// ---- one run --------------------------------------------------------------------------------------

/** Files of a tree: path → text, or `{ symlink: target }` (committed as a link); `null` in a HEAD change deletes the file. */
export type Files = Record<string, string | Buffer | { symlink: string } | null>;

async function writeFiles(root: string, files: Files): Promise<void> {
  for (const [rel, text] of Object.entries(files)) {
    const path = join(root, rel);
    if (text === null) {
      await rm(path, { force: true, recursive: true });
      continue;
    }
    await mkdir(dirname(path), { recursive: true });
    if (typeof text === 'object' && !Buffer.isBuffer(text)) {
      await rm(path, { force: true, recursive: true });
      await symlink(text.symlink, path);
    } else await writeFile(path, text);
  }
}

/** A git workspace: BASE (the trusted state) committed, then the PR's HEAD on top; both shas. */
export async function prWorkspace(
  base: Files,
  head: Files,
): Promise<{ root: string; baseSha: string; headSha: string }> {
  const root = await mkdtemp(join(tmpdir(), 'kr-attack-ws-'));
  gitIn(root, 'init', '-q', '-b', 'main');
  gitIn(root, 'remote', 'add', 'origin', 'https://github.com/org/repo.git');
  await writeFiles(root, base);
  const baseSha = commitAll(root, 'base');
  gitIn(root, 'checkout', '-q', '-b', 'feature');
  await writeFiles(root, head);
  const headSha = commitAll(root, 'the pull request');
  return { root, baseSha, headSha };
}

/** A pull_request event from a branch of the same repository (org/repo), and GitHub's variables for it. */
export function pullRequestEvent(
  number: number,
  baseSha: string,
  headSha: string,
): { event: { name: string; payload: unknown }; env: NodeJS.ProcessEnv } {
  const repo = { full_name: 'org/repo', name: 'repo', owner: { login: 'org' } };
  return {
    event: {
      name: 'pull_request',
      payload: {
        action: 'synchronize',
        number,
        pull_request: {
          number,
          base: { sha: baseSha, ref: 'main', repo },
          head: { sha: headSha, ref: 'feature', repo },
        },
        repository: repo,
      },
    },
    env: {
      GITHUB_REPOSITORY: 'org/repo',
      GITHUB_SERVER_URL: 'https://github.com',
      GITHUB_RUN_ID: '4242',
      GITHUB_SHA: headSha,
      GITHUB_REF: `refs/pull/${number}/merge`,
      GITHUB_BASE_REF: 'main',
      GITHUB_HEAD_REF: 'feature',
      GITHUB_ACTIONS: 'true',
    },
  };
}

/** Bytes under `dir` (0 when it is gone). */
export function diskUsage(dir: string): Promise<number> {
  return new Promise((resolve) => {
    execFile('du', ['-sb', dir], (err, stdout) => {
      resolve(err && stdout === '' ? 0 : Number.parseInt(stdout.split('\t')[0] ?? '0', 10) || 0);
    });
  });
}

/** A process's peak resident set (VmHWM) in bytes, while it runs; undefined once it is gone. */
export async function peakRss(pid: number): Promise<number | undefined> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const m = /VmHWM:\s+(\d+) kB/.exec(status);
  return m ? Number(m[1]) * 1024 : undefined;
}

/** Entries of `dir` whose name starts with `kr-` (the action's temporary directories). */
export async function krEntries(dir: string): Promise<string[]> {
  return (await readdir(dir).catch(() => [] as string[])).filter((n) => n.startsWith('kr-'));
}

/** Every path under `dir` whose file name includes `part`. */
export async function findNamed(dir: string, part: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true }).catch(() => [])) {
      const p = join(d, e.name);
      if (e.name.includes(part)) out.push(p);
      if (e.isDirectory()) await walk(p);
    }
  };
  await walk(dir);
  return out;
}

export interface HostileRun extends ActionResult {
  baseSha: string;
  headSha: string;
  workspace: string;
  runnerTemp: string;
  tmp: string;
  ms: number;
  /** Peak of du(RUNNER_TEMP) + du(TMPDIR), polled every 500 ms and at the end. */
  peakScratch: number;
  /** Peak VmHWM of the action's process. */
  peakRss: number;
  /** What the fake GitHub stored for this PR and head commit: comment bodies and check runs, as JSON. */
  github: string[];
  /** ConfigMaps and Secrets that appeared in the cluster during the run (JSON, Secret data decoded). */
  written: { path: string; text: string }[];
}

export interface RunOptions {
  client: ClusterClient;
  github: FakeGitHub;
  /** The pull request's number (one per case: the comment and the check run are told apart by it). */
  number: number;
  base: Files;
  head: Files;
  inputs: Record<string, string>;
  env?: NodeJS.ProcessEnv;
  /** The event, when not the pull request's (mode plan on a push, say). */
  event?: (baseSha: string, headSha: string) => { name: string; payload: unknown };
  timeoutMs?: number;
  /** Called with the workspace once BASE and HEAD are committed, before the run (what checkout adds: `.git/config`). */
  workspaceReady?: (workspace: string) => Promise<void>;
  /** Called once the action runs, with its process and the run's scratch directories. */
  during?: (child: import('node:child_process').ChildProcess, dirs: { runnerTemp: string; tmp: string }) => void;
}

interface Listed {
  items: {
    metadata: { name: string; namespace: string; uid: string };
    data?: Record<string, string>;
  }[];
}

/** One run of the bundled action on a PR workspace, with everything it can have written gathered. */
export async function runHostile(opts: RunOptions): Promise<HostileRun> {
  const { root, baseSha, headSha } = await prWorkspace(opts.base, opts.head);
  await opts.workspaceReady?.(root);
  const runnerTemp = await mkdtemp(join(tmpdir(), 'atk-runner-temp-'));
  const tmp = await mkdtemp(join(tmpdir(), 'atk-tmpdir-'));
  const pr = pullRequestEvent(opts.number, baseSha, headSha);
  const before = new Set<string>();
  for (const kind of ['configmaps', 'secrets'] as const) {
    for (const item of (await opts.client.request<Listed>('GET', `/api/v1/${kind}`)).items)
      before.add(item.metadata.uid);
  }
  const started = Date.now();
  let peakScratch = 0;
  let peak = 0;
  let pid: number | undefined;
  const state = { done: false };
  const poll = (async () => {
    while (!state.done) {
      const [a, b] = await Promise.all([diskUsage(runnerTemp), diskUsage(tmp)]);
      peakScratch = Math.max(peakScratch, a + b);
      if (pid !== undefined) peak = Math.max(peak, (await peakRss(pid)) ?? 0);
      await new Promise((r) => setTimeout(r, 500));
    }
  })();
  let res: ActionResult;
  try {
    res = await runAction(root, opts.inputs, {
      env: {
        ...pr.env,
        GITHUB_API_URL: opts.github.url,
        RUNNER_TEMP: runnerTemp,
        TMPDIR: tmp,
        ...opts.env,
      },
      event: opts.event ? opts.event(baseSha, headSha) : pr.event,
      timeoutMs: opts.timeoutMs ?? 90_000,
      onStart: (child) => {
        pid = child.pid;
        // VmHWM is only there while the process lives: read it as often as it is cheap to.
        const rss = setInterval(() => {
          if (pid !== undefined)
            void peakRss(pid).then((v) => {
              peak = Math.max(peak, v ?? 0);
            });
        }, 100);
        child.on('exit', () => {
          clearInterval(rss);
        });
        opts.during?.(child, { runnerTemp, tmp });
      },
    });
  } finally {
    state.done = true;
    await poll;
  }
  const [a, b] = await Promise.all([diskUsage(runnerTemp), diskUsage(tmp)]);
  peakScratch = Math.max(peakScratch, a + b);
  const github = [
    ...opts.github.comments.filter((c) => c.issue_number === opts.number).map((c) => c.body),
    ...opts.github.checkRuns.filter((c) => c.head_sha === headSha).map((c) => JSON.stringify(c)),
  ];
  const written: HostileRun['written'] = [];
  for (const kind of ['configmaps', 'secrets'] as const) {
    const list = await opts.client.request<Listed>('GET', `/api/v1/${kind}`);
    for (const item of list.items) {
      if (before.has(item.metadata.uid)) continue;
      const data = Object.fromEntries(
        Object.entries(item.data ?? {}).map(([k, v]) => [
          k,
          kind === 'secrets' ? Buffer.from(v, 'base64').toString('utf8') : v,
        ]),
      );
      written.push({
        path: `${kind}/${item.metadata.namespace}/${item.metadata.name}`,
        text: JSON.stringify({ ...item, data }),
      });
    }
  }
  return {
    ...res,
    baseSha,
    headSha,
    workspace: root,
    runnerTemp,
    tmp,
    ms: Date.now() - started,
    peakScratch,
    peakRss: peak,
    github,
    written,
  };
}

/** Removes what a run left on disk. */
export async function cleanupRun(run: HostileRun): Promise<void> {
  for (const d of [run.workspace, run.runnerTemp, run.tmp]) await rm(d, { recursive: true, force: true });
}

// ---- verdicts ------------------------------------------------------------------------------------

export interface HostileRunArgs {
  run: HostileRun;
  canaries: readonly Canary[];
  /** Listeners of the case, each with the canaries it may legitimately receive. */
  listeners: readonly { listener: Listener; allowed?: readonly Canary[] }[];
  marker?: string;
  /** The namespace of the case (an inventory ConfigMap there, or naming it, must not appear). */
  namespace: string;
}

/**
 * Every way a run leaked: a canary at a listener not allowed it, a canary in an output channel
 * (the log as the runner shows it, the summary, the outputs, the PR comment and check run, what the
 * run wrote in the cluster), an injected or forbidden workflow command, an inventory ConfigMap.
 */
export function evidenceOf(a: HostileRunArgs): string[] {
  const out: string[] = [];
  const { run, canaries } = a;
  const seen = (what: string, text: string) => {
    for (const c of canariesIn(text, canaries)) out.push(`${c.where} in ${what}`);
  };
  for (const { listener, allowed = [] } of a.listeners) {
    const ok = new Set(allowed.map((c) => c.value));
    const unexpected = canaries.filter((c) => !ok.has(c.value));
    for (const r of listener.records) {
      for (const c of canariesIn(requestText(r), unexpected)) {
        out.push(`${c.where} sent to listener ${listener.name} (${r.method} ${r.url.slice(0, 80)})`);
      }
    }
  }
  const stdout = runnerView(run.stdout, 'stdout').shown.join('\n');
  const stderr = runnerView(run.stderr, 'stderr').shown.join('\n');
  seen('the log (stdout, as shown)', stdout);
  seen('the log (stderr, as shown)', stderr);
  seen('the job summary', run.summary);
  seen(
    'the GITHUB_OUTPUT file',
    Object.entries(run.outputs)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n'),
  );
  for (const g of run.github) seen('the PR comment / check run', g);
  for (const w of run.written) seen(`the cluster (${w.path}, written by the run)`, w.text);
  out.push(...injectedCommands(run.stdout, run.stderr, a.marker).map((c) => `workflow command: ${c}`));
  for (const w of run.written) {
    const name = w.path.split('/').pop()!;
    if (
      name.startsWith('kustomize-reconcile.') &&
      (w.path.includes(`/${a.namespace}/`) || name.includes(a.namespace))
    ) {
      out.push(`a preview wrote the inventory ${w.path}`);
    }
  }
  return out;
}

// ---- results -------------------------------------------------------------------------------------

export const RESULTS_DIR = join(REPO, 'reports', 'attack');

export interface AttackResult {
  attack: string;
  title: string;
  /** A positive control: not an attack, and not counted; `succeeded` then means the control failed. */
  control?: boolean;
  succeeded: boolean;
  evidence: string[];
  ms?: number;
  error?: string;
  [more: string]: unknown;
}

export async function writeResult(r: AttackResult): Promise<void> {
  await mkdir(RESULTS_DIR, { recursive: true });
  await writeFile(join(RESULTS_DIR, `${r.attack}.json`), `${JSON.stringify(r, null, 2)}\n`);
}

/** A case of the suite: its result file's name (`attack`) and title; a control is not an attack. */
export interface CaseInfo {
  id: string;
  title: string;
  control?: boolean;
  /** What the case's failure says (else that the attack got through, or that the control failed). */
  message?: string;
}

/**
 * Runs one case: writes its result file as not finished, runs `body` (which pushes to `evidence`
 * what shows the attack got through, and may set more fields of the result file on `result`: an
 * exit code, a log…), then writes the result file (an error thrown by `body` is evidence too, and
 * `result`'s fields are written all the same), runs `cleanup`, and fails the test when there is
 * any evidence.
 */
export async function attackCase(
  c: CaseInfo,
  body: (evidence: string[], result: Record<string, unknown>) => Promise<void>,
  cleanup?: () => Promise<unknown>,
): Promise<void> {
  const started = Date.now();
  const head = { attack: c.id, title: c.title, ...(c.control ? { control: true } : {}) };
  await writeResult({ ...head, succeeded: true, evidence: ['the case did not finish'] });
  const evidence: string[] = [];
  const result: Record<string, unknown> = {};
  let error: string | undefined;
  try {
    await body(evidence, result);
  } catch (err) {
    error = (err as Error).stack ?? String(err);
    evidence.push(`the case failed to run: ${(err as Error).message}`);
  } finally {
    await writeResult({
      ...head,
      succeeded: evidence.length > 0,
      evidence,
      ms: Date.now() - started,
      ...result,
      ...(error !== undefined ? { error } : {}),
    });
    await cleanup?.();
  }
  expect(error).toBeUndefined();
  const message = c.message ?? (c.control ? 'the control did not see the legitimate send' : 'the attack got through');
  expect(evidence, message).toEqual([]);
}

/** Every channel a run publishes, as a reader sees it (the log as the runner shows it), by name. */
export function publishedChannels(run: HostileRun): [string, string][] {
  return [
    ['the log (stdout, as shown)', runnerView(run.stdout, 'stdout').shown.join('\n')],
    ['the log (stderr, as shown)', runnerView(run.stderr, 'stderr').shown.join('\n')],
    ['the job summary', run.summary],
    [
      'the outputs',
      Object.entries(run.outputs)
        .map(([k, v]) => `${k}=${v}`)
        .join('\n'),
    ],
    ['the PR comment / check run', run.github.join('\n')],
  ];
}

/** What a file of hostile preview cases shares: an admin client, the cluster's kubeconfig, a fake GitHub. */
export interface PreviewFixture {
  client: ClusterClient;
  github: FakeGitHub;
  kubeconfig: string;
  /** The one token the fake GitHub takes, with a preview's permissions. */
  githubToken: string;
}

/** Sets up a PreviewFixture before the file's cases and tears it down after (read it inside a case). */
export function previewFixture(): PreviewFixture {
  const f = { githubToken: `ghs_${randomBytes(16).toString('hex')}` } as PreviewFixture;
  beforeAll(async () => {
    f.client = await adminClient();
    f.kubeconfig = await readFile(kubeconfigPath(), 'utf8');
    f.github = await startFakeGitHub({
      tokens: { [f.githubToken]: { pull_requests: 'write', checks: 'write', contents: 'read' } },
    });
  }, 60_000);
  afterAll(async () => {
    await f.github.close();
    f.client.close();
  });
  return f;
}
