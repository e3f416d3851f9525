// The npm package as a user gets it: `npm pack`, then a clean install of the tarball in an empty
// directory (no registry needed: dist/ is a self-contained bundle, so the package has no runtime
// dependencies), then `npx kustomize-reconcile` from there.
import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE, REPO } from '../helpers/paths.js';

const run = promisify(execFile);

/** A Node older than 24 on this machine (the runner image's own), if there is one. */
function olderNode(): string | undefined {
  for (const candidate of ['/usr/bin/node', '/bin/node', '/usr/local/bin/node']) {
    const r = spawnSync(candidate, ['-p', 'process.versions.node'], { encoding: 'utf8' });
    if (r.status === 0 && Number(r.stdout.split('.')[0]) < 24) return candidate;
  }
  return undefined;
}
const OLD_NODE = olderNode();
/** npm, run by the Node the tests run on (Node 24), which the package's engines ask for. */
const env = { ...process.env, PATH: `${dirname(NODE)}:${process.env['PATH'] ?? ''}` };

describe('the npm package', () => {
  let dir: string;
  let tarball: string;
  let files: string[];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kr-pack-'));
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], { cwd: REPO, env });
    const [packed] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
    tarball = join(dir, packed!.filename);
    files = packed!.files.map((f) => f.path);
  }, 120_000);
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('holds the bundle, the action and the README, and no sources or tests', () => {
    expect(files).toContain('dist/cli.js');
    expect(files).toContain('dist/index.js');
    expect(files).toContain('action.yml');
    expect(files).toContain('README.md');
    expect(files.filter((f) => /^(src|__tests__|test|scripts|bench)\//.test(f))).toEqual([]);
  });

  it('installs from the tarball alone and runs as npx kustomize-reconcile', async () => {
    const app = join(dir, 'app');
    await run('mkdir', ['-p', app]);
    await writeFile(join(app, 'package.json'), '{"name": "user-project", "private": true}\n');
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], { cwd: app, env });
    const manifest = JSON.parse(await readFile(join(app, 'node_modules/kustomize-reconcile/package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
    };
    expect(manifest.dependencies ?? {}).toEqual({});
    const help = await run('npx', ['--no-install', 'kustomize-reconcile', '--help'], { cwd: app, env });
    expect(help.stdout).toMatch(/^usage: kustomize-reconcile <command> \[flags\]/);
    // A build with no cluster, from the installed package.
    await writeFile(
      join(app, 'cm.yaml'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-the-package, namespace: default}\n',
    );
    const built = await run(
      'npx',
      [
        '--no-install',
        'kustomize-reconcile',
        'build',
        '--path',
        '.',
        '--kustomize-path',
        join(REPO, 'test/cluster/bin/kustomize'),
      ],
      {
        cwd: app,
        env,
      },
    );
    expect(built.stdout).toContain('name: from-the-package');
  }, 120_000);

  it.skipIf(OLD_NODE === undefined)(
    'on an older Node: npm warns about the engine, and the CLI says in one line which Node it needs',
    async () => {
      const app = join(dir, 'app-old-node');
      await run('mkdir', ['-p', app]);
      await writeFile(join(app, 'package.json'), '{"name": "user-project", "private": true}\n');
      // npm's warnings at their default level (npm run --silent passes loglevel silent down).
      const oldEnv = {
        ...process.env,
        npm_config_loglevel: 'warn',
        PATH: `${dirname(OLD_NODE!)}:${process.env['PATH'] ?? ''}`,
      };
      const installed = spawnSync('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], {
        cwd: app,
        env: oldEnv,
        encoding: 'utf8',
      });
      expect(installed.status).toBe(0);
      expect(installed.stderr).toMatch(/EBADENGINE|Unsupported engine/);
      const cli = spawnSync(OLD_NODE!, [join(app, 'node_modules/kustomize-reconcile/dist/cli.js'), '--help'], {
        encoding: 'utf8',
      });
      expect(cli.status).toBe(2);
      expect(cli.stderr.trim().split('\n')).toHaveLength(1);
      expect(cli.stderr).toMatch(/^kustomize-reconcile needs Node\.js 24 or newer; this is Node\.js \d+\./);
    },
    120_000,
  );
});
