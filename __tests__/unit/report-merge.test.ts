import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkConclusion, commentMarker, renderCheckOutput, renderComment } from '../../src/report/comment.js';
import { parseReportFile } from '../../src/report/file.js';
import { readReportFiles } from '../../src/report/merge-files.js';
import { NO_MATRIX_NOTE } from '../../src/report/merge-jobs.js';
import { mergeReports, type NamedReportFile } from '../../src/report/merge.js';
import { countReport, type Report } from '../../src/report/model.js';
import { exitStatus } from '../../src/report/exit.js';
import { closingLines, renderSummary } from '../../src/report/render.js';
import {
  entry,
  fileText,
  jobReport,
  kustomization,
  named,
  REVISION,
  twoClusters,
  webDeployment,
} from '../helpers/report-files.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

const MARKER = commentMarker('clusters/*/flux-system/*.yaml');

const infra = (cluster?: string) =>
  jobReport([kustomization('flux-system/infra', './infra', [entry('Namespace/apps', 'created')])], {
    ...(cluster ? { cluster } : {}),
  });
const apps = (cluster?: string, extra: Partial<Report> = {}) =>
  jobReport([kustomization('flux-system/apps', './apps', [webDeployment(3, '1.5.0')], extra)], {
    ...(cluster ? { cluster } : {}),
  });

/** The merged Kustomizations as `cluster|name`. */
const order = (r: Report) => (r.kustomizations ?? []).map((k) => `${k.cluster ?? ''}|${k.kustomization}`);

const allFiles = (): NamedReportFile[] => Object.entries(twoClusters()).map(([name, r]) => named(name, r));

describe('mergeReports', () => {
  it.each<{ why: string; files: NamedReportFile[]; want: string[] }>([
    {
      why: "a job's combined report gives its Kustomizations; a single report is one",
      files: [
        named('a.json', jobReport([infra().kustomizations![0]!, apps().kustomizations![0]!])),
        named('b.json', kustomization('flux-system/monitoring', './monitoring', [])),
      ],
      want: ['|flux-system/infra', '|flux-system/apps', '|flux-system/monitoring'],
    },
    {
      why: 'files are taken in name order, whatever order they were given in',
      files: [named('b.json', apps()), named('a.json', infra())],
      want: ['|flux-system/infra', '|flux-system/apps'],
    },
    {
      why: 'clusters as they first appear in the files by name, the single cluster first',
      files: [
        named('1-staging-apps.json', apps('staging')),
        named('0-production-apps.json', apps('production')),
        named('2-production-infra.json', infra('production')),
        named('3-single.json', infra()),
      ],
      want: [
        '|flux-system/infra',
        'production|flux-system/apps',
        'production|flux-system/infra',
        'staging|flux-system/apps',
      ],
    },
    {
      why: 'the same Kustomization in two clusters is two Kustomizations',
      files: [named('p.json', apps('production')), named('s.json', apps('staging'))],
      want: ['production|flux-system/apps', 'staging|flux-system/apps'],
    },
    {
      why: 'two reports of one Kustomization (a job ran twice): both are kept',
      files: [
        named('apps-1.json', apps('production')),
        named('infra.json', infra('production')),
        named('apps-2.json', apps('production')),
      ],
      want: ['production|flux-system/apps', 'production|flux-system/apps', 'production|flux-system/infra'],
    },
    {
      why: 'all four jobs of two clusters: by dependsOn level within a cluster, as the jobs say it',
      files: allFiles(),
      want: [
        'production|flux-system/infra',
        'production|flux-system/apps',
        'staging|flux-system/infra',
        'staging|flux-system/apps',
      ],
    },
  ])('$why', ({ files, want }) => {
    expect(order(mergeReports(files))).toEqual(want);
  });

  it('keeps both reports of one Kustomization, whichever sorts later, and fails naming both files', () => {
    const failed = apps('production', {
      ok: false,
      error: 'health check failed',
      pruned: [{ subject: 'StatefulSet/apps/payments-db', action: 'deleted' }],
    });
    const merged = mergeReports([named('apps-2.json', apps('production')), named('apps-1.json', failed)]);
    expect(merged.kustomizations).toHaveLength(2);
    expect(merged.kustomizations!.map((k) => k.ok)).toEqual([false, true]);
    expect(merged.ok).toBe(false);
    expect(exitStatus(merged, 'errors')).toBe(2);
    expect(merged.counts.deleted).toBe(1);
    expect(merged.pruned).toEqual([{ subject: 'StatefulSet/apps/payments-db', action: 'deleted' }]);
    expect(merged.error).toBe(
      [
        'Kustomization production · flux-system/apps (apps-1.json): health check failed',
        'Kustomization production · flux-system/apps is in 2 report files (apps-1.json, apps-2.json): each job writes one, so a job ran twice or a file is not what it says; all of them are shown',
      ].join('\n'),
    );
    expect(merged.notes).toContain(
      '[production · flux-system/apps (apps-2.json)] one of 2 reports of this Kustomization: apps-2.json',
    );
  });

  it.each<{ why: string; files: NamedReportFile[]; error: RegExp }>([
    {
      why: 'apply and preview',
      files: [
        named('a.json', { ...infra(), mode: 'apply' }),
        named('b.json', apps()),
        named('c.json', { ...apps('x'), mode: 'apply' }),
      ],
      error: /different modes \(apply: a\.json, c\.json; preview: b\.json\)/,
    },
    {
      why: 'drift and preview',
      files: [named('a.json', { ...infra(), mode: 'drift' }), named('b.json', apps())],
      error: /drift: a\.json; preview: b\.json/,
    },
    { why: 'no files at all', files: [], error: /no report files to merge/ },
  ])('refuses $why', ({ files, error }) => {
    expect(() => mergeReports(files)).toThrow(error);
  });

  it('recounts the totals over every Kustomization and removed one', () => {
    const merged = mergeReports(allFiles());
    expect(merged.counts).toEqual({ created: 2, configured: 2, unchanged: 4, skipped: 0, deleted: 2 });
    expect(merged.counts).toEqual(countReport(merged.changeset, merged.pruned));
    expect(merged.mode).toBe('preview');
    expect(merged.ok).toBe(true);
    expect(merged.kustomization).toBe(
      'production · flux-system/infra, production · flux-system/apps, staging · flux-system/infra, staging · flux-system/apps',
    );
    expect(merged.server).toBe('https://k8s.example.com');
    expect(merged.cluster).toBeUndefined();
  });

  it('carries removed Kustomizations and their prune results with their cluster', () => {
    const merged = mergeReports(allFiles());
    expect(merged.removed).toEqual([
      expect.objectContaining({ kustomization: 'flux-system/legacy', cluster: 'staging' }),
    ]);
    expect(merged.pruned).toEqual([
      { subject: 'ConfigMap/apps/old-settings', action: 'deleted' },
      expect.objectContaining({
        subject: 'Deployment/legacy/api',
        removedWith: 'flux-system/legacy',
        cluster: 'staging',
      }),
    ]);
    // The removed Kustomization's objects are not any Kustomization's own.
    expect(merged.kustomizations!.flatMap((k) => k.pruned ?? []).map((p) => p.subject)).toEqual([
      'ConfigMap/apps/old-settings',
    ]);
  });

  it('moves a single report’s removed Kustomizations out of its own results', () => {
    const own = kustomization('flux-system/apps', './apps', [], {
      pruned: [
        { subject: 'ConfigMap/apps/a', action: 'deleted' },
        { subject: 'ConfigMap/old/b', action: 'deleted', removedWith: 'flux-system/old' },
      ],
      removed: [
        {
          kustomization: 'flux-system/old',
          inventory: 'flux-system/old',
          objects: 1,
          deletionPolicy: 'MirrorPrune',
          action: 'deleted',
          reason: 'pruned',
        },
      ],
    });
    const merged = mergeReports([named('x.json', own)]);
    expect(merged.kustomizations![0]!.pruned).toEqual([{ subject: 'ConfigMap/apps/a', action: 'deleted' }]);
    expect(merged.kustomizations![0]!.counts.deleted).toBe(1);
    expect(merged.counts.deleted).toBe(2);
    expect(merged.removed).toHaveLength(1);
  });

  it.each<{ why: string; files: () => NamedReportFile[]; ok: boolean; error?: string; stage?: string }>([
    { why: 'every job succeeded', files: allFiles, ok: true },
    {
      why: 'a failure and a Kustomization skipped for it: the root cause first',
      files: () => [
        named(
          'a.json',
          jobReport(
            [
              kustomization('flux-system/apps', './apps', [], {
                ok: false,
                error: 'skipped: dependency flux-system/infra failed',
                failure: { stage: 'dependency', reason: 'DependencyNotReady', message: 'x' },
              }),
            ],
            { cluster: 'production' },
          ),
        ),
        named(
          'b.json',
          jobReport(
            [
              kustomization('flux-system/infra', './infra', [], {
                ok: false,
                error: 'kustomize build failed',
                failure: { stage: 'render', reason: 'BuildFailed', message: 'kustomize build failed' },
              }),
            ],
            { cluster: 'production' },
          ),
        ),
      ],
      ok: false,
      error:
        'Kustomization production · flux-system/infra: kustomize build failed\nKustomization production · flux-system/apps: skipped: dependency flux-system/infra failed',
      stage: 'render',
    },
    {
      why: 'the same error in two clusters shares a line',
      files: () =>
        ['production', 'staging'].map((c) =>
          named(
            `${c}.json`,
            jobReport([kustomization('flux-system/apps', './apps', [], { ok: false, error: 'boom' })], { cluster: c }),
          ),
        ),
      ok: false,
      error: 'Kustomizations production · flux-system/apps, staging · flux-system/apps: boom',
    },
    {
      why: 'a job failed besides its Kustomizations (looking for removed ones)',
      files: () => [
        named('a.json', infra('production')),
        named('b.json', {
          ...apps('staging'),
          ok: false,
          error: 'looking for removed Kustomizations failed: forbidden',
          failure: {
            stage: 'removed',
            reason: 'PruneFailed',
            message: 'looking for removed Kustomizations failed: forbidden',
          },
        }),
      ],
      ok: false,
      error: 'b.json (cluster staging): looking for removed Kustomizations failed: forbidden',
      stage: 'removed',
    },
  ])('ok and error: $why', ({ files, ok, error, stage }) => {
    const merged = mergeReports(files());
    expect(merged.ok).toBe(ok);
    expect(merged.error).toBe(error);
    expect(merged.failure?.stage).toBe(stage);
    if (stage !== undefined) expect(merged.failure?.message).toBe(error);
    expect(exitStatus(merged, 'errors')).toBe(ok ? 0 : 2);
  });

  it.each<{ why: string; drifts: [Report['drift'], boolean][]; want: Report['drift'] }>([
    {
      why: 'none found',
      drifts: [
        [{ detected: false, corrected: false }, false],
        [{ detected: false, corrected: false }, false],
      ],
      want: { detected: false, corrected: false },
    },
    {
      why: 'one found, not corrected',
      drifts: [
        [{ detected: true, corrected: false }, true],
        [{ detected: false, corrected: false }, false],
      ],
      want: { detected: true, corrected: false },
    },
    {
      why: 'every one found corrected',
      drifts: [
        [{ detected: true, corrected: true }, true],
        [{ detected: false, corrected: false }, false],
      ],
      want: { detected: true, corrected: true },
    },
    {
      why: 'a file says none found (and corrected) but lists a change: found, not corrected',
      drifts: [
        [{ detected: false, corrected: true }, true],
        [{ detected: false, corrected: false }, false],
      ],
      want: { detected: true, corrected: false },
    },
    {
      why: 'a drift file without drift that lists a change: found',
      drifts: [[undefined, true]],
      want: { detected: true, corrected: false },
    },
  ])('drift: $why', ({ drifts, want }) => {
    // Each file's Kustomization creates a Namespace (changed) or leaves it unchanged.
    const files = drifts.map(([d, changed], i) =>
      named(`${i}.json`, {
        ...jobReport([
          kustomization(`flux-system/k${i}`, './k', [entry('Namespace/apps', changed ? 'created' : 'unchanged')]),
        ]),
        mode: 'drift',
        ...(d ? { drift: d } : {}),
      }),
    );
    const merged = mergeReports(files);
    expect(merged.drift).toEqual(want);
    expect(exitStatus(merged, 'drift')).toBe(want!.detected && !want!.corrected ? 1 : 0);
  });

  it('notes report files of different commits, and a job’s notes with its Kustomization’s name', () => {
    const noted = jobReport([kustomization('flux-system/apps', './apps', [], { notes: ['spec.suspend is true'] })], {
      cluster: 'production',
    });
    const merged = mergeReports([named('a.json', noted), named('b.json', infra('production'), 'a'.repeat(40))]);
    expect(merged.notes).toEqual([
      NO_MATRIX_NOTE,
      `The report files are of different commits: ${REVISION.slice(0, 12)} (a.json); aaaaaaaaaaaa (b.json)`,
      '[production · flux-system/apps] spec.suspend is true',
    ]);
  });

  it("a single job's report merged alone renders as that job's own", () => {
    const job = jobReport([infra().kustomizations![0]!, apps().kustomizations![0]!]);
    const merged = mergeReports(
      [named('only.json', job)],
      [
        { id: 'flux-system.infra-00000000', cluster: '', kustomization: 'flux-system/infra' },
        { id: 'flux-system.apps-00000000', cluster: '', kustomization: 'flux-system/apps' },
      ],
    );
    expect(renderComment(merged, { marker: MARKER }).body).toBe(renderComment(job, { marker: MARKER }).body);
    expect(renderCheckOutput(merged, {})).toEqual(renderCheckOutput(job, {}));
    expect(renderSummary({ ...merged, durationMs: 0 })).toBe(renderSummary({ ...job, durationMs: 0 }));
  });
});

describe('rendering a merged report with clusters', () => {
  const merged = mergeReports(allFiles());

  it('has a section per cluster in the comment: a Cluster column and groups that name it', () => {
    const { body } = renderComment(merged, { marker: MARKER });
    expect(body).toContain('### 🔄 kustomize-reconcile preview: 4 Kustomizations in 2 clusters');
    expect(body).toContain('| Cluster | Kustomization | Result | Create | Configure | Delete (prune) | Unchanged |');
    // What changes is listed; an unchanged Kustomization is folded into one line under the table, named with its cluster.
    expect(body).toContain('| `production` | `flux-system/apps` | 🔄 would change | 1 | 1 | 1 | 1 |');
    expect(body).not.toContain('| `flux-system/infra` | ✅ no changes |');
    expect(body).toContain(
      '<details><summary><b>✅ 1 Kustomization unchanged</b></summary>\n\n`production · flux-system/infra`',
    );
    expect(body).toContain(
      '| | `flux-system/legacy` (removed) | 🗑️ removed from Git; would delete its objects | – | – | 1 | – |',
    );
    expect(body).toContain('#### `staging` · `flux-system/apps`');
    expect(body).toContain('- `staging` · `flux-system/legacy` — would delete');
  });

  it('has the same sections in the check run and the job summary', () => {
    const check = renderCheckOutput(merged, {});
    expect(check.title).toBe('2 to create, 2 to configure, 2 to delete');
    expect(check.summary).toContain('| `staging` | `flux-system/infra` |');
    expect(check.text).toContain('#### `production` · `flux-system/apps`');
    expect(checkConclusion(merged)).toBe('neutral');
    const summary = renderSummary(merged);
    expect(summary).toContain('### 🔄 kustomize-reconcile: preview 4 Kustomizations in 2 clusters');
    expect(summary).toContain('| Cluster | Kustomization | Result |');
    expect(summary.indexOf('#### Cluster `production`')).toBeLessThan(summary.indexOf('#### Cluster `staging`'));
    const staging = summary.slice(summary.indexOf('#### Cluster `staging`'));
    expect(staging).toContain('| `flux-system/legacy` | 1 | Delete | deleted |');
    expect(staging).not.toContain('ConfigMap/apps/old-settings');
  });

  it('names the clusters in the closing line', () => {
    expect(closingLines(merged).at(-1)).toMatch(
      /^Preview of 4 Kustomizations in 2 clusters: 2 created, 2 configured, 2 deleted, 4 unchanged in 3\.0s$/,
    );
  });
});

describe('parseReportFile', () => {
  const good = fileText(infra());
  it.each<{ why: string; text: string; error: RegExp }>([
    {
      why: 'not JSON',
      text: '{"kind":',
      error: /^reports\/x\.json: not a kustomize-reconcile report file \(not JSON: /,
    },
    {
      why: 'another kind',
      text: '{"kind":"other"}',
      error: /^reports\/x\.json: not a kustomize-reconcile report file \(kind is not "kustomize-reconcile\/report"\)/,
    },
    { why: 'null', text: 'null', error: /kind is not/ },
    {
      why: 'another version',
      text: good.replace('"version": 1', '"version": 2'),
      error: /version 2 is not 1: written by another version of kustomize-reconcile/,
    },
    {
      why: 'no report',
      text: '{"kind":"kustomize-reconcile/report","version":1}',
      error: /the report in it is incomplete/,
    },
    {
      why: 'no counts',
      text: JSON.stringify({ ...JSON.parse(good), report: { ...infra(), counts: undefined } }),
      error: /^reports\/x\.json: not a report file this version writes: report\.counts: expected an object$/,
    },
  ])('$why', ({ text, error }) => {
    expect(() => parseReportFile(text, 'reports/x.json')).toThrow(error);
  });

  it('reads back what a job wrote', () => {
    const file = parseReportFile(good, 'x.json');
    expect(file).toMatchObject({
      kind: 'kustomize-reconcile/report',
      version: 1,
      revision: REVISION,
      job: 'reconcile',
    });
    expect(file.report.kustomizations?.[0]?.kustomization).toBe('flux-system/infra');
  });
});

describe('readReportFiles', () => {
  async function tree(files: Record<string, string>): Promise<string> {
    const root = await mkdtemp(join(tmpdir(), 'kr-merge-'));
    for (const [name, text] of Object.entries(files)) {
      await mkdir(join(root, name, '..'), { recursive: true });
      await writeFile(join(root, name), text);
    }
    return root;
  }

  it('reads the files the globs match, each once, sorted by name; a folder stands for its .json files', async () => {
    const root = await tree({
      'reports/b.json': fileText(apps()),
      'reports/a.json': fileText(infra()),
      'artifacts/report-monitoring/c.json': fileText(kustomization('flux-system/monitoring', './m', [])),
      'reports/readme.txt': 'not a report',
    });
    const files = await readReportFiles(['reports/*.json', 'reports/a.json', 'artifacts'], root);
    expect(files.map((f) => f.name)).toEqual([
      'artifacts/report-monitoring/c.json',
      'reports/a.json',
      'reports/b.json',
    ]);
    const absolute = await readReportFiles([join(root, 'reports', '*.json')], join(root, 'artifacts'));
    expect(absolute.map((f) => f.name)).toEqual([join(root, 'reports/a.json'), join(root, 'reports/b.json')]);
  });

  it.each<{ why: string; files: Record<string, string>; patterns: string[]; error: RegExp }>([
    {
      why: 'no file matches: says how to download them',
      files: { 'other/a.json': '{}' },
      patterns: ['reports/*.json', 'more/*.json'],
      error:
        /^no report file matches "reports\/\*\.json", "more\/\*\.json" under .*: .*actions\/download-artifact .*merge-multiple: true/,
    },
    {
      why: 'files that are not report files: each named',
      files: { 'reports/a.json': 'nope', 'reports/b.json': '{"kind":"x"}', 'reports/c.json': fileText(infra()) },
      patterns: ['reports/*.json'],
      error:
        /^2 report files cannot be merged:\nreports\/a\.json: not a kustomize-reconcile report file \(not JSON: .*\nreports\/b\.json: not a kustomize-reconcile report file/,
    },
  ])('$why', async ({ files, patterns, error }) => {
    await expect(readReportFiles(patterns, await tree(files))).rejects.toThrow(error);
  });
});

describe('the merged wall time', () => {
  const at = (name: string, durationMs: number, finishedAt?: string): NamedReportFile => {
    const { file } = named(name, { ...jobReport([kustomization(`ns/${name}`, '.', [])]), durationMs });
    const { finishedAt: _written, ...rest } = file;
    return { name, file: finishedAt === undefined ? rest : { ...rest, finishedAt } };
  };
  it.each<[string, NamedReportFile[], number]>([
    [
      'jobs one after the other: from the first start to the last end',
      [at('a', 2_000, '2026-12-04T10:00:02.000Z'), at('b', 3_000, '2026-12-04T10:00:06.000Z')],
      6_000,
    ],
    [
      'jobs side by side: the longest',
      [at('a', 4_000, '2026-12-04T10:00:04.000Z'), at('b', 3_000, '2026-12-04T10:00:03.500Z')],
      4_000,
    ],
    [
      'a file that does not say when it ended: the longest job',
      [at('a', 2_000), at('b', 3_000, '2026-12-04T10:00:06.000Z')],
      3_000,
    ],
  ])('%s', (_, files, ms) => {
    expect(mergeReports(files).durationMs).toBe(ms);
  });
});
