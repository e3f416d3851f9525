// The action's build cache across workflow runs (src/action/build-cache.ts) when the Actions cache
// service fails: the run goes on, with one warning and none of the cache package's debug lines.
// (A second run of the same commit building nothing, through act's own cache server, is one of the
// README's workflow runs: test/act/readme-runs.ts.)
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { runAction } from '../helpers/action.js';
import { adminClient, freshNamespace, kubeconfigPath, writeTree } from '../helpers/cluster.js';

let client: ClusterClient;
beforeAll(async () => {
  client = await adminClient();
});
afterAll(() => {
  client.close();
});

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

describe('the build cache across workflow runs', () => {
  it('a cache service that does not answer costs one warning, never the run', async () => {
    const ns = await freshNamespace(client);
    const workspace = await writeTree({
      // A replacement: a build only kustomize makes, so there is something to keep.
      'deploy/kustomization.yaml': [
        `namespace: ${ns}`,
        'resources: [cm.yaml]',
        'replacements:',
        '- source: {kind: ConfigMap, name: app, fieldPath: data.a}',
        '  targets: [{select: {kind: ConfigMap}, fieldPaths: [data.copy], options: {create: true}}]',
        '',
      ].join('\n'),
      'deploy/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\ndata: {a: b}\n',
    });
    const res = await runAction(
      workspace,
      { kubeconfig: kubeconfigPath(), path: 'deploy', mode: 'apply' },
      { env: { ACTIONS_CACHE_URL: `http://127.0.0.1:${await closedPort()}/`, ACTIONS_RUNTIME_TOKEN: 'token' } },
    );
    expect(res.code, res.stdout + res.stderr).toBe(0);
    const lines = res.stdout.split('\n');
    const warnings = lines.filter((l) => l.startsWith('::warning::'));
    expect(warnings, res.stdout).toHaveLength(1);
    expect(warnings[0]).toMatch(/^::warning::build-cache: the Actions cache could not be restored \(/);
    // The package's debug lines are dropped, not printed as text the guard made harmless.
    expect(res.stdout).not.toMatch(/debug%3A%3A|::debug::/);
    expect(res.outputs['created']).toBe('1');
  });
});
