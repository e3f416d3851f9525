// A prune builds nothing twice (issue 49, item 4): in a monorepo whose first Kustomization prunes
// before the others have run (dependsOn), the moves check (claims.ts) renders the others early,
// without decryption, and their own reconciles render them again, decrypted; a removed
// Kustomization asks the same question once more. kustomize runs once per Kustomization all the
// same: the run's builds share kustomize's output by the hash of its whole input (kustomize/cache.ts).
import { chmod, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { adminClient, freshNamespace, writeTree } from '../helpers/cluster.js';
import { kustomizationYaml } from '../helpers/manifests.js';
import { KUSTOMIZE } from '../helpers/paths.js';
import { reconcileTree } from '../helpers/reconcile.js';

/** A kustomize that appends a line to `log` each time it runs, then runs the pinned one. */
async function countingKustomize(): Promise<{ bin: string; runs: () => Promise<number> }> {
  const dir = await mkdtemp(join(tmpdir(), 'kr-count-'));
  const log = join(dir, 'runs');
  const bin = join(dir, 'kustomize');
  await writeFile(log, '');
  await writeFile(bin, `#!/bin/sh\necho run >> '${log}'\nexec '${KUSTOMIZE}' "$@"\n`);
  await chmod(bin, 0o755);
  return { bin, runs: async () => (await readFile(log, 'utf8')).split('\n').filter((l) => l !== '').length };
}

/**
 * App `i` in `ns`: ConfigMaps (`extra` of them besides the first) and a replacement, which only
 * kustomize builds (overlay.ts leaves it to the binary).
 */
function app(ns: string, i: number, extra: number): Record<string, string> {
  const cms = Array.from({ length: 1 + extra }, (_, j) => `c${i}-${j}`);
  return {
    [`apps/a${i}/kustomization.yaml`]: [
      `namespace: ${ns}`,
      'resources: [cms.yaml]',
      'replacements:',
      `- source: {kind: ConfigMap, name: c${i}-0, fieldPath: data.v}`,
      `  targets: [{select: {kind: ConfigMap}, fieldPaths: [data.copy], options: {create: true}}]`,
      '',
    ].join('\n'),
    [`apps/a${i}/cms.yaml`]: cms
      .map((name) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\ndata: {v: "app-${i}"}\n`)
      .join('---\n'),
  };
}

/** Kustomizations k0..k{n-1}, each after the one before; k0 first (it prunes before the others run). */
function ksFile(ns: string, names: readonly number[]): string {
  return names
    .map((i) =>
      kustomizationYaml({
        name: `k${i}`,
        namespace: ns,
        path: `./apps/a${i}`,
        prune: true,
        spec: [
          i > 0 && names.includes(i - 1) ? `dependsOn: [{name: k${i - 1}}]` : '',
          // Decryption asked for, no file to decrypt: the build is the same as without it.
          i % 2 === 1 ? 'decryption: {provider: sops}' : '',
        ].join('\n'),
      }),
    )
    .join('---\n');
}

let client: ClusterClient;
beforeAll(async () => {
  client = await adminClient();
});
afterAll(() => {
  client.close();
});

describe('a prune builds nothing twice', () => {
  it('kustomize runs once per Kustomization when one prunes first and another was removed from Git', async () => {
    const ns = await freshNamespace(client);
    const n = 5;
    const tree = (extra: number, kept: readonly number[]): Record<string, string> => {
      const files: Record<string, string> = { 'ks.yaml': ksFile(ns, kept) };
      for (let i = 0; i < n; i++) Object.assign(files, app(ns, i, i === 0 ? extra : 1));
      return files;
    };
    const all = Array.from({ length: n }, (_, i) => i);
    const root = await writeTree(tree(1, all));
    const kustomize = await countingKustomize();
    const opts = { kustomizeBin: kustomize.bin, lockLeaseMs: 3_000 };
    const first = await reconcileTree(root, opts);
    expect(first.ok, first.error).toBe(true);
    expect(await kustomize.runs()).toBe(n);

    // The commit: k0 drops a ConfigMap (its prune asks whether another builds it, before they run),
    // and k4 leaves the file (removed: its objects are looked for in the others' builds too).
    const kept = all.slice(0, n - 1);
    const next = tree(0, kept);
    for (const [path, text] of Object.entries(next)) await writeFile(join(root, path), text);
    const second = await reconcileTree(root, opts);
    expect(second.ok, second.error).toBe(true);
    const k0 = (second.kustomizations ?? []).find((k) => k.kustomization === `${ns}/k0`);
    expect((k0?.pruned ?? []).map((p) => `${p.subject} ${p.action}`)).toEqual([`ConfigMap/${ns}/c0-1 deleted`]);
    expect((second.removed ?? []).map((r) => r.kustomization)).toEqual([`${ns}/k${n - 1}`]);
    expect(await kustomize.runs()).toBe(n + kept.length);
  });
});
