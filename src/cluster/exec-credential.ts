/**
 * Exec credential plugins (a kubeconfig user's `exec:`), run with a time limit. client-node's own
 * ExecAuth waits for a plugin forever, runs it once per concurrent request, and reports a failed
 * plugin by its stderr alone (often empty); this one stops a plugin that takes too long, runs it once
 * for all the requests waiting on it, and names the user and the command in every error.
 */
import type { KubeConfig, User } from '@kubernetes/client-node';
import { spawn } from 'node:child_process';
import type https from 'node:https';
import { isAbsolute, resolve } from 'node:path';
import { truncate } from '../util/truncate.js';
import { formatDuration } from '../util/duration.js';
import { trackChild } from '../util/lifecycle.js';

/** The `exec` section of a kubeconfig user. */
export interface ExecConfig {
  command: string;
  args?: string[];
  env?: { name: string; value: string }[];
  apiVersion?: string;
  /** Shown when the command cannot be found, as kubectl shows it. */
  installHint?: string;
  /** Whether the plugin is told the cluster (KUBERNETES_EXEC_INFO spec.cluster). */
  provideClusterInfo?: boolean;
}

/** What a plugin with provideClusterInfo is told of the cluster (client-go's ExecCredential spec.cluster). */
export interface ExecClusterInfo {
  server: string;
  'tls-server-name'?: string;
  'insecure-skip-tls-verify'?: boolean;
  /** base64, as the JSON of client-go's []byte. */
  'certificate-authority-data'?: string;
  'proxy-url'?: string;
  /** The cluster's `client.authentication.k8s.io/exec` extension. */
  config?: unknown;
}

export interface ExecCredential {
  token?: string;
  clientCertificateData?: string;
  clientKeyData?: string;
  /** When the credential expires (ms since the epoch), if the plugin said. */
  expiresAt?: number;
}

/** How much of a plugin's output is kept: a credential is small; stderr is cut for the message anyway. */
const MAX_STDOUT = 1024 * 1024;
const MAX_STDERR = 64 * 1024;
/** A credential this close to its expiry is fetched again. */
const EXPIRY_MARGIN_MS = 10_000;

/**
 * Takes the exec sections out of `kc`'s users and answers for them instead of client-node's
 * ExecAuth: plugins run at most `timeoutMs`. `baseDir` is where a relative command path (one with a
 * slash) is resolved, as kubectl resolves it against the kubeconfig's directory. `cluster` is the
 * current context's cluster, told to a plugin with provideClusterInfo.
 */
export function installExecCredentials(
  kc: KubeConfig,
  timeoutMs: number,
  baseDir?: string,
  cluster?: ExecClusterInfo,
): void {
  const execs = new Map<string, ExecConfig>();
  const users = kc.getUsers();
  users.forEach((user, i) => {
    const exec = user.exec as ExecConfig | undefined | null;
    if (!exec) return;
    const command =
      typeof exec.command === 'string' && baseDir && exec.command.includes('/') && !isAbsolute(exec.command)
        ? resolve(baseDir, exec.command)
        : exec.command;
    execs.set(user.name, { ...exec, command });
    users[i] = { ...user, exec: undefined };
  });
  if (execs.size > 0) kc.addAuthenticator(new ExecCredentials(execs, timeoutMs, cluster));
}

/** client-node's Authenticator interface (not exported by its index). */
type Authenticator = Parameters<KubeConfig['addAuthenticator']>[0];

class ExecCredentials implements Authenticator {
  private readonly cache = new Map<string, { credential: Promise<ExecCredential>; expiresAt?: number }>();

  constructor(
    private readonly execs: ReadonlyMap<string, ExecConfig>,
    private readonly timeoutMs: number,
    private readonly cluster?: ExecClusterInfo,
  ) {}

  isAuthProvider(user: User): boolean {
    return this.execs.has(user.name);
  }

  async applyAuthentication(user: User, opts: https.RequestOptions): Promise<void> {
    const credential = await this.credential(user.name);
    if (credential.clientCertificateData) opts.cert = credential.clientCertificateData;
    if (credential.clientKeyData) opts.key = credential.clientKeyData;
    if (credential.token) {
      opts.headers ??= {};
      (opts.headers as Record<string, string>)['Authorization'] = `Bearer ${credential.token}`;
    }
  }

  /** The user's credential: the one in hand while it is valid; a failed run is not tried again. */
  private credential(name: string): Promise<ExecCredential> {
    const cached = this.cache.get(name);
    if (cached && (cached.expiresAt === undefined || cached.expiresAt - EXPIRY_MARGIN_MS > Date.now())) {
      return cached.credential;
    }
    const entry: { credential: Promise<ExecCredential>; expiresAt?: number } = {
      credential: runExecPlugin(name, this.execs.get(name)!, this.timeoutMs, this.cluster).then((c) => {
        if (c.expiresAt !== undefined) entry.expiresAt = c.expiresAt;
        return c;
      }),
    };
    this.cache.set(name, entry);
    return entry.credential;
  }
}

/**
 * Runs the plugin of kubeconfig user `user` once, stopping it after `timeoutMs`. It is told, as
 * client-go tells it, that it runs without a terminal (interactiveMode Never and IfAvailable alike:
 * a run has none), and the cluster when its exec section sets provideClusterInfo.
 */
export function runExecPlugin(
  user: string,
  exec: ExecConfig,
  timeoutMs: number,
  cluster?: ExecClusterInfo,
): Promise<ExecCredential> {
  const plugin = `kubeconfig user ${JSON.stringify(user)}: the exec credential plugin ${JSON.stringify(exec.command)}`;
  const apiVersion = exec.apiVersion ?? 'client.authentication.k8s.io/v1';
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const e of exec.env ?? []) env[e.name] = e.value;
  env['KUBERNETES_EXEC_INFO'] = JSON.stringify({
    apiVersion,
    kind: 'ExecCredential',
    spec: { interactive: false, ...(exec.provideClusterInfo === true && cluster ? { cluster } : {}) },
  });
  return new Promise<ExecCredential>((done, fail) => {
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn();
    };
    // Its own process group, so that a plugin that is a script is stopped with everything it started.
    const child = spawn(exec.command, exec.args ?? [], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    // Killed with its group should this process end first (util/lifecycle.ts).
    trackChild(child, true);
    const stop = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    const timer = setTimeout(() => {
      stop();
      finish(() => {
        fail(
          new Error(
            `${plugin} did not finish within ${formatDuration(timeoutMs)} and was stopped: make sure it runs without a terminal and can reach its identity provider (the request-timeout setting bounds it)`,
          ),
        );
      });
    }, timeoutMs);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      if (stdout.length < MAX_STDOUT) stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      if (stderr.length < MAX_STDERR) stderr += d;
    });
    child.on('error', (err: NodeJS.ErrnoException) => {
      finish(() => {
        const installHint = typeof exec.installHint === 'string' ? exec.installHint.trim() : '';
        const hint =
          err.code !== 'ENOENT'
            ? ''
            : installHint !== ''
              ? `: ${truncate(installHint, { chars: 600, lines: 8 })} (the kubeconfig's exec.installHint)`
              : ': install it or fix exec.command in the kubeconfig';
        fail(new Error(`${plugin} could not be started (${err.code ?? err.message})${hint}`, { cause: err }));
      });
    });
    child.on('close', (code, signal) => {
      finish(() => {
        if (code !== 0) {
          const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
          const text = stderr.trim();
          fail(new Error(`${plugin} ${how}${text ? `: ${truncate(text)}` : ', printing nothing on stderr'}`));
          return;
        }
        const parsed = parseExecCredential(stdout, apiVersion);
        if (typeof parsed === 'string') fail(new Error(`${plugin} ${parsed}`));
        else done(parsed);
      });
    });
  });
}

/**
 * The credential in a plugin's stdout (an ExecCredential), or what is wrong with it as the end of a
 * sentence. The output is never quoted: it holds the credential.
 */
export function parseExecCredential(stdout: string, apiVersion?: string): ExecCredential | string {
  let doc: unknown;
  try {
    doc = JSON.parse(stdout);
  } catch {
    return stdout.trim() === ''
      ? 'printed nothing on stdout: it should print an ExecCredential (JSON)'
      : 'printed something other than JSON on stdout: it should print an ExecCredential';
  }
  const returned = (doc as { apiVersion?: unknown } | null)?.apiVersion;
  if (apiVersion !== undefined && typeof returned === 'string' && returned !== apiVersion) {
    return `printed an ExecCredential of ${JSON.stringify(returned.slice(0, 60))}, but the kubeconfig's exec.apiVersion is ${JSON.stringify(apiVersion)}: make them the same`;
  }
  const status = (doc as { status?: unknown } | null)?.status;
  if (typeof status !== 'object' || status === null) {
    return 'printed JSON without a status: it should print an ExecCredential with status.token or a client certificate';
  }
  const s = status as Record<string, unknown>;
  const str = (k: string) => (typeof s[k] === 'string' && s[k] !== '' ? s[k] : undefined);
  const token = str('token');
  const clientCertificateData = str('clientCertificateData');
  const clientKeyData = str('clientKeyData');
  if (!token && !(clientCertificateData && clientKeyData)) {
    return 'printed an ExecCredential without status.token or status.clientCertificateData and status.clientKeyData';
  }
  const expiry = str('expirationTimestamp');
  const expiresAt = expiry ? Date.parse(expiry) : NaN;
  return {
    ...(token ? { token } : {}),
    ...(clientCertificateData ? { clientCertificateData } : {}),
    ...(clientKeyData ? { clientKeyData } : {}),
    ...(Number.isFinite(expiresAt) ? { expiresAt } : {}),
  };
}
