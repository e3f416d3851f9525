// mode: plan as GitHub runs it (the bundled dist/index.js, inputs as INPUT_* variables, the event
// payload): the outputs a workflow fans out on, from the push's before and after commits.
import { appendFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { changeOf } from '../../src/action/plan-mode.js';
import { runAction } from '../helpers/action.js';
import { writeTree } from '../helpers/cluster.js';
import { commitAll, initRepository } from '../helpers/git-repos.js';
import { kustomizationYaml } from '../helpers/manifests.js';

/** An id without its hash: `production.flux-system.apps`. */
const readable = (id: unknown) => String(id).replace(/-[0-9a-f]{8}$/, '');

describe('mode: plan', () => {
  it('writes the matrix of the Kustomizations a push affects, per cluster, with the job summary', async () => {
    const files: Record<string, string> = {
      'apps/base/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\n',
      'apps/base/kustomization.yaml': 'resources: [cm.yaml]\n',
      'infra/ns.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata: {name: web}\n',
    };
    for (const c of ['production', 'staging-eu']) {
      files[`clusters/${c}/infra.yaml`] = kustomizationYaml({ name: 'infra', path: './infra' });
      files[`clusters/${c}/apps.yaml`] = kustomizationYaml({
        name: 'apps',
        path: './apps/base',
        spec: 'dependsOn: [{name: infra}]',
      });
    }
    const root = await writeTree(files);
    try {
      const before = initRepository(root);
      await appendFile(join(root, 'apps/base/cm.yaml'), 'data: {a: b}\n');
      const after = commitAll(root, 'two');

      const r = await runAction(
        root,
        { mode: 'plan', kustomizations: 'clusters/*/*.yaml' },
        { event: { name: 'push', payload: { before, after } }, env: { GITHUB_SHA: after } },
      );
      expect(r.code, r.stderr + r.stdout).toBe(0);
      const matrix = JSON.parse(r.outputs['matrix']!) as { include: Record<string, unknown>[] };
      expect(matrix.include.map((e) => [readable(e['id']), e['secret'], e['reason']])).toEqual([
        ['production.flux-system.apps', 'KUBECONFIG_PRODUCTION', 'reads apps/base/cm.yaml, which changed'],
        ['staging-eu.flux-system.apps', 'KUBECONFIG_STAGING_EU', 'reads apps/base/cm.yaml, which changed'],
      ]);
      expect(r.outputs['count']).toBe('2');
      expect(JSON.parse(r.outputs['clusters']!)).toEqual(['production', 'staging-eu']);
      expect((JSON.parse(r.outputs['levels']!) as string[][]).map((l) => l.map(readable))).toEqual([
        ['production.flux-system.apps', 'staging-eu.flux-system.apps'],
      ]);
      expect(r.summary).toContain('plan — 2 of 4 Kustomizations affected');
      expect(r.summary).toContain('| 1 | production | `flux-system/apps` | `clusters/production/apps.yaml` |');

      // No event: every Kustomization, by level.
      const all = await runAction(root, { mode: 'plan', kustomizations: 'clusters/*/*.yaml' });
      expect(all.code, all.stderr).toBe(0);
      expect((JSON.parse(all.outputs['affected']!) as string[]).map(readable)).toEqual([
        'production.flux-system.infra',
        'production.flux-system.apps',
        'staging-eu.flux-system.infra',
        'staging-eu.flux-system.apps',
      ]);

      const none = await runAction(root, { mode: 'plan' });
      expect(none.code).toBe(2);
      expect(none.stdout).toContain('mode: plan needs kustomizations');
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it.each([
    ['a push', { before: 'b1', after: 'a1' }, {}, { base: 'b1', head: 'a1' }],
    ['a pull request', { pull_request: { base: { sha: 'pb' }, head: { sha: 'ph' } } }, {}, { base: 'pb', head: 'ph' }],
    ['inputs over the event', { before: 'b1', after: 'a1' }, { base: 'x', head: 'y' }, { base: 'x', head: 'y' }],
    ['a schedule: no change, every Kustomization', {}, {}, undefined],
  ])('the change of %s', (_, event, given, want) => {
    expect(changeOf(event, given, {})).toEqual(want);
  });
});
