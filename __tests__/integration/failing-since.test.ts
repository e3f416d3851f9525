// What a Kustomization's inventory says of its failures, on the real cluster: failingSince is set by
// the first failed apply, kept by the next failed one, cleared by a success; a preview reads it and
// its report says the Kustomization was failing before (Report.before), which its comment calls
// "also failing on main since …".
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { InventoryStore } from '../../src/inventory/store.js';
import type { OptionValues } from '../../src/options/settings.js';
import { commentMarker, renderComment } from '../../src/report/comment.js';
import { adminClient, freshNamespace, writeTree } from '../helpers/cluster.js';
import { configMap } from '../helpers/manifests.js';
import { reconcileTree } from '../helpers/reconcile.js';

const KS = { name: 'app', namespace: 'flux-system' };

describe('failingSince and a preview’s before', () => {
  let client: ClusterClient;
  beforeAll(async () => {
    client = await adminClient();
  });
  afterAll(() => {
    client.close();
  });

  async function tree(root: string, files: Record<string, string>): Promise<void> {
    await rm(join(root, 'app'), { recursive: true, force: true });
    const names = Object.keys(files).map((f) => f.slice('app/'.length));
    for (const [rel, text] of Object.entries({
      ...files,
      'app/kustomization.yaml': `resources: [${names.join(', ')}]\n`,
    })) {
      await mkdir(dirname(join(root, rel)), { recursive: true });
      await writeFile(join(root, rel), text);
    }
  }

  it('keeps the first failure’s time across failed applies, clears it on success, and a preview reports it', async () => {
    const ns = await freshNamespace(client);
    const root = await writeTree({});
    const run = (extra: Partial<OptionValues> = {}) =>
      reconcileTree(root, {
        path: 'app',
        name: 'app',
        prune: true,
        inventoryNamespace: ns,
        lockLeaseMs: 3_000,
        ...extra,
      });
    const status = async () => (await new InventoryStore(client, ns, KS).read()).record!.status;
    // A data key only the server checks: the apply fails at its dry-run.
    const bad = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: ${ns}}\ndata: {"bad key!": x}\n`;

    await tree(root, { 'app/a.yaml': configMap(ns, 'a') });
    expect((await run()).ok).toBe(true);
    expect((await status()).failingSince).toBeUndefined();

    await tree(root, { 'app/a.yaml': configMap(ns, 'a'), 'app/c.yaml': bad });
    expect((await run()).ok).toBe(false);
    const first = await status();
    expect(first.result).toBe('Failed');
    expect(first.failingSince).toBe(first.finishedAt);

    expect((await run()).ok).toBe(false);
    const second = await status();
    expect(second.result).toBe('Failed');
    expect(second.finishedAt).not.toBe(first.finishedAt);
    expect(second.failingSince).toBe(first.failingSince);

    // A preview of a change that leaves it failing: its report says it failed before, and since when.
    const preview = await run({ mode: 'preview' });
    expect(preview.ok).toBe(false);
    expect(preview.before).toEqual({ result: 'Failed', since: first.failingSince, message: second.message });
    expect((await status()).finishedAt).toBe(second.finishedAt); // a preview writes nothing

    // A preview of the fix: it succeeds, and still says what the inventory recorded.
    await tree(root, { 'app/a.yaml': configMap(ns, 'a'), 'app/c.yaml': configMap(ns, 'c') });
    const fixed = await run({ mode: 'preview' });
    expect(fixed.ok).toBe(true);
    expect(fixed.before?.since).toBe(first.failingSince);
    expect(renderComment(fixed, { marker: commentMarker('app') }).body).not.toContain('also failing on main');

    expect((await run()).ok).toBe(true);
    const after = await status();
    expect(after.result).toBe('Succeeded');
    expect(after.failingSince).toBeUndefined();
    expect((await run({ mode: 'preview' })).before).toBeUndefined();
  }, 180_000);
});
