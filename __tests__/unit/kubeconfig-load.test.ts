import { chmod, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import type https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadKubeConfig } from '../../src/cluster/kubeconfig.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

/** A kubeconfig file in a new directory whose current context uses `user`; extra entries may be added. */
async function kubeconfigFile(
  user: Record<string, unknown>,
  extra: { clusters?: unknown[]; users?: unknown[]; files?: Record<string, string> } = {},
): Promise<{ dir: string; path: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'kr-kubeconfig-'));
  for (const [name, text] of Object.entries(extra.files ?? {})) {
    await writeFile(join(dir, name), text);
    if (name.endsWith('.sh')) await chmod(join(dir, name), 0o755);
  }
  const path = join(dir, 'config');
  await writeFile(
    path,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'ctx',
      clusters: [{ name: 'k', cluster: { server: 'https://127.0.0.1:6443' } }, ...(extra.clusters ?? [])],
      contexts: [{ name: 'ctx', context: { cluster: 'k', user: 'u' } }],
      users: [{ name: 'u', user }, ...(extra.users ?? [])],
    }),
  );
  return { dir, path };
}

async function authorization(path: string, execTimeoutMs?: number): Promise<string | undefined> {
  const kc = await loadKubeConfig({ kind: 'path', path }, undefined, execTimeoutMs ? { execTimeoutMs } : {});
  const opts: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  return (opts.headers as Record<string, string> | undefined)?.['Authorization'];
}

describe('loadKubeConfig', () => {
  it('loads a kubeconfig with a broken entry that the context does not use', async () => {
    const { path } = await kubeconfigFile(
      { token: 'tok-1' },
      { clusters: [{ name: 'old', cluster: {} }], users: [{ user: { token: 'x' } }] },
    );
    expect(await authorization(path)).toBe('Bearer tok-1');
  });

  it('reads a relative token-file next to the kubeconfig, as kubectl does', async () => {
    const { path } = await kubeconfigFile({ 'token-file': 'token' }, { files: { token: 'tok-from-file' } });
    expect(await authorization(path)).toBe('Bearer tok-from-file');
  });

  it('names a context whose user is missing', async () => {
    const { path } = await kubeconfigFile({ token: 'x' });
    await writeFile(path, (await readFile(path, 'utf8')).replace('user: u\n', 'user: admin\n'));
    await expect(loadKubeConfig({ kind: 'path', path })).rejects.toThrow(
      `kubeconfig ${path}: context "ctx" names user "admin", which is not in its users list ("u")`,
    );
  });

  it('runs an exec plugin (a relative command, next to the kubeconfig) for the token', async () => {
    const credential = JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', status: { token: 'tok-exec' } });
    const { path } = await kubeconfigFile(
      { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: './plugin.sh' } },
      { files: { 'plugin.sh': `#!/bin/sh\necho '${credential}'\n` } },
    );
    expect(await authorization(path)).toBe('Bearer tok-exec');
  });

  it('stops an exec plugin after execTimeoutMs', async () => {
    const { path } = await kubeconfigFile(
      { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: './plugin.sh' } },
      { files: { 'plugin.sh': '#!/bin/sh\nexec sleep 600\n' } },
    );
    await expect(authorization(path, 300)).rejects.toThrow(
      /^kubeconfig user "u": the exec credential plugin ".*\/plugin\.sh" did not finish within 300ms and was stopped/,
    );
  });
});
