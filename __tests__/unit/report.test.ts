import { describe, expect, it } from 'vitest';
import { exitCode, type Report } from '../../src/report/model.js';
import { renderLines, renderSummary } from '../../src/report/render.js';
import { countActions, type ChangeSetEntry } from '../../src/ssa/changeset.js';

const entry = (subject: string, action: ChangeSetEntry['action']): ChangeSetEntry => ({
  subject,
  action,
  apiVersion: 'v1',
  kind: subject.split('/')[0]!,
  name: 'x',
});

function report(changeset: ChangeSetEntry[], extra: Partial<Report> = {}): Report {
  return {
    mode: 'apply',
    kustomization: 'flux-system/deploy',
    path: 'deploy',
    notes: [],
    server: 'https://k',
    ok: true,
    changeset,
    counts: countActions(changeset),
    durationMs: 1234,
    ...extra,
  };
}

describe('exitCode', () => {
  it.each([
    { why: 'error', r: report([], { ok: false, error: 'x' }), findings: false, want: 2 },
    { why: 'error wins over findings', r: report([entry('A/a', 'created')], { ok: false }), findings: true, want: 2 },
    { why: 'changes in apply mode', r: report([entry('A/a', 'created')]), findings: false, want: 0 },
    { why: 'changes found by diff', r: report([entry('A/a', 'configured')]), findings: true, want: 1 },
    { why: 'nothing to change for diff', r: report([entry('A/a', 'unchanged')]), findings: true, want: 0 },
  ])('$why → $want', ({ r, findings, want }) => {
    expect(exitCode(r, findings)).toBe(want);
  });
});

describe('renderLines', () => {
  it('prints each object then the totals', () => {
    expect(renderLines(report([entry('Namespace/a', 'created'), entry('ConfigMap/a/b', 'unchanged')]))).toEqual([
      'Namespace/a created',
      'ConfigMap/a/b unchanged',
      'Applied deploy: 1 created, 0 configured, 1 unchanged in 1.2s',
    ]);
  });
  it('says what failed', () => {
    expect(renderLines(report([], { ok: false, error: 'ConfigMap/x dry-run failed: boom' })).at(-1)).toBe(
      'Failed on deploy after 0 created, 0 configured, 0 unchanged in 1.2s: ConfigMap/x dry-run failed: boom',
    );
  });
});

describe('renderSummary', () => {
  it.each([
    {
      why: 'changes get a table, unchanged objects fold away',
      r: report([entry('ConfigMap/a/b', 'configured'), entry('Service/a/s', 'unchanged')]),
      has: ['### 🔄', '| `ConfigMap/a/b` | configured |', '<details><summary>1 unchanged</summary>'],
      lacks: ['| `Service/a/s`'],
    },
    {
      why: 'no change',
      r: report([entry('Service/a/s', 'unchanged')]),
      has: ['### ✅', '**0** created'],
      lacks: ['| Object |'],
    },
    {
      why: 'failure escapes markup',
      r: report([], { ok: false, error: 'bad <script> | pipe' }),
      has: ['### ❌', '**Failed:** bad &lt;script&gt; \\| pipe'],
      lacks: ['<script>'],
    },
  ])('$why', ({ r, has, lacks }) => {
    const md = renderSummary(r);
    for (const s of has) expect(md).toContain(s);
    for (const s of lacks) expect(md).not.toContain(s);
  });
});

describe('renderSummary with several Kustomizations', () => {
  it('adds one row per Kustomization with its result', () => {
    const ok = report([entry('ConfigMap/a/x', 'created')], { kustomization: 'flux-system/infra' });
    const bad = report([], {
      kustomization: 'flux-system/apps',
      ok: false,
      error: "skipped: dependency 'flux-system/db' is not ready\nmore",
    });
    const md = renderSummary(report([entry('ConfigMap/a/x', 'created')], { ok: false, kustomizations: [ok, bad] }));
    expect(md).toContain('| `flux-system/infra` | ok | 1 | 0 | 0 |');
    expect(md).toContain("| `flux-system/apps` | ❌ skipped: dependency 'flux-system/db' is not ready | 0 | 0 | 0 |");
  });
});

describe('removed Kustomizations in the report', () => {
  const removed = (action: 'orphaned' | 'deleted', reason: string) =>
    report([], {
      removed: [
        {
          kustomization: 'flux-system/old',
          inventory: 'flux-system/kustomize-reconcile.flux-system.old',
          objects: 3,
          deletionPolicy: 'MirrorPrune',
          action,
          reason,
        },
      ],
    });
  it.each([
    [
      'orphaned',
      'its 3 object(s) stay in the cluster',
      'Kustomization flux-system/old (removed from the repository) orphaned: its 3 object(s) stay in the cluster',
      '| `flux-system/old` | 3 | MirrorPrune | orphaned | its 3 object(s) stay in the cluster |',
    ],
    [
      'deleted',
      'deletionPolicy: MirrorPrune with prune: true',
      'Kustomization flux-system/old (removed from the repository) deleted: deletionPolicy: MirrorPrune with prune: true',
      '| `flux-system/old` | 3 | MirrorPrune | deleted | deletionPolicy: MirrorPrune with prune: true |',
    ],
  ] as const)('%s: a log line and a summary row', (action, reason, line, row) => {
    const r = removed(action, reason);
    expect(renderLines(r)).toContain(line);
    expect(renderSummary(r)).toContain(row);
  });
});
