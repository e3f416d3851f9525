import { describe, expect, it } from 'vitest';
import { countReport, type PrunedObject, type Report } from '../../src/report/model.js';
import { exitStatus, type ExitPolicy } from '../../src/report/exit.js';
import { closingLines, renderLines, renderSummary } from '../../src/report/render.js';
import { takesWithIt } from '../../src/report/deletions.js';
import { sourceText } from '../../src/report/source.js';
import type { ChangeSetEntry } from '../../src/ssa/changeset.js';

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
    counts: countReport(changeset, extra.pruned),
    durationMs: 1234,
    ...extra,
  };
}

describe('exitStatus', () => {
  it.each<{ why: string; r: Report; policy: ExitPolicy; want: number }>([
    { why: 'error', r: report([], { ok: false, error: 'x' }), policy: 'errors', want: 2 },
    {
      why: 'error wins over findings',
      r: report([entry('A/a', 'created')], { ok: false }),
      policy: 'changes',
      want: 2,
    },
    { why: 'changes in apply mode', r: report([entry('A/a', 'created')]), policy: 'errors', want: 0 },
    { why: 'changes found by diff', r: report([entry('A/a', 'configured')]), policy: 'changes', want: 1 },
    { why: 'nothing to change for diff', r: report([entry('A/a', 'unchanged')]), policy: 'changes', want: 0 },
    {
      why: 'only a prune found by diff',
      r: report([entry('A/a', 'unchanged')], { pruned: [{ subject: 'B/b', action: 'deleted' }] }),
      policy: 'changes',
      want: 1,
    },
    {
      why: 'a prune that is skipped is no finding',
      r: report([entry('A/a', 'unchanged')], { pruned: [{ subject: 'B/b', action: 'skipped', reason: 'x' }] }),
      policy: 'changes',
      want: 0,
    },
    {
      why: 'a prune in apply mode',
      r: report([], { pruned: [{ subject: 'B/b', action: 'deleted' }] }),
      policy: 'errors',
      want: 0,
    },
  ])('$why → $want', ({ r, policy, want }) => {
    expect(exitStatus(r, policy)).toBe(want);
  });
});

describe('renderLines', () => {
  it('prints each object then the totals', () => {
    expect(renderLines(report([entry('Namespace/a', 'created'), entry('ConfigMap/a/b', 'unchanged')]))).toEqual([
      'Namespace/a created',
      'ConfigMap/a/b unchanged',
      'Applied Kustomization flux-system/deploy (./deploy): 1 created, 0 configured, 0 deleted, 1 unchanged in 1.2s',
    ]);
  });
  it('says what failed', () => {
    expect(renderLines(report([], { ok: false, error: 'ConfigMap/x dry-run failed: boom' })).at(-1)).toBe(
      'Failed on Kustomization flux-system/deploy (./deploy) after 0 created, 0 configured, 0 deleted, 0 unchanged in 1.2s: ConfigMap/x dry-run failed: boom',
    );
  });
  it.each([
    [
      'skipped for its dependency',
      'dependency',
      "skipped: dependency 'flux-system/infra' failed in another job: bad",
      "Skipped Kustomization flux-system/deploy (./deploy): dependency 'flux-system/infra' failed in another job: bad",
    ],
    [
      'another stage, whatever its words',
      'render',
      'skipped: not really',
      'Failed on Kustomization flux-system/deploy (./deploy) after 0 created, 0 configured, 0 deleted, 0 unchanged in 1.2s: skipped: not really',
    ],
  ] as const)('a Kustomization %s', (_, stage, error, line) => {
    const failure = { stage, reason: 'DependencyNotReady', message: error };
    expect(renderLines(report([], { ok: false, error, failure })).at(-1)).toBe(line);
  });
});

describe('deletions in the totals', () => {
  const pruned: PrunedObject[] = [
    { subject: 'ConfigMap/a/old', action: 'deleted' },
    { subject: 'ConfigMap/a/gone', action: 'deleted', reason: 'already gone' },
    {
      subject: 'ConfigMap/a/keep',
      action: 'skipped',
      reason: 'it is marked kustomize.toolkit.fluxcd.io/prune: disabled',
    },
  ];
  const changeset = [entry('Namespace/a', 'created'), entry('ConfigMap/a/b', 'unchanged')];
  it.each([
    [
      'apply',
      'Applied Kustomization flux-system/deploy (./deploy): 1 created, 0 configured, 2 deleted, 1 unchanged in 1.2s',
    ],
    [
      'preview',
      'Preview of Kustomization flux-system/deploy (./deploy): 1 created, 0 configured, 2 deleted, 1 unchanged in 1.2s',
    ],
  ] as const)('%s: the final line counts the objects prune deleted', (mode, line) => {
    const r = report(changeset, { mode, pruned });
    expect(r.counts).toEqual({ created: 1, configured: 0, unchanged: 1, skipped: 0, deleted: 2 });
    expect(renderLines(r).at(-1)).toBe(line);
  });
  it('the closing lines leave out the per-object lines the run already logged', () => {
    const r = report(changeset, { pruned });
    expect(closingLines(r)).toEqual([
      'Applied Kustomization flux-system/deploy (./deploy): 1 created, 0 configured, 2 deleted, 1 unchanged in 1.2s',
    ]);
    // The whole transcript still has each object once.
    expect(renderLines(r).filter((l) => l.startsWith('ConfigMap/a/old'))).toEqual(['ConfigMap/a/old deleted']);
  });
  it('the summary counts them in the totals and the per-Kustomization table, and a prune alone is a change', () => {
    const one = report([entry('ConfigMap/a/b', 'unchanged')], { pruned, kustomization: 'flux-system/infra' });
    const md = renderSummary(report(one.changeset, { pruned, kustomizations: [one] }));
    expect(md).toContain('### 🔄 kustomize-reconcile: apply');
    expect(md).toContain('**0** created · **0** configured · ⚠️ **2** deleted · **1** unchanged · 1.2s');
    expect(md).toContain('| Kustomization | Result | Created | Configured | Deleted | Unchanged |');
    expect(md).toContain('| `flux-system/infra` | 🔄 changed | 0 | 0 | 2 | 1 |');
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
      failure: { stage: 'dependency', reason: 'DependencyNotReady', message: 'skipped' },
    });
    const md = renderSummary(report([entry('ConfigMap/a/x', 'created')], { ok: false, kustomizations: [ok, bad] }));
    expect(md).toContain('| `flux-system/infra` | 🔄 changed | 1 | 0 | 0 | 0 |');
    expect(md).toContain(
      "| `flux-system/apps` | ⏭️ skipped: dependency 'flux-system/db' is not ready | 0 | 0 | 0 | 0 |",
    );
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

describe('the source each Kustomization was built from', () => {
  it.each<[string, Report['source'], string | undefined]>([
    ['no source recorded', undefined, undefined],
    ['this checkout', { ref: 'this checkout', revision: 'abc' }, undefined],
    [
      "the checkout's GitRepository",
      { ref: 'GitRepository flux-system/flux-system (this checkout)', revision: 'abc' },
      undefined,
    ],
    [
      'another GitRepository',
      { ref: 'GitRepository apps/dev-team', revision: `main@sha1:${'a1b2c3d4e5'.repeat(4)}` },
      'GitRepository apps/dev-team at main@sha1:a1b2c3d',
    ],
    [
      'an ExternalArtifact with its origin',
      {
        ref: 'ExternalArtifact flux-system/apps',
        revision: `latest@sha256:${'0123456789abcdef'.repeat(4)}`,
        originRevision: `main@sha1:${'f'.repeat(40)}`,
      },
      'ExternalArtifact flux-system/apps at latest@sha256:0123456789ab (from main@sha1:fffffff)',
    ],
    ['a source that could not be had', { ref: 'OCIRepository flux-system/charts' }, 'OCIRepository flux-system/charts'],
  ])('%s', (_, source, want) => {
    expect(sourceText({ ...(source ? { source } : {}) })).toBe(want);
    const child = report([entry('A/a', 'created')], {
      kustomization: 'flux-system/apps',
      ...(source ? { source } : {}),
    });
    const summary = renderSummary(report([], { kustomizations: [child] }));
    if (want === undefined) expect(summary).not.toContain('built from');
    else expect(summary).toContain(`| \`flux-system/apps\`<br><sub>built from ${want.replaceAll('<', '&lt;')}</sub> |`);
    const single = renderSummary(child);
    if (want === undefined) expect(single).not.toContain('Built from');
    else expect(single).toContain(`Built from ${want}\n`);
  });
});

describe('deletions stand out', () => {
  const pruned: PrunedObject[] = [
    { subject: 'Namespace/ingress-nginx', action: 'deleted' },
    { subject: 'Deployment/ingress-nginx/controller', action: 'deleted' },
    { subject: 'Service/ingress-nginx/controller', action: 'deleted' },
    { subject: 'CustomResourceDefinition/widgets.example.com', action: 'deleted' },
    { subject: 'ConfigMap/apps/keep', action: 'skipped', reason: 'kustomize.toolkit.fluxcd.io/prune: disabled' },
  ];

  it.each<[string, string | undefined]>([
    [
      'Namespace/ingress-nginx',
      'a Namespace: everything in it is deleted with it, whoever manages it (2 of the objects listed here are in it)',
    ],
    [
      'CustomResourceDefinition/widgets.example.com',
      'a CustomResourceDefinition: every object of its kind, in every namespace, is deleted with it',
    ],
    ['Deployment/ingress-nginx/controller', undefined],
    ['Namespace/empty', 'a Namespace: everything in it is deleted with it, whoever manages it'],
  ])('takesWithIt(%s)', (subject, want) => {
    expect(takesWithIt(subject, pruned)).toBe(want);
  });

  it('a preview summary says what it would delete before what it would create, with the heavy ones flagged', () => {
    const r = report([entry('ConfigMap/a/new', 'created')], { mode: 'preview', pruned });
    const md = renderSummary(r);
    expect(md).toContain('⚠️ **4** to delete');
    const prune = md.indexOf('| ⚠️ Would prune | Result | Reason |');
    expect(prune).toBeGreaterThan(0);
    expect(prune).toBeLessThan(md.indexOf('| `ConfigMap/a/new` | would create |'));
    expect(md).toContain(
      '| ⚠️ `Namespace/ingress-nginx` | would delete | a Namespace: everything in it is deleted with it',
    );
    expect(md).toContain('| `Deployment/ingress-nginx/controller` | would delete |  |');
    expect(md).toContain('| `ConfigMap/apps/keep` | skipped | kustomize.toolkit.fluxcd.io/prune: disabled |');
  });
});

describe('an object planned without a dry-run says so', () => {
  it('in the summary, the CLI lines and the comment', () => {
    const note = 'checked without a server dry-run: its Namespace team does not exist yet and would be created first';
    const r = report([{ ...entry('ConfigMap/team/x', 'created'), note }], { mode: 'preview' });
    expect(renderSummary(r)).toContain(`| \`ConfigMap/team/x\` | would create (${note}) |`);
    expect(renderLines(r)[0]).toBe(`ConfigMap/team/x created (${note})`);
  });
});
