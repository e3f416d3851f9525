// loadKubeConfig's client-go parts: tokenFile (relative, masked, read again after a minute), the
// environment's proxy, the default kubeconfig read as a file.
import { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import { mkdtemp, writeFile } from 'node:fs/promises';
import type https from 'node:https';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { kubeconfigSecrets, loadKubeConfig } from '../../src/cluster/kubeconfig.js';
import { installTokenFiles, TOKEN_FILE_PERIOD_MS } from '../../src/cluster/token-file.js';
import { isUserError } from '../../src/util/user-error.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

async function kubeconfigFile(
  cluster: Record<string, unknown>,
  user: Record<string, unknown>,
  files: Record<string, string> = {},
) {
  const dir = await mkdtemp(join(tmpdir(), 'kr-kcauth-unit-'));
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  const path = join(dir, 'config');
  await writeFile(
    path,
    JSON.stringify({
      'current-context': 'ctx',
      clusters: [{ name: 'k', cluster: { server: 'https://api.example:6443', ...cluster } }],
      contexts: [{ name: 'ctx', context: { cluster: 'k', user: 'u' } }],
      users: [{ name: 'u', user }],
    }),
  );
  return { dir, path };
}

async function authorization(kc: KubeConfig): Promise<string | undefined> {
  const opts: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  return (opts.headers as Record<string, string> | undefined)?.['Authorization'];
}

describe('loadKubeConfig, client-go forms', () => {
  it('reads tokenFile next to the kubeconfig, and masks its token', async () => {
    const { path } = await kubeconfigFile({}, { tokenFile: 'tok' }, { tok: 'tok-from-file-0123\n' });
    const kc = await loadKubeConfig({ kind: 'path', path }, undefined, { env: {} });
    expect(await authorization(kc)).toBe('Bearer tok-from-file-0123');
    expect(kubeconfigSecrets(kc)).toContain('tok-from-file-0123');
  });

  it('reads the default kubeconfig (KUBECONFIG, one file) as a file: tokenFile relative to it', async () => {
    const { path } = await kubeconfigFile({}, { tokenFile: 'tok' }, { tok: 'tok-default-0123' });
    const kc = await loadKubeConfig({ kind: 'default' }, undefined, { env: { KUBECONFIG: path } });
    expect(await authorization(kc)).toBe('Bearer tok-default-0123');
  });

  it('keeps tokenFile when KUBECONFIG names several files (merged), relative to its own file', async () => {
    const { path } = await kubeconfigFile({}, { tokenFile: 'tok' }, { tok: 'tok-merged-0123' });
    const other = { path: join(await mkdtemp(join(tmpdir(), 'kr-kcauth-unit-')), 'other') };
    await writeFile(
      other.path,
      JSON.stringify({
        clusters: [{ name: 'k2', cluster: { server: 'https://other.example:6443' } }],
        contexts: [{ name: 'ctx2', context: { cluster: 'k2', user: 'u2' } }],
        users: [{ name: 'u2', user: { token: 'tok-other-0123' } }],
      }),
    );
    // client-node's merge reads process.env.
    const saved = process.env['KUBECONFIG'];
    process.env['KUBECONFIG'] = [path, other.path].join(delimiter);
    try {
      const kc = await loadKubeConfig({ kind: 'default' });
      expect(await authorization(kc)).toBe('Bearer tok-merged-0123');
    } finally {
      if (saved === undefined) delete process.env['KUBECONFIG'];
      else process.env['KUBECONFIG'] = saved;
    }
  });

  it.each<[string, Record<string, string>, Record<string, unknown>, string | undefined]>([
    ['HTTPS_PROXY', { HTTPS_PROXY: 'http://proxy:3128' }, {}, 'http://proxy:3128'],
    ['NO_PROXY names the host', { HTTPS_PROXY: 'http://proxy:3128', NO_PROXY: 'example' }, {}, undefined],
    [
      'proxy-url wins',
      { HTTPS_PROXY: 'http://proxy:3128' },
      { 'proxy-url': 'socks5://other:1080' },
      'socks5://other:1080',
    ],
    ['no variable', {}, {}, undefined],
  ])('the proxy: %s', async (_, env, cluster, expected) => {
    const { path } = await kubeconfigFile(cluster, { token: 'tok-0123456789' });
    const kc = await loadKubeConfig({ kind: 'path', path }, undefined, { env });
    expect(kc.getCurrentCluster()?.proxyUrl).toBe(expected);
  });

  it('refuses an HTTPS_PROXY that is not a URL, naming the variable', async () => {
    const { path } = await kubeconfigFile({}, { token: 'tok-0123456789' });
    const err = await loadKubeConfig({ kind: 'path', path }, undefined, { env: { HTTPS_PROXY: 'http://[x' } }).catch(
      (e: unknown) => e,
    );
    expect(isUserError(err)).toBe(true);
    expect((err as Error).message).toMatch(/^kubeconfig .*config: the environment's HTTPS_PROXY is not a proxy URL/);
  });
});

describe('installTokenFiles', () => {
  it('reads the file again after a minute, keeps the last token when it cannot, then falls back to token', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kr-tokenfile-'));
    const file = join(dir, 'tok');
    await writeFile(file, 'first\n');
    const kc = new KubeConfig();
    kc.loadFromString(
      JSON.stringify({
        'current-context': 'c',
        clusters: [{ name: 'k', cluster: { server: 'https://x:6443' } }],
        contexts: [{ name: 'c', context: { cluster: 'k', user: 'u' } }],
        users: [{ name: 'u', user: {} }],
      }),
    );
    let now = 0;
    installTokenFiles(kc, new Map([['u', { path: file, token: 'static' }]]), () => now);
    expect(await authorization(kc)).toBe('Bearer first');
    await writeFile(file, 'second');
    now = TOKEN_FILE_PERIOD_MS - 1;
    expect(await authorization(kc)).toBe('Bearer first');
    now = TOKEN_FILE_PERIOD_MS;
    expect(await authorization(kc)).toBe('Bearer second');
    await writeFile(file, '');
    now = 3 * TOKEN_FILE_PERIOD_MS;
    expect(await authorization(kc)).toBe('Bearer second');

    const fresh = new KubeConfig();
    fresh.loadFromString(kc.exportConfig());
    installTokenFiles(fresh, new Map([['u', { path: join(dir, 'gone'), token: 'static' }]]));
    expect(await authorization(fresh)).toBe('Bearer static');
  });
});
