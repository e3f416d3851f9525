// What can be known invalid before the first write is refused before stage one is applied; what
// only the server can tell says what earlier stages already applied.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { isNotFound } from '../../src/cluster/errors.js';
import { adminClient, writeTree } from '../helpers/cluster.js';
import { reconcileTree } from '../helpers/reconcile.js';

async function run(files: Record<string, string>, vars: Record<string, string> = {}) {
  const root = await writeTree(files);
  return reconcileTree(root, { mode: 'apply', path: 'app', vars });
}

const ns = (name: string) => `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${name}}\n`;

describe('refused before the first write', () => {
  let client: ClusterClient;
  const created: string[] = [];
  const fresh = () => {
    const name = `kr-pre-${randomBytes(4).toString('hex')}`;
    created.push(name);
    return name;
  };
  const exists = async (name: string) =>
    client.request('GET', `/api/v1/namespaces/${name}`).then(
      () => true,
      (err: unknown) => {
        if (isNotFound(err)) return false;
        throw err;
      },
    );
  beforeAll(async () => {
    client = await adminClient();
  });
  afterAll(async () => {
    for (const name of created) await client.request('DELETE', `/api/v1/namespaces/${name}`).catch(() => undefined);
    client.close();
  });

  it('a ConfigMap named Bad_Name: nothing is applied, not even the Namespace of stage one', async () => {
    const name = fresh();
    const report = await run({
      'app/ns.yaml': ns(name),
      'app/cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Bad_Name, namespace: ${name}}\n`,
    });
    expect(report.ok).toBe(false);
    expect(report.error).toContain('nothing was applied');
    expect(report.error).toContain(`ConfigMap/${name}/Bad_Name: metadata.name "Bad_Name" is not a valid name`);
    // Located in its source file, for the check run's annotations and the comment.
    expect(report.problems).toEqual([
      expect.objectContaining({ subject: `ConfigMap/${name}/Bad_Name`, file: 'app/cm.yaml', line: 3 }),
    ]);
    expect(await exists(name)).toBe(false);
  });

  it('a kind the server does not serve: nothing is applied', async () => {
    const name = fresh();
    const report = await run({
      'app/ns.yaml': ns(name),
      'app/x.yaml': `apiVersion: v1\nkind: Explode\nmetadata: {name: x, namespace: ${name}}\n`,
    });
    expect(report.ok).toBe(false);
    expect(report.error).toContain(
      `Explode/${name}/x: the server has no resource for kind Explode in v1 (is the apiVersion right, or its CustomResourceDefinition installed?)`,
    );
    expect(await exists(name)).toBe(false);
  });

  // kustomize itself is quadratic in a map's keys (10k/20k/50k keys: 0.7/2.6/28 s, bounded by
  // build-timeout); everything of ours is linear, so 20,000 keys stay a few seconds end to end.
  it('a 20,000-key ConfigMap goes through build, substitution and apply', async () => {
    const name = fresh();
    const keys = Array.from({ length: 20_000 }, (_, i) => `  k${i}: v`).join('\n');
    const report = await run(
      {
        'app/ns.yaml': ns(name),
        'app/cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big, namespace: ${name}}\ndata:\n  sub: \${x:=default}\n${keys}\n`,
      },
      { unrelated: 'y' },
    );
    expect(report.error).toBeUndefined();
    const cm = await client.request<{ data: Record<string, string> }>(
      'GET',
      `/api/v1/namespaces/${name}/configmaps/big`,
    );
    expect(Object.keys(cm.data)).toHaveLength(20_001);
    expect(cm.data['sub']).toBe('default');
  }, 60_000);

  it('a failure only the server can tell names what earlier stages applied', async () => {
    const name = fresh();
    const report = await run({
      'app/ns.yaml': ns(name),
      'app/cm.yaml': `apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: ${name}}\nspec: {ports: [{port: 99999}]}\n`,
    });
    expect(report.ok).toBe(false);
    expect(report.error).toContain('Service/');
    expect(report.error).toContain(`Already applied by this run: Namespace/${name} (created)`);
  });
});
