// Renamed objects and what a change deletes or replaces, pure: similarity, pairing, costs per
// kind, and the first lines of the renderings.
import { describe, expect, it } from 'vitest';
import { costOf, findRenames, isDestructiveKind, similarity, type Side } from '../../src/ssa/renames.js';
import { destructiveBlock, destructiveLines, destructiveOf, movedObjects } from '../../src/report/destructive.js';
import { reportOf, type PrunedObject, type ReportParts } from '../../src/report/model.js';
import { DONE, PLANNED, resultCell, type Words } from '../../src/report/words.js';

const pvc = (name: string, storage = '1Gi', extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name, namespace: 'apps', labels: { app: 'db', 'kustomize.toolkit.fluxcd.io/name': 'x' } },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } }, ...extra },
});
const side = (obj: Record<string, unknown>, group = ''): Side => ({
  subject: `${obj['kind'] as string}/apps/${(obj['metadata'] as { name: string }).name}`,
  group,
  kind: obj['kind'] as string,
  object: obj,
});

describe('similarity', () => {
  it.each<[string, Record<string, unknown>, Record<string, unknown>, number | undefined]>([
    ['same content, other name', pvc('data'), pvc('data-v2'), 1],
    // The server's additions to the live copy do not count against it.
    ['live copy with defaults', pvc('data', '1Gi', { volumeMode: 'Filesystem', volumeName: 'pv-1' }), pvc('v2'), 1],
    ['other size', pvc('data', '5Gi'), pvc('v2'), 2 / 3],
    [
      'no content to compare',
      { kind: 'Namespace', metadata: { name: 'a' } },
      { kind: 'Namespace', metadata: { name: 'b' } },
      undefined,
    ],
  ])('%s', (_, deleted, created, expected) => {
    expect(similarity(deleted, created)).toBe(expected);
  });
});

describe('findRenames', () => {
  it('pairs one deletion with the most similar creation of its kind, each once', () => {
    const renames = findRenames(
      [side(pvc('data')), side(pvc('logs', '9Gi'))],
      [side(pvc('data-v2')), side(pvc('other', '3Gi'))],
      { wait: false },
    );
    expect(renames.map((r) => `${r.from} → ${r.to}`)).toEqual([
      'PersistentVolumeClaim/apps/data → PersistentVolumeClaim/apps/data-v2',
    ]);
  });

  it('pairs bare objects only one to one', () => {
    const ns = (name: string): Side => ({
      subject: `Namespace/${name}`,
      group: '',
      kind: 'Namespace',
      object: { metadata: { name } },
    });
    expect(findRenames([ns('a')], [ns('b')], { wait: false })).toHaveLength(1);
    expect(findRenames([ns('a')], [ns('b'), ns('c')], { wait: false })).toHaveLength(0);
  });

  it('never pairs different kinds', () => {
    const other = { ...pvc('data-v2'), kind: 'ConfigMap' };
    expect(findRenames([side(pvc('data'))], [side(other)], { wait: false })).toEqual([]);
  });
});

describe('costOf', () => {
  it.each<[string, string, Record<string, unknown>, boolean, string]>([
    ['', 'PersistentVolumeClaim', {}, false, 'its data does not move'],
    ['', 'Service', { spec: { type: 'ClusterIP' } }, false, 'a new cluster IP'],
    ['', 'Service', { spec: { type: 'LoadBalancer' } }, false, 'a new load-balancer address'],
    ['', 'Namespace', {}, false, 'everything in the old Namespace is deleted with it'],
    ['apiextensions.k8s.io', 'CustomResourceDefinition', {}, false, 'every custom resource'],
    ['apps', 'Deployment', {}, true, 'waited for (spec.wait) before the old one is pruned'],
    ['apps', 'Deployment', {}, false, 'pruned right after the apply, without waiting'],
    ['apps', 'StatefulSet', {}, true, 'volume claims (volumeClaimTemplates) are new'],
    ['', 'ConfigMap', {}, false, 'whatever refers to the old name must follow'],
  ])('%s/%s (wait %s)', (group, kind, object, wait, words) => {
    expect(costOf({ group, kind, object }, { wait })).toContain(words);
  });

  it.each([
    ['', 'PersistentVolumeClaim', true],
    ['apps', 'Deployment', true],
    ['', 'ConfigMap', false],
    ['example.com', 'Deployment', false],
  ])('isDestructiveKind(%s, %s) is %s', (group, kind, yes) => {
    expect(isDestructiveKind(group, kind)).toBe(yes);
  });
});

describe('what a change deletes or replaces, first', () => {
  const base: ReportParts = {
    mode: 'preview',
    kustomization: 'ns/app',
    path: './app',
    server: 's',
    changeset: [],
    durationMs: 1,
    notes: [],
  };
  const entry = { apiVersion: 'v1', kind: 'Service', namespace: 'apps', name: 'web', subject: 'Service/apps/web' };

  it.each<[string, Partial<ReportParts>, string[]]>([
    ['nothing deleted', {}, []],
    [
      'a rename, a recreate and a deletion of a heavy kind, then the rest counted',
      {
        renamed: [
          { from: 'PersistentVolumeClaim/apps/a', to: 'PersistentVolumeClaim/apps/b', cost: 'its data does not move' },
        ],
        changeset: [{ ...entry, action: 'created', recreated: ['spec.clusterIP'] }],
        pruned: [
          { subject: 'PersistentVolumeClaim/apps/a', action: 'deleted' },
          { subject: 'Namespace/old', action: 'deleted' },
          { subject: 'ConfigMap/apps/x', action: 'deleted' },
          { subject: 'ConfigMap/apps/y', action: 'deleted' },
          { subject: 'ConfigMap/apps/z', action: 'deleted', reason: 'already gone' },
        ],
      },
      [
        '> [!WARNING]',
        '> **This change would delete 4 and replace 1 live object(s):**',
        '> - `PersistentVolumeClaim/apps/a` renamed to `PersistentVolumeClaim/apps/b`: its data does not move',
        '> - `Service/apps/web` deleted and created again (immutable spec.clusterIP changed): the Service gets a new cluster IP (and a LoadBalancer a new address)',
        '> - `Namespace/old` deleted: a Namespace: everything in it is deleted with it, whoever manages it',
        '> - and 2 ConfigMap',
        '',
      ],
    ],
    [
      'moves alone',
      { pruned: [{ subject: 'ConfigMap/apps/x', action: 'moved', movedTo: 'ns/b' }] },
      ['> [!NOTE]', '> 1 object(s) would move between Kustomizations: kept, not deleted nor recreated', ''],
    ],
  ])('%s', (_, parts, block) => {
    expect(destructiveBlock(reportOf({ ...base, ...parts }))).toEqual(block);
  });

  it('an apply says what it did; the log names only what costs more than the object', () => {
    const r = reportOf({
      ...base,
      mode: 'apply',
      pruned: [
        { subject: 'ConfigMap/apps/x', action: 'deleted' },
        { subject: 'Deployment/apps/web', action: 'deleted' },
      ],
    });
    expect(destructiveOf(r, false)?.headline).toBe('This run deleted 2 live object(s)');
    expect(destructiveLines(r)).toEqual([
      'This run deleted 2 live object(s):',
      '  Deployment/apps/web deleted: its pods stop',
    ]);
    expect(destructiveLines(reportOf({ ...r, pruned: [{ subject: 'ConfigMap/apps/x', action: 'deleted' }] }))).toEqual(
      [],
    );
  });

  it('a drift check says what it would do, and what it did once it corrected the drift', () => {
    const pruned: PrunedObject[] = [{ subject: 'Service/apps/web', action: 'deleted' }];
    const drift = (corrected: boolean) =>
      destructiveLines(reportOf({ ...base, mode: 'drift', pruned, drift: { detected: true, corrected } }))[0];
    expect(drift(false)).toBe('This change would delete 1 live object(s):');
    expect(drift(true)).toBe('This run deleted 1 live object(s):');
  });

  it('names no more than five objects', () => {
    const pruned = Array.from({ length: 8 }, (_, i) => ({ subject: `Service/apps/s${i}`, action: 'deleted' as const }));
    const d = destructiveOf(reportOf({ ...base, pruned }), true)!;
    expect(d.items).toHaveLength(5);
    expect(d.more).toBe('3 Service');
  });
});

describe('movedObjects (the moved output)', () => {
  const base: ReportParts = {
    mode: 'apply',
    kustomization: 'x',
    path: '.',
    server: 's',
    changeset: [],
    durationMs: 1,
    notes: [],
  };
  it('joins the side that left an object and the side that took it, once per object', () => {
    const left = reportOf({
      ...base,
      kustomization: 'ns/a',
      pruned: [
        { subject: 'ConfigMap/ns/one', action: 'moved', movedTo: 'ns/b' },
        { subject: 'ConfigMap/ns/two', action: 'moved', movedTo: 'ns/b' },
      ],
    });
    const took = reportOf({
      ...base,
      kustomization: 'ns/b',
      changeset: [
        {
          subject: 'ConfigMap/ns/one',
          action: 'configured',
          apiVersion: 'v1',
          kind: 'ConfigMap',
          name: 'one',
          movedFrom: 'ns/a',
        },
      ],
    });
    const all = reportOf({ ...base, kustomizations: [left, took] });
    expect(movedObjects(all)).toEqual([
      { subject: 'ConfigMap/ns/one', from: 'ns/a', to: 'ns/b' },
      { subject: 'ConfigMap/ns/two', from: 'ns/a', to: 'ns/b' },
    ]);
    expect(movedObjects(base as never)).toEqual([]);
  });
});

describe('the result cell of a Kustomization whose objects moved out', () => {
  const k = (pruned: PrunedObject[]) =>
    reportOf({
      mode: 'preview',
      kustomization: 'ns/a',
      path: '.',
      server: 's',
      changeset: [],
      durationMs: 1,
      notes: [],
      pruned,
    });
  it.each<[string, PrunedObject[], Words, string]>([
    ['nothing', [], PLANNED, '✅ no changes'],
    [
      'moves, previewed',
      [{ subject: 'ConfigMap/ns/x', action: 'moved', movedTo: 'ns/b' }],
      PLANNED,
      '↪️ 1 would move to another Kustomization',
    ],
    [
      'moves, applied',
      [{ subject: 'ConfigMap/ns/x', action: 'moved', movedTo: 'ns/b' }],
      DONE,
      '↪️ 1 moved to another Kustomization',
    ],
  ])('%s', (_, pruned, w, cell) => {
    expect(resultCell(k(pruned), 0, w)).toBe(cell);
  });
});
