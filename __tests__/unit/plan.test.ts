// The fan-out plan's pure parts: clusters from file paths, the matrix and its levels, affected
// Kustomizations and their dependents, and a cross-job dependency's recorded status.
import { describe, expect, it } from 'vitest';
import { clusterOf, kubeconfigSecretName } from '../../src/flux/clusters.js';
import type { KustomizationSpec } from '../../src/flux/types.js';
import type { InventoryStatus } from '../../src/inventory/codec.js';
import type { Reads } from '../../src/kustomize/reads.js';
import { readsFile } from '../../src/kustomize/reads.js';
import { affectsOf, type Inputs } from '../../src/plan/affected.js';
import { entryId } from '../../src/fanout/matrix.js';
import { checkUniqueIds, makePlan } from '../../src/plan/plan.js';
import { planOutputs } from '../../src/plan/render.js';
import { dependencyState } from '../../src/reconcile/await-deps.js';
import { defaultSpec } from '../helpers/spec.js';

describe('clusterOf', () => {
  it.each([
    ['clusters/production/apps.yaml', 'production'],
    ['clusters/staging/flux-system/gotk-sync.yaml', 'staging'],
    ['fleet/clusters/eu-1/infra.yaml', 'eu-1'],
    ['clusters/apps.yaml', ''],
    ['apps/production/ks.yaml', ''],
    ['ks.yaml', ''],
  ])('%s → %j', (file, cluster) => {
    expect(clusterOf(file)).toBe(cluster);
  });
});

describe('kubeconfigSecretName', () => {
  it.each([
    ['production', 'KUBECONFIG_PRODUCTION'],
    ['eu-west.1', 'KUBECONFIG_EU_WEST_1'],
    ['', 'KUBECONFIG'],
  ])('%j → %s', (cluster, name) => {
    expect(kubeconfigSecretName(cluster)).toBe(name);
  });
});

const ks = (name: string, file: string, deps: string[] = [], path = `./${name}`) =>
  defaultSpec({
    name,
    path: path.replace(/^\.\//, ''),
    origin: { kind: 'file', file, document: 1 },
    dependsOn: deps.map((d) => ({ name: d, namespace: 'flux-system' })),
  });

/** infra ← apps ← tests, and monitoring alone, per cluster. */
const fleet = (cluster: string) => [
  ks('apps', `clusters/${cluster}/apps.yaml`, ['infra']),
  ks('infra', `clusters/${cluster}/infra.yaml`),
  ks('tests', `clusters/${cluster}/tests.yaml`, ['apps']),
  ks('monitoring', `clusters/${cluster}/monitoring.yaml`),
];

/** An id without its hash: `production.flux-system.apps`. */
const readable = (id: string) => id.replace(/-[0-9a-f]{8}$/, '');

describe('makePlan', () => {
  const byCluster = new Map([
    ['staging', fleet('staging')],
    ['production', fleet('production')],
  ]);

  it('lists every cluster × Kustomization in dependsOn order, clusters by name', () => {
    const plan = makePlan(byCluster);
    expect(plan.clusters).toEqual(['production', 'staging']);
    expect(plan.matrix.map((e) => `${readable(e.id)}@${e.level}`)).toEqual([
      'production.flux-system.infra@0',
      'production.flux-system.monitoring@0',
      'production.flux-system.apps@1',
      'production.flux-system.tests@2',
      'staging.flux-system.infra@0',
      'staging.flux-system.monitoring@0',
      'staging.flux-system.apps@1',
      'staging.flux-system.tests@2',
    ]);
    expect(plan.levels.map((l) => l.map(readable))).toEqual([
      [
        'production.flux-system.infra',
        'production.flux-system.monitoring',
        'staging.flux-system.infra',
        'staging.flux-system.monitoring',
      ],
      ['production.flux-system.apps', 'staging.flux-system.apps'],
      ['production.flux-system.tests', 'staging.flux-system.tests'],
    ]);
    expect(plan.matrix[2]).toMatchObject({
      cluster: 'production',
      kustomization: 'flux-system/apps',
      file: 'clusters/production/apps.yaml',
      dependsOn: ['flux-system/infra'],
      secret: 'KUBECONFIG_PRODUCTION',
    });
  });

  it.each<[string, (s: KustomizationSpec, c: string) => string | undefined, string[]]>([
    ['nothing changed', () => undefined, []],
    [
      'infra in staging: its dependents follow',
      (s, c) => (c === 'staging' && s.name === 'infra' ? 'reads infra/x.yaml' : undefined),
      ['staging.flux-system.infra', 'staging.flux-system.apps', 'staging.flux-system.tests'],
    ],
    [
      'apps everywhere: not what it depends on',
      (s) => (s.name === 'apps' ? 'x' : undefined),
      [
        'production.flux-system.apps',
        'production.flux-system.tests',
        'staging.flux-system.apps',
        'staging.flux-system.tests',
      ],
    ],
    [
      'monitoring in production only',
      (s, c) => (c === 'production' && s.name === 'monitoring' ? 'x' : undefined),
      ['production.flux-system.monitoring'],
    ],
  ])('affected: %s', (_, affects, ids) => {
    const plan = makePlan(byCluster, affects);
    expect(plan.affected.map(readable)).toEqual(ids);
    expect(plan.matrix.map((e) => e.id)).toEqual(plan.affected);
    expect(plan.levels.flat()).toEqual(expect.arrayContaining(plan.affected));
    expect(plan.levels.every((l) => l.length > 0)).toBe(true);
    expect(plan.all).toHaveLength(8);
  });

  it('a dependent names the dependency it follows', () => {
    const plan = makePlan(byCluster, (s, c) => (c === 'staging' && s.name === 'infra' ? 'reads a' : undefined));
    expect(plan.matrix.map((e) => e.unchanged)).toEqual(['', '', '']);
    expect(makePlan(byCluster, (s) => (s.name === 'apps' ? 'x' : undefined)).matrix.map((e) => e.unchanged)).toEqual([
      'flux-system/infra',
      '',
      'flux-system/infra',
      '',
    ]);
    expect(plan.matrix.map((e) => e.reason)).toEqual([
      'reads a',
      'depends on flux-system/infra',
      'depends on flux-system/apps',
    ]);
  });

  it('a cluster whose Kustomization file was deleted runs its first Kustomization (it handles removals)', () => {
    const plan = makePlan(byCluster, () => undefined, new Map([['staging', 'clusters/staging/old.yaml was deleted']]));
    expect(plan.matrix.map((e) => [readable(e.id), e.reason])).toEqual([
      ['staging.flux-system.infra', 'clusters/staging/old.yaml was deleted'],
    ]);
  });

  it('gives ids that differ where (cluster, namespace, name) differ, even when they read alike', () => {
    const plan = makePlan(
      new Map([
        [
          'a',
          [
            defaultSpec({
              name: 'c.d',
              namespace: 'b',
              origin: { kind: 'file', file: 'clusters/a/ks.yaml', document: 1 },
            }),
          ],
        ],
        [
          'a.b',
          [
            defaultSpec({
              name: 'd',
              namespace: 'c',
              origin: { kind: 'file', file: 'clusters/a.b/ks.yaml', document: 1 },
            }),
          ],
        ],
      ]),
    );
    const ids = plan.matrix.map((e) => e.id);
    expect(ids.map(readable)).toEqual(['a.b.c.d', 'a.b.c.d']);
    expect(new Set(ids).size).toBe(2);
    expect(ids).toEqual([entryId('a', 'b', 'c.d'), entryId('a.b', 'c', 'd')]);
  });

  it.each<[string, [string, string, string], RegExp]>([
    ['a plain cluster', ['production', 'flux-system', 'apps'], /^production\.flux-system\.apps-[0-9a-f]{8}$/],
    ['no cluster', ['', 'flux-system', 'apps'], /^flux-system\.apps-[0-9a-f]{8}$/],
    ['what an artifact name refuses becomes _', ['eu:1 "x"|*?<>\\', 'ns', 'n'], /^eu_1__x_{7}\.ns\.n-[0-9a-f]{8}$/],
    ['a leading dot (a hidden file)', ['.hidden', 'ns', 'n'], /^_hidden\.ns\.n-[0-9a-f]{8}$/],
    ['a long name is cut, the hash kept', ['c'.repeat(200), 'ns', 'n'], /^c{80}-[0-9a-f]{8}$/],
  ])('id of %s', (_, [cluster, ns, name], want) => {
    const id = entryId(cluster, ns, name);
    expect(id).toMatch(want);
    expect(id).not.toMatch(/["<>|*?\r\n\\/:]/);
    expect(entryId(cluster, ns, name)).toBe(id);
  });

  it('ids differ by case where the tuple does (artifact names and some file systems ignore case)', () => {
    expect(entryId('Prod', 'ns', 'n').toLowerCase()).not.toBe(entryId('prod', 'ns', 'n').toLowerCase());
  });

  it('refuses two entries with one id, ignoring case, naming both', () => {
    const [a, b] = makePlan(byCluster).all;
    expect(() => {
      checkUniqueIds([a!, { ...b!, id: a!.id.toUpperCase() }]);
    }).toThrow(
      /^two matrix entries have the id .*: cluster production, flux-system\/infra \(clusters\/production\/infra\.yaml\) and cluster production, flux-system\/monitoring \(clusters\/production\/monitoring\.yaml\); their jobs would write one report file and artifact$/,
    );
    expect(() => {
      checkUniqueIds([a!, b!]);
    }).not.toThrow();
  });

  it('names the cluster of a dependency problem', () => {
    expect(() => makePlan(new Map([['eu', [ks('a', 'clusters/eu/a.yaml', ['nope'])]]]))).toThrow(
      /^cluster eu: Kustomization dependencies: 1 problem:[\s\S]*'flux-system\/nope' not found/,
    );
  });

  it('writes outputs a workflow can fromJSON: a matrix include list and a count', () => {
    const out = planOutputs(
      makePlan(
        new Map([
          [
            '',
            fleet('x').map((s) => ({ ...s, origin: { kind: 'file' as const, file: `${s.name}.yaml`, document: 1 } })),
          ],
        ]),
      ),
    );
    const matrix = JSON.parse(out['matrix']!) as { include: Record<string, unknown>[] };
    expect(matrix.include.map((e) => readable(e['id'] as string))).toEqual([
      'flux-system.infra',
      'flux-system.monitoring',
      'flux-system.apps',
      'flux-system.tests',
    ]);
    expect(matrix.include[2]).toMatchObject({
      cluster: '',
      dependsOn: 'flux-system/infra',
      secret: 'KUBECONFIG',
      level: 1,
    });
    expect(out['count']).toBe('4');
    expect(JSON.parse(out['levels']!)).toHaveLength(3);
  });
});

const reads = (files: string[], yamlDirs: string[] = []): Inputs => ({
  kind: 'reads',
  reads: { files: new Set(files), yamlDirs: new Set(yamlDirs), dirs: new Set() },
});

describe('affectsOf', () => {
  const apps = ks('apps', 'clusters/prod/apps.yaml');
  it.each<[string, string[], Inputs, string | undefined]>([
    ['its own file', ['clusters/prod/apps.yaml'], reads([]), 'its file clusters/prod/apps.yaml changed'],
    [
      'a file it reads',
      ['README.md', 'apps/base/deploy.yaml'],
      reads(['apps/base/deploy.yaml']),
      'reads apps/base/deploy.yaml, which changed',
    ],
    ['a file it does not read', ['docs/index.md', 'other/x.yaml'], reads(['apps/base/deploy.yaml']), undefined],
    [
      'a YAML file in a plain directory it builds',
      ['apps/plain/deep/cm.yml'],
      reads([], ['apps/plain']),
      'reads apps/plain/deep/cm.yml, which changed',
    ],
    ['a non-YAML file in a plain directory', ['apps/plain/README.md'], reads([], ['apps/plain']), undefined],
    ['a sibling directory with the same prefix', ['apps/plain2/cm.yaml'], reads([], ['apps/plain']), undefined],
    [
      'a .sourceignore',
      ['deep/.sourceignore'],
      reads([]),
      'deep/.sourceignore changed (it decides which files are in the source)',
    ],
    [
      'a fetched source: its definition',
      ['clusters/prod/sources.yaml'],
      { kind: 'files', files: ['clusters/prod/sources.yaml'], what: 'OCIRepository flux-system/podinfo' },
      'clusters/prod/sources.yaml changed (OCIRepository flux-system/podinfo)',
    ],
    [
      'a fetched source: anything else',
      ['apps/base/deploy.yaml'],
      { kind: 'files', files: ['clusters/prod/sources.yaml'], what: 'x' },
      undefined,
    ],
    [
      'an artifact made from the checkout',
      ['anything.txt'],
      { kind: 'any', why: 'made here' },
      'made here (anything.txt changed)',
    ],
    ['an artifact made from the checkout, nothing changed', [], { kind: 'any', why: 'made here' }, undefined],
  ])('%s', (_, changed, inputs, reason) => {
    expect(affectsOf(changed, () => inputs)(apps, '')).toBe(reason);
  });
});

describe('readsFile', () => {
  const r: Reads = { files: new Set(['k/kustomization.yaml', 'k/.env']), yamlDirs: new Set(['.']), dirs: new Set() };
  it.each([
    ['k/.env', true],
    ['anything/at/all.yaml', true],
    ['notes.txt', false],
  ])('%s → %s', (file, expected) => {
    expect(readsFile(r, file)).toBe(expected);
  });
});

describe('dependencyState', () => {
  const self = ks('apps', 'apps.yaml', ['infra']);
  const infra = ks('infra', 'infra.yaml');
  const dep = { name: 'infra', namespace: 'flux-system' };
  const status = (fields: Partial<InventoryStatus>): InventoryStatus => ({
    kustomization: 'flux-system/infra',
    result: 'Succeeded',
    startedAt: '2026-12-04T00:00:00Z',
    prune: true,
    deletionPolicy: 'MirrorPrune',
    timeoutMs: 1,
    commit: 'c1',
    ...fields,
  });
  it.each<[string, InventoryStatus | undefined, string | undefined, string | undefined, string]>([
    ['no inventory yet', undefined, 'c1', undefined, 'waiting'],
    ['succeeded at this commit', status({}), 'c1', undefined, 'ready'],
    ['succeeded at an earlier commit', status({ commit: 'c0' }), 'c1', undefined, 'waiting'],
    ['in progress at this commit', status({ result: 'InProgress' }), 'c1', undefined, 'waiting'],
    ['failed at this commit', status({ result: 'Failed', message: 'boom\nmore' }), 'c1', undefined, 'failed'],
    ['failed at an earlier commit', status({ result: 'Failed', commit: 'c0' }), 'c1', undefined, 'waiting'],
    ['no commit to compare: any finished run', status({ commit: 'zz' }), undefined, undefined, 'ready'],
    [
      'readyExpr true of a failed run',
      status({ result: 'Failed' }),
      'c1',
      "dep.status.conditions.exists(c, c.type == 'Ready')",
      'ready',
    ],
    ['readyExpr false of a succeeded run', status({}), 'c1', "dep.metadata.name == 'other'", 'failed'],
    [
      'unchanged (no job runs it now): succeeded at an earlier commit',
      status({ commit: 'c0' }),
      'c1',
      'unchanged',
      'ready',
    ],
    ['unchanged: failed at an earlier commit', status({ commit: 'c0', result: 'Failed' }), 'c1', 'unchanged', 'failed'],
  ])('%s', (_, s, commit, how, kind) => {
    const unchanged = how === 'unchanged';
    const readyExpr = unchanged ? undefined : how;
    const state = dependencyState({ ...dep, ...(readyExpr ? { readyExpr } : {}) }, infra, self, s, commit, unchanged);
    expect(state.kind).toBe(kind);
    if (state.kind === 'failed' && !how)
      expect(state.reason).toBe("dependency 'flux-system/infra' failed in another job: boom");
    if (state.kind === 'failed' && unchanged)
      expect(state.reason).toBe("dependency 'flux-system/infra' is not ready: its last run failed: failed");
  });
});
