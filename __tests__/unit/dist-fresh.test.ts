import { build } from 'esbuild';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { bundleOptions, STUBS } from '../../scripts/bundle.mjs';
import { loadKubeConfig } from '../../src/cluster/kubeconfig.js';
import { NODE, REPO } from '../helpers/paths.js';
import { CERT, KEY } from '../helpers/test-cert.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

const run = promisify(execFile);
const files = (dir: string) =>
  readdir(dir, { recursive: true, withFileTypes: true }).then((es) =>
    es.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(dir.length + 1)),
  );

describe('dist/', () => {
  let fresh: string;
  beforeAll(async () => {
    fresh = await mkdtemp(join(tmpdir(), 'kr-dist-'));
    await run(NODE, [join(REPO, 'scripts', 'bundle.mjs'), fresh], { cwd: REPO });
  });

  it('holds the files of a fresh bundle of src/, no more', async () => {
    expect((await files(join(REPO, 'dist'))).sort()).toEqual((await files(fresh)).sort());
  });

  it('matches a fresh bundle of src/', async () => {
    const stale: string[] = [];
    for (const file of await files(fresh)) {
      const want = await readFile(join(fresh, file), 'utf8');
      const have = await readFile(join(REPO, 'dist', file), 'utf8').catch(() => '');
      if (have !== want) stale.push(file);
    }
    // File names, so that a failure prints the fix rather than two large strings.
    expect(stale, 'dist/ is stale: run `npm run bundle` and commit dist/ with the source').toEqual([]);
  });

  it('has a small CLI entry point that checks the Node version, then turns on the compile cache, then loads the CLI', async () => {
    const text = await readFile(join(fresh, 'cli.js'), 'utf8');
    expect(text.length).toBeLessThan(2000);
    expect(text.indexOf('nodeVersionProblem(')).toBeGreaterThan(0);
    expect(text.indexOf('nodeVersionProblem(')).toBeLessThan(text.indexOf('enableCompileCache()'));
    expect(text.indexOf('enableCompileCache()')).toBeLessThan(text.indexOf('await import("./chunks/'));
  });

  it('takes node:http and node:https with require(), not import', async () => {
    for (const file of await files(fresh)) {
      const text = await readFile(join(fresh, file), 'utf8');
      expect(text, file).not.toMatch(/\bfrom\s*["'](node:)?https?["']/);
    }
  });
});

describe("scripts/bundle.mjs's stubs of unused imports", () => {
  it('stand for nothing src/ calls', async () => {
    // What the stubbed modules are there for: client-node's fetch API clients and dispatchers, core's OIDC.
    const used = /\b(makeApiClient|createDispatcher|applyToFetchOptions|applySecurityAuthentication|getIDToken)\b/;
    const hits: string[] = [];
    for (const file of await files(join(REPO, 'src'))) {
      if (used.test(await readFile(join(REPO, 'src', file), 'utf8'))) hits.push(file);
    }
    expect(hits).toEqual([]);
    expect(STUBS.map((s) => s.path)).toEqual(['undici', './gen/index.js', './oidc-utils.js']);
  });

  it('give the same request options for a kubeconfig as client-node itself', async () => {
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const kubeconfig = (cluster: object, user: object) =>
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        'current-context': 'c',
        clusters: [{ name: 'k', cluster: { server: 'https://k.example:6443', ...cluster } }],
        users: [{ name: 'u', user }],
        contexts: [{ name: 'c', context: { cluster: 'k', user: 'u' } }],
      });
    const configs = [
      kubeconfig({ 'certificate-authority-data': b64(CERT) }, { token: 'tok-123456' }),
      kubeconfig(
        { 'certificate-authority-data': b64(CERT), 'tls-server-name': 'api.k' },
        { 'client-certificate-data': b64(CERT), 'client-key-data': b64(KEY) },
      ),
      kubeconfig({ 'insecure-skip-tls-verify': true }, { username: 'admin', password: 'secret-pw' }),
      kubeconfig(
        { 'certificate-authority-data': b64(CERT), 'proxy-url': 'http://proxy.example:3128' },
        { token: 'tok-123456' },
      ),
    ];
    // The request options as data: Buffers as their bytes, an agent as its class (without the digit
    // esbuild appends to a name two modules share) and proxy.
    const show = (o: object): string =>
      JSON.stringify(o, (k, v: unknown) =>
        k === 'agent' && v && typeof v === 'object'
          ? {
              class: v.constructor.name.replace(/\d+$/, ''),
              proxy: String((v as { proxy?: URL | string }).proxy ?? ''),
            }
          : v,
      );
    const direct: string[] = [];
    for (const content of configs) {
      const o = {};
      await (await loadKubeConfig({ kind: 'content', content })).applyToHTTPSOptions(o);
      direct.push(show(o));
    }
    // The same through a bundle made with the stubs.
    const dir = await mkdtemp(join(tmpdir(), 'kr-stubs-'));
    const opts = bundleOptions(dir);
    await build({
      ...opts,
      entryPoints: undefined,
      splitting: false,
      outdir: undefined,
      outfile: join(dir, 'probe.mjs'),
      stdin: {
        resolveDir: REPO,
        loader: 'ts',
        contents: `import { loadKubeConfig } from './src/cluster/kubeconfig.ts';
const show = ${show.toString()};
const out = [];
for (const content of JSON.parse(process.argv[2])) {
  const o = {};
  await (await loadKubeConfig({ kind: 'content', content })).applyToHTTPSOptions(o);
  out.push(show(o));
}
process.stdout.write(JSON.stringify(out));`,
      },
    });
    const bundled = await readFile(join(dir, 'probe.mjs'), 'utf8');
    expect(bundled).toContain('is not bundled (scripts/bundle.mjs)');
    const { stdout } = await run(NODE, [join(dir, 'probe.mjs'), JSON.stringify(configs)]);
    expect(JSON.parse(stdout)).toEqual(direct);
    expect(direct[3]).toContain('proxy.example');
  });
});
