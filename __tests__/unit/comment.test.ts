import { describe, expect, it } from 'vitest';
import {
  CHECK_TEXT_LIMIT,
  COMMENT_LIMIT,
  checkConclusion,
  commentMarker,
  renderCheckOutput,
  renderComment,
  type Tier,
} from '../../src/report/comment.js';
import { countReport, type PrunedObject, type RemovedKustomization, type Report } from '../../src/report/model.js';
import type { ChangeSetEntry } from '../../src/ssa/changeset.js';
import { diffObjects, type FieldChange } from '../../src/ssa/diff.js';
import { golden } from '../helpers/golden.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

const RUN_URL = 'https://github.com/acme/fleet/actions/runs/1234567890';
const REVISION = '3f2c1a9e8b7d6c5f4e3d2c1b0a9f8e7d6c5b4a39';
const MARKER = commentMarker('clusters/production/*.yaml');

// Secret values: none of these may reach a comment or a check run.
const OLD_PASSWORD = 'hunter2-old-password';
const NEW_PASSWORD = 'correct-horse-battery-staple';
const NEW_TOKEN = 'tok_9f8e7d6c5b4a';
const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');
const SECRET_VALUES = [OLD_PASSWORD, NEW_PASSWORD, NEW_TOKEN, b64(OLD_PASSWORD), b64(NEW_PASSWORD), b64(NEW_TOKEN)];

function entry(kind: string, ns: string | undefined, name: string, action: ChangeSetEntry['action']): ChangeSetEntry {
  return {
    subject: ns ? `${kind}/${ns}/${name}` : `${kind}/${name}`,
    action,
    apiVersion: kind === 'Deployment' ? 'apps/v1' : 'v1',
    kind,
    ...(ns ? { namespace: ns } : {}),
    name,
  };
}

function configured(kind: string, ns: string, name: string, diff: FieldChange[]): ChangeSetEntry {
  return { ...entry(kind, ns, name, 'configured'), diff };
}

function report(changeset: ChangeSetEntry[], extra: Partial<Report> = {}): Report {
  return {
    mode: 'preview',
    kustomization: 'flux-system/apps',
    path: './apps/production',
    server: 'https://k8s.example.com',
    ok: true,
    changeset,
    counts: countReport(changeset, extra.pruned),
    durationMs: 4200,
    notes: [],
    ...extra,
  };
}

/** As src/reconcile/report.ts combines several Kustomizations' reports, then adds removed Kustomizations. */
function combine(reports: Report[], removed: { r: RemovedKustomization; pruned: PrunedObject[] }[] = []): Report {
  const changeset = reports.flatMap((r) => r.changeset);
  const pruned = [...reports.flatMap((r) => r.pruned ?? []), ...removed.flatMap((x) => x.pruned)];
  const health = reports.flatMap((r) => r.health ?? []);
  const failed = reports.filter((r) => !r.ok);
  return {
    mode: 'preview',
    kustomization: reports.map((r) => r.kustomization).join(', '),
    path: reports.map((r) => r.path).join(', '),
    server: 'https://k8s.example.com',
    ok: failed.length === 0,
    changeset,
    counts: countReport(changeset, pruned),
    durationMs: 9100,
    notes: reports.flatMap((r) => r.notes.map((n) => `[${r.kustomization}] ${n}`)),
    ...(health.length > 0 ? { health } : {}),
    ...(pruned.length > 0 ? { pruned } : {}),
    ...(removed.length > 0 ? { removed: removed.map((x) => x.r) } : {}),
    ...(failed.length > 0
      ? { error: failed.map((r) => `Kustomization ${r.kustomization}: ${r.error ?? 'failed'}`).join('\n') }
      : {}),
    kustomizations: reports,
  };
}

const deployment = (replicas: number, tag: string): Record<string, unknown> => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'apps', resourceVersion: '812' },
  spec: {
    replicas,
    template: { spec: { containers: [{ name: 'web', image: `ghcr.io/acme/web:${tag}` }] } },
  },
});

const secret = (data: Record<string, string>): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'db', namespace: 'apps' },
  type: 'Opaque',
  data,
});

/** A created ConfigMap, a Deployment with a 2-field diff and a Secret whose password changed. */
const smallPreview = report([
  entry('ConfigMap', 'apps', 'web-settings', 'created'),
  configured('Deployment', 'apps', 'web', diffObjects(deployment(2, '1.4.0'), deployment(3, '1.5.0'))),
  configured(
    'Secret',
    'apps',
    'db',
    diffObjects(
      secret({ username: b64('admin'), password: b64(OLD_PASSWORD) }),
      secret({ username: b64('admin'), password: b64(NEW_PASSWORD), token: b64(NEW_TOKEN) }),
    ),
  ),
  entry('Service', 'apps', 'web', 'unchanged'),
  entry('ServiceAccount', 'apps', 'web', 'unchanged'),
]);

const failedReport = report([entry('Namespace', undefined, 'apps', 'created')], {
  ok: false,
  error: [
    '2 objects of the apply stage failed the dry-run; nothing of the stage was applied:',
    'Deployment/apps/web dry-run failed (Invalid): Deployment.apps "web" is invalid: spec.template.spec.containers[0].image: Required value',
    'Ingress/apps/web dry-run failed (BadRequest): admission webhook "validate.nginx.ingress.kubernetes.io" denied the request: ```snippet``` directives are disabled <script>|',
  ].join('\n'),
});

const multiReport = combine(
  [
    report(
      [entry('Namespace', undefined, 'monitoring', 'created'), entry('Namespace', undefined, 'apps', 'unchanged')],
      {
        kustomization: 'flux-system/infra',
        path: './infra',
      },
    ),
    report(
      [
        configured('Deployment', 'apps', 'web', diffObjects(deployment(2, '1.4.0'), deployment(2, '1.5.0'))),
        entry('Service', 'apps', 'web', 'unchanged'),
        entry('ConfigMap', 'apps', 'feature-flags', 'skipped'),
      ],
      {
        kustomization: 'flux-system/apps',
        path: './apps/production',
        pruned: [
          { subject: 'ConfigMap/apps/old-settings', action: 'deleted' },
          {
            subject: 'PersistentVolumeClaim/apps/data',
            action: 'skipped',
            reason: 'kustomize.toolkit.fluxcd.io/prune: disabled',
          },
        ],
        notes: ['ConfigMap/apps/feature-flags has kustomize.toolkit.fluxcd.io/reconcile: disabled'],
      },
    ),
    report([], {
      kustomization: 'flux-system/monitoring',
      path: './monitoring',
      ok: false,
      error:
        'kustomize build failed: accumulating resources: ./monitoring/grafana: evalsymlink failure: no such file or directory',
    }),
  ],
  [
    {
      r: {
        kustomization: 'flux-system/legacy',
        inventory: 'flux-system/legacy-inventory',
        objects: 2,
        deletionPolicy: 'Delete',
        action: 'deleted',
        reason: 'deletionPolicy Delete: its objects are deleted',
      },
      pruned: [
        {
          subject: 'Deployment/legacy/api',
          action: 'deleted',
          reason: 'flux-system/legacy removed',
          removedWith: 'flux-system/legacy',
        },
        {
          subject: 'Service/legacy/api',
          action: 'deleted',
          reason: 'flux-system/legacy removed',
          removedWith: 'flux-system/legacy',
        },
      ],
    },
  ],
);

const pad = (i: number, n = 5): string => String(i).padStart(n, '0');

/** `lines` env value changes, about 75 characters each. */
function envDiff(lines: number): FieldChange[] {
  return Array.from({ length: lines }, (_, j) => ({
    path: `/spec/template/spec/containers/0/env/${j}/value`,
    kind: 'changed' as const,
    before: `old-value-${pad(j, 3)}`,
    after: `new-value-${pad(j, 3)}`,
  }));
}

/** `n` configured Deployments with `lines`-line diffs, and a few created and pruned objects. */
function large(n: number, lines: number): Report {
  const changeset = Array.from({ length: n }, (_, i) =>
    configured('Deployment', `team-${pad(i % 40, 2)}`, `app-${pad(i)}`, envDiff(lines)),
  );
  for (let i = 0; i < Math.ceil(n / 20); i++) changeset.push(entry('ConfigMap', 'shared', `cm-${pad(i)}`, 'created'));
  const pruned: PrunedObject[] = Array.from({ length: Math.ceil(n / 50) }, (_, i) => ({
    subject: `ConfigMap/shared/retired-${pad(i)}`,
    action: 'deleted' as const,
  }));
  return report(changeset, { kustomization: 'flux-system/fleet', path: './fleet', pruned });
}

function fencesBalanced(md: string): boolean {
  return md.split('\n').filter((l) => l.startsWith('```')).length % 2 === 0;
}

describe('renderComment golden files', () => {
  it.each<{ name: string; r: Report; tier: Tier; has: string[] }>([
    {
      name: 'small-preview',
      r: smallPreview,
      tier: 'full',
      has: [
        '### 🔄 kustomize-reconcile preview',
        '- /spec/replicas: 2\n+ /spec/replicas: 3',
        '- /data/password: *** (before)\n+ /data/password: *** (after)',
      ],
    },
    { name: 'failed', r: failedReport, tier: 'full', has: ['### ❌', '```text', "'''snippet'''"] },
    { name: 'multi', r: multiReport, tier: 'full', has: ['3 Kustomizations', '| `flux-system/legacy` (removed) |'] },
    { name: 'tier-full', r: large(30, 12), tier: 'full', has: ['(12 fields)'] },
    { name: 'tier-truncated', r: large(300, 40), tier: 'truncated', has: ['more lines cut', 'diffs are cut short'] },
    { name: 'tier-list', r: large(1_000, 40), tier: 'list', has: ['— 40 fields', 'field diffs of 1,000 objects'] },
    { name: 'tier-summary', r: large(40_000, 40), tier: 'summary', has: ['**42,800 more objects**'] },
  ])('$name → $tier', ({ name, r, tier, has }) => {
    const out = renderComment(r, { marker: MARKER, runUrl: RUN_URL, revision: REVISION });
    golden(`${name}.md`, out.body);
    expect(out.body.length).toBeLessThanOrEqual(COMMENT_LIMIT);
    expect(out.tier).toBe(tier);
    expect(out.body.split('\n', 1)[0]).toBe(MARKER);
    expect(fencesBalanced(out.body)).toBe(true);
    for (const s of has) expect(out.body).toContain(s);
    if (tier !== 'full') expect(out.body).toContain(`[job summary](${RUN_URL})`);
    else expect(out.body).not.toContain('✂️');
    for (const v of SECRET_VALUES) expect(out.body).not.toContain(v);
  });
});

describe('renderComment stays within the limit', () => {
  const huge = 'x'.repeat(200_000);
  it.each<{ why: string; r: Report; limit?: number; tier: Tier }>([
    { why: '200 KB error, few objects', r: { ...smallPreview, ok: false, error: `boom\n${huge}` }, tier: 'truncated' },
    { why: '50,000 objects and a 200 KB error', r: { ...large(50_000, 40), ok: false, error: huge }, tier: 'summary' },
    { why: '3,000 objects', r: large(3_000, 40), tier: 'summary' },
    { why: 'a 20,000-line diff', r: report([configured('ConfigMap', 'a', 'big', envDiff(20_000))]), tier: 'truncated' },
    { why: 'a tiny limit', r: multiReport, limit: 120, tier: 'summary' },
    { why: 'a limit shorter than the marker', r: smallPreview, limit: 10, tier: 'summary' },
  ])('$why → $tier', ({ r, limit, tier }) => {
    const out = renderComment(r, { marker: MARKER, runUrl: RUN_URL, ...(limit ? { limit } : {}) });
    expect(out.body.length).toBeLessThanOrEqual(limit ?? COMMENT_LIMIT);
    expect(out.tier).toBe(tier);
    if ((limit ?? COMMENT_LIMIT) > MARKER.length) expect(out.body.split('\n', 1)[0]).toBe(MARKER);
    if (tier !== 'full' && (limit ?? COMMENT_LIMIT) > 1_000) expect(out.body).toContain(RUN_URL);
  });

  it.each([
    { name: 'small preview', r: smallPreview },
    { name: 'failed', r: failedReport },
    { name: 'several Kustomizations', r: multiReport },
  ])('$name: every limit down to the marker length gives a fitting body, tiers falling as the limit does', ({ r }) => {
    const rank: Record<Tier, number> = { full: 3, truncated: 2, list: 1, summary: 0 };
    const full = renderComment(r, { marker: MARKER, runUrl: RUN_URL }).body.length;
    const seen = new Set<Tier>();
    let last = rank.full;
    for (let limit = full; limit > MARKER.length; limit -= 7) {
      const out = renderComment(r, { marker: MARKER, runUrl: RUN_URL, limit });
      expect(out.body.length).toBeLessThanOrEqual(limit);
      expect(out.body.split('\n', 1)[0]).toBe(MARKER);
      expect(rank[out.tier]).toBeLessThanOrEqual(last);
      last = rank[out.tier];
      seen.add(out.tier);
      for (const v of SECRET_VALUES) expect(out.body).not.toContain(v);
    }
    expect(seen).toContain('full');
    expect(seen).toContain('summary');
  });

  it('cuts the error and says so', () => {
    const { body } = renderComment({ ...smallPreview, ok: false, error: huge }, { marker: MARKER });
    expect(body).toContain('more characters of the error left out');
    expect(body).toContain('the error is cut');
    expect(body).toContain('the job summary of this workflow run');
  });

  it('masks Secret values even when a diff arrives unmasked', () => {
    const raw = configured('Secret', 'apps', 'db', [
      { path: '/data/password', kind: 'changed', before: b64(OLD_PASSWORD), after: b64(NEW_PASSWORD) },
      { path: '/stringData/token', kind: 'added', after: NEW_TOKEN },
    ]);
    const { body } = renderComment(report([raw]), { marker: MARKER });
    for (const v of SECRET_VALUES) expect(body).not.toContain(v);
    expect(body).toContain('+ /stringData/token: ***');
  });

  it('keeps a diff from closing its fence', () => {
    const diff: FieldChange[] = [{ path: '/data/script', kind: 'changed', before: '```\n</details>', after: 'ok' }];
    const { body } = renderComment(report([configured('ConfigMap', 'a', 'b', diff)]), { marker: MARKER });
    expect(fencesBalanced(body)).toBe(true);
    expect(body).toContain(`"'''\\n</details>"`);
  });
});

describe('commentMarker', () => {
  it.each([
    { key: 'clusters/production/*.yaml', want: '<!-- kustomize-reconcile: clusters/production/*.yaml -->' },
    { key: 'a-->b', want: '<!-- kustomize-reconcile: a--&gt;b -->' },
    { key: 'a--!>b<!--c', want: '<!-- kustomize-reconcile: a--!&gt;b&lt;!--c -->' },
    { key: 'x\ny', want: '<!-- kustomize-reconcile: x&#10;y -->' },
    { key: '&gt;', want: '<!-- kustomize-reconcile: &amp;gt; -->' },
  ])('$key', ({ key, want }) => {
    const marker = commentMarker(key);
    expect(marker).toBe(want);
    expect(marker.indexOf('-->')).toBe(marker.length - 3);
    expect(marker).not.toContain('--!>');
  });

  it('keeps long keys apart within a bounded length', () => {
    const a = commentMarker('k'.repeat(5_000) + 'a');
    const b = commentMarker('k'.repeat(5_000) + 'b');
    expect(a).not.toBe(b);
    expect(a.length).toBeLessThanOrEqual(240);
    expect(commentMarker('k'.repeat(5_000) + 'a')).toBe(a);
  });
});

describe('checkConclusion', () => {
  const removed = (action: RemovedKustomization['action']): RemovedKustomization => ({
    kustomization: 'flux-system/legacy',
    inventory: 'flux-system/legacy',
    objects: 3,
    deletionPolicy: 'Delete',
    action,
    reason: 'r',
  });
  it.each<{ why: string; r: Report; want: ReturnType<typeof checkConclusion> }>([
    { why: 'failed', r: failedReport, want: 'failure' },
    { why: 'a Kustomization failed', r: multiReport, want: 'failure' },
    { why: 'preview creates', r: report([entry('ConfigMap', 'a', 'b', 'created')]), want: 'neutral' },
    { why: 'preview configures', r: smallPreview, want: 'neutral' },
    { why: 'preview without changes', r: report([entry('ConfigMap', 'a', 'b', 'unchanged')]), want: 'success' },
    {
      why: 'preview prunes',
      r: report([], { pruned: [{ subject: 'ConfigMap/a/b', action: 'deleted' }] }),
      want: 'neutral',
    },
    {
      why: 'preview prune skipped',
      r: report([], { pruned: [{ subject: 'ConfigMap/a/b', action: 'skipped', reason: 'disabled' }] }),
      want: 'success',
    },
    {
      why: 'preview deletes a removed Kustomization',
      r: report([], { removed: [removed('deleted')] }),
      want: 'neutral',
    },
    {
      why: 'preview orphans a removed Kustomization',
      r: report([], { removed: [removed('orphaned')] }),
      want: 'success',
    },
    { why: 'drift found', r: { ...smallPreview, mode: 'drift' }, want: 'neutral' },
    { why: 'apply with changes', r: { ...smallPreview, mode: 'apply' }, want: 'success' },
  ])('$why → $want', ({ r, want }) => {
    expect(checkConclusion(r)).toBe(want);
  });
});

describe('renderCheckOutput', () => {
  it.each<{ why: string; r: Report; title: string; text: string[] }>([
    {
      why: 'changes',
      r: smallPreview,
      title: '1 to create, 2 to configure',
      text: ['- /spec/replicas: 2\n+ /spec/replicas: 3'],
    },
    {
      why: 'failure',
      r: failedReport,
      title: 'Failed: 2 objects of the apply stage failed the dry-run; nothing of the stage was applied:',
      text: ['- `Namespace/apps`'],
    },
    {
      why: 'several Kustomizations',
      r: multiReport,
      title:
        'Failed: Kustomization flux-system/monitoring: kustomize build failed: accumulating resources: ./monitoring/g…',
      text: ['#### `flux-system/apps`'],
    },
    {
      why: 'no changes',
      r: report([entry('ConfigMap', 'a', 'b', 'unchanged')]),
      title: 'No changes',
      text: ['No objects'],
    },
    {
      why: 'apply',
      r: { ...smallPreview, mode: 'apply' },
      title: '1 created, 2 configured',
      text: ['**Configured (2)**'],
    },
    {
      why: 'deletions',
      r: large(60, 2),
      title: '3 to create, 60 to configure, 2 to delete',
      text: ['**⚠️ Would prune (2)**'],
    },
    {
      why: 'many objects',
      r: large(40_000, 40),
      title: '2,000 to create, 40,000 to configure, 800 to delete',
      text: ['**42,800 more objects**'],
    },
  ])('$why', ({ r, title, text }) => {
    const out = renderCheckOutput(r, { runUrl: RUN_URL });
    expect(out.title).toEqual(title);
    expect(out.summary.length).toBeLessThanOrEqual(CHECK_TEXT_LIMIT);
    expect(out.text.length).toBeLessThanOrEqual(CHECK_TEXT_LIMIT);
    expect(out.summary).toContain('| Kustomization | Result | Create | Configure | Delete (prune) | Unchanged |');
    for (const s of text) expect(out.text).toContain(s);
    for (const v of SECRET_VALUES) expect(out.summary + out.text).not.toContain(v);
  });

  it('keeps a 200 KB error and 50,000 objects within the limits', () => {
    const out = renderCheckOutput({ ...large(50_000, 40), ok: false, error: 'e'.repeat(200_000) }, { limit: 30_000 });
    expect(out.summary.length).toBeLessThanOrEqual(30_000);
    expect(out.text.length).toBeLessThanOrEqual(30_000);
    expect(out.title.length).toBeLessThanOrEqual(120);
  });
});

describe('renderComment: deletions first and loud', () => {
  it('lists what a preview would prune before what it would create, flagging a Namespace with what goes with it', () => {
    const r = report([entry('ConfigMap', 'apps', 'new', 'created'), entry('ConfigMap', 'apps', 'same', 'unchanged')], {
      pruned: [
        { subject: 'Namespace/ingress-nginx', action: 'deleted' },
        { subject: 'Deployment/ingress-nginx/controller', action: 'deleted' },
      ],
    });
    const { body } = renderComment(r, { marker: MARKER });
    const prune = body.indexOf('**⚠️ Would prune (2)**');
    expect(prune).toBeGreaterThan(0);
    expect(prune).toBeLessThan(body.indexOf('**Would create (1)**'));
    expect(body).toContain(
      '- ⚠️ `Namespace/ingress-nginx` — would delete — **a Namespace: everything in it is deleted with it, whoever manages it (1 of the objects listed here are in it)**',
    );
    expect(body).toContain('- `Deployment/ingress-nginx/controller` — would delete\n');
  });
});
