import { execFile, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { inject } from 'vitest';
import { ClusterClient } from '../../src/cluster/client.js';
import { isNotFound } from '../../src/cluster/errors.js';
import { loadKubeConfig } from '../../src/cluster/kubeconfig.js';
import { NODE, REPO } from './paths.js';

export function kubeconfigPath(): string {
  return inject('kubeconfig');
}

/** An admin client on the shared test cluster. */
export async function adminClient(): Promise<ClusterClient> {
  return new ClusterClient(await loadKubeConfig({ kind: 'path', path: kubeconfigPath() }));
}

/** Creates a namespace with a random suffix, for one test. */
export async function freshNamespace(client: ClusterClient, prefix = 't'): Promise<string> {
  const name = `${prefix}-${randomBytes(4).toString('hex')}`;
  await client.request('POST', '/api/v1/namespaces', {
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
  });
  return name;
}

/**
 * Creates Secret `name` in flux-system (made if missing; shared by tests, so each names its Secret
 * after its own namespace), where the source objects of the tests are defined and their
 * spec.secretRef is read. Returns a function that deletes it.
 */
export async function fluxSystemSecret(
  client: ClusterClient,
  name: string,
  stringData: Record<string, string>,
): Promise<() => Promise<void>> {
  await client
    .request('POST', '/api/v1/namespaces', {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'flux-system' } },
    })
    .catch((err: unknown) => {
      if (!/409|AlreadyExists|already exists/i.test(String(err))) throw err;
    });
  await client.request('POST', '/api/v1/namespaces/flux-system/secrets', {
    body: { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'flux-system' }, stringData },
  });
  return () =>
    client.request('DELETE', `/api/v1/namespaces/flux-system/secrets/${name}`).then(
      () => undefined,
      () => undefined,
    );
}

/** Writes files (relative path → text) into a new temporary directory and returns it. */
export async function writeTree(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'kr-tree-'));
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, rel)), { recursive: true });
    await writeFile(join(root, rel), text);
  }
  return root;
}

/** Polls `fn` every 250 ms until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(what: string, timeoutMs: number, fn: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`,
      );
    await new Promise((r) => setTimeout(r, 250));
  }
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  /** Set when `timeoutMs` passed and the process was killed (SIGKILL). */
  timedOut?: boolean;
  /** The signal that ended the process, when one did. */
  signal?: string;
}

/**
 * Runs a bundled entry point (dist/cli.js or dist/index.js, or an absolute path) under the tests' Node 24.
 * KR_DIST_DIR names another directory to take dist/'s files from (a fresh `node scripts/bundle.mjs DIR`).
 */
export function runNode(
  script: string,
  args: string[],
  opts: {
    env?: NodeJS.ProcessEnv;
    cwd?: string;
    /** Kill the process (SIGKILL) after this long; the result then says `timedOut`. */
    timeoutMs?: number;
    /** Called with the process once it is started (its pid, its output streams as they come). */
    onStart?: (child: ChildProcess) => void;
  } = {},
): Promise<RunResult> {
  return new Promise((resolve) => {
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    const child = execFile(
      NODE,
      [resolveScript(script), ...args],
      { cwd: opts.cwd ?? REPO, env: opts.env ?? process.env, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (timer !== undefined) clearTimeout(timer);
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        const signal = err && typeof err.signal === 'string' ? err.signal : undefined;
        resolve({ code, stdout, stderr, ...(timedOut ? { timedOut } : {}), ...(signal ? { signal } : {}) });
      },
    );
    if (opts.timeoutMs !== undefined) {
      timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
      }, opts.timeoutMs);
    }
    opts.onStart?.(child);
  });
}

function resolveScript(script: string): string {
  if (isAbsolute(script)) return script;
  const dist = process.env['KR_DIST_DIR'];
  return dist && script.startsWith('dist/') ? join(dist, script.slice('dist/'.length)) : join(REPO, script);
}

/** Whether the object at `path` exists: true, false on 404, and any other error thrown. */
export function exists(client: ClusterClient, path: string): Promise<boolean> {
  return client.request('GET', path).then(
    () => true,
    (err: unknown) => {
      if (isNotFound(err)) return false;
      throw err;
    },
  );
}
