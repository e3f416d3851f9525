// The Node the action and the CLI need: an older one is told so in one line (src/util/node-version.ts),
// by the bundled entry points themselves, before any module that needs Node 24 is loaded.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { MIN_NODE_MAJOR, nodeVersionProblem } from '../../src/util/node-version.js';
import { REPO } from '../helpers/paths.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

describe('nodeVersionProblem', () => {
  it.each([
    ['24.0.0', undefined],
    ['24.11.1', undefined],
    ['25.2.0', undefined],
    ['v24.1.0', undefined],
    ['22.21.0', 'needs Node.js 24 or newer; this is Node.js 22.21.0'],
    ['20.20.2', 'needs Node.js 24 or newer; this is Node.js 20.20.2'],
    ['not a version', 'this is Node.js not a version'],
  ])('%s', (version, problem) => {
    const got = nodeVersionProblem(version);
    if (problem === undefined) expect(got).toBeUndefined();
    else expect(got).toContain(problem);
  });

  it('matches what package.json engines and action.yml say', async () => {
    const { readFile } = await import('node:fs/promises');
    const pkg = JSON.parse(await readFile(`${REPO}/package.json`, 'utf8')) as { engines: { node: string } };
    expect(pkg.engines.node).toBe(`>=${MIN_NODE_MAJOR}`);
    expect(await readFile(`${REPO}/action.yml`, 'utf8')).toMatch(new RegExp(`using: ['"]?node${MIN_NODE_MAJOR}`));
  });
});

/** The bundled entry point run as if on `version` (process.versions.node replaced before it loads). */
function runAs(entry: string, version: string, args: string[] = []) {
  const script =
    `Object.defineProperty(process.versions, 'node', { value: ${JSON.stringify(version)} });` +
    `process.argv = [process.argv[0], 'entry', ...${JSON.stringify(args)}];` +
    `await import(${JSON.stringify(`${REPO}/dist/${entry}`)});`;
  return spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
}

describe('the bundled entry points on an older Node', () => {
  it('the CLI says which Node it needs and which it found, in one line, and exits 2', () => {
    const r = runAs('cli.js', '20.20.2', ['--help']);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toEqual([
      "kustomize-reconcile needs Node.js 24 or newer; this is Node.js 20.20.2. Run it with Node 24 (the action's runs.using is node24; npx uses the node first on PATH)",
    ]);
  });

  it('the action says it as an error annotation, and exits 2', () => {
    const r = runAs('index.js', '22.1.0');
    expect(r.status).toBe(2);
    expect(r.stdout).toMatch(/^::error::kustomize-reconcile needs Node\.js 24 or newer; this is Node\.js 22\.1\.0\./);
  });

  it('on Node 24 the CLI runs', () => {
    const r = runAs('cli.js', process.versions.node, ['--help']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('usage: kustomize-reconcile');
  });
});
