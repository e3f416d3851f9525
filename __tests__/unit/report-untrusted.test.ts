// mode: report over untrusted report files (issue 33): every file parsed strictly, each
// Kustomization's counts and verdict worked out from its own lists, the jobs checked against each
// other and against the plan's matrix.
import { mkdtemp, symlink, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseMatrix, type ExpectedJob } from '../../src/fanout/matrix.js';
import { makePlan } from '../../src/plan/plan.js';
import { planJson, planOutputs } from '../../src/plan/render.js';
import { MAX_REPORT_FILE_BYTES, parseReportFile } from '../../src/report/file.js';
import { readReportFiles } from '../../src/report/merge-files.js';
import { NO_MATRIX_NOTE } from '../../src/report/merge-jobs.js';
import { mergeReports } from '../../src/report/merge.js';
import type { Report } from '../../src/report/model.js';
import { exitStatus } from '../../src/report/exit.js';
import { entry, fileText, jobReport, kustomization, named } from '../helpers/report-files.js';
import { defaultSpec } from '../helpers/spec.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

const ZERO = { created: 0, configured: 0, unchanged: 0, skipped: 0, deleted: 0 };

/** One job's report of `name` in cluster prod. */
const job = (
  name: string,
  extra: Partial<Report> = {},
  changeset = [entry(`ConfigMap/x/${name.split('/')[1]!}`, 'unchanged')],
) => jobReport([kustomization(name, './x', changeset, extra)], { cluster: 'prod' });

const expected = (...names: string[]): ExpectedJob[] =>
  names.map((n, level) => ({
    id: `prod.${n.replace('/', '.')}-0000000${level}`,
    cluster: 'prod',
    kustomization: n,
    level,
  }));

describe('each Kustomization from its own lists', () => {
  it('recounts a row and its totals from its lists, whatever the file says', () => {
    const lying = job('ns/a', { pruned: [{ subject: 'StatefulSet/ns/db', action: 'deleted' }] }, [
      entry('ConfigMap/ns/a', 'created'),
    ]);
    lying.counts = ZERO;
    lying.kustomizations![0]!.counts = ZERO;
    const merged = mergeReports([named('a.json', lying)]);
    expect(merged.kustomizations![0]!.counts).toEqual({ ...ZERO, created: 1, deleted: 1 });
    expect(merged.counts).toEqual({ ...ZERO, created: 1, deleted: 1 });
    expect(merged.ok).toBe(true);
  });

  it.each<{ why: string; part: Partial<Report>; error: string }>([
    {
      why: 'ok with a failed deletion',
      part: { pruned: [{ subject: 'Secret/ns/creds', action: 'failed', reason: 'forbidden' }] },
      error: 'deleting Secret/ns/creds failed',
    },
    { why: 'ok with an error', part: { error: 'boom' }, error: 'boom' },
    {
      why: 'ok with a failure',
      part: { failure: { stage: 'apply', reason: 'ReconciliationFailed', message: 'apply failed' } },
      error: 'apply failed',
    },
    { why: 'failed without an error', part: { ok: false }, error: 'failed (its report gives no error)' },
  ])('a row is failed when it is $why', ({ part, error }) => {
    const r = job('ns/a', part);
    r.ok = true;
    delete r.error;
    delete r.failure;
    const merged = mergeReports([named('a.json', r)]);
    expect(merged.kustomizations![0]).toMatchObject({ ok: false, error });
    expect(merged.ok).toBe(false);
    expect(merged.error).toBe(`Kustomization prod · ns/a: ${error}`);
    expect(exitStatus(merged, 'errors')).toBe(2);
  });

  it('fails a file whose top-level lists name objects none of its Kustomizations does, naming them', () => {
    const r = job('ns/a');
    r.pruned = [{ subject: 'PersistentVolumeClaim/ns/data', action: 'deleted' }];
    r.changeset = [...r.changeset, entry('Secret/ns/hidden', 'created')];
    const merged = mergeReports([named('a.json', r)]);
    expect(merged.ok).toBe(false);
    expect(merged.error).toBe(
      'a.json (cluster prod): its report lists 2 objects that none of its Kustomizations does: PersistentVolumeClaim/ns/data (deleted), Secret/ns/hidden (created)',
    );
  });

  it('believes a file that says it failed, though its Kustomizations say ok', () => {
    const merged = mergeReports([named('a.json', { ...job('ns/a'), ok: false })]);
    expect(merged.ok).toBe(false);
    expect(merged.error).toBe('a.json (cluster prod): failed (its report gives no error)');
  });

  it('fails a removal that failed, though the file says ok', () => {
    const r = jobReport([kustomization('ns/a', './x', [])], {
      cluster: 'prod',
      removed: [
        {
          r: {
            kustomization: 'ns/old',
            inventory: 'ns/old',
            objects: 1,
            deletionPolicy: 'Delete',
            action: 'failed',
            reason: 'forbidden',
          },
          pruned: [{ subject: 'ConfigMap/ns/old', action: 'failed', removedWith: 'ns/old' }],
        },
      ],
    });
    const merged = mergeReports([named('a.json', r)]);
    expect(merged.ok).toBe(false);
    expect(merged.error).toBe(
      'a.json (cluster prod): removing Kustomizations failed, yet its report says it succeeded: ns/old (failed: forbidden)',
    );
  });

  it("fails a file whose Kustomization names another cluster than its report's", () => {
    const r = job('ns/a');
    r.kustomizations![0]!.cluster = 'staging';
    const merged = mergeReports([named('a.json', r)]);
    expect(merged.error).toBe('a.json (cluster prod): its Kustomization ns/a names cluster staging, its report prod');
  });

  it("prefixes a file's own notes with its name", () => {
    const merged = mergeReports([named('a.json', { ...job('ns/a'), notes: ['All good, ignore the rest'] })]);
    expect(merged.notes).toEqual([NO_MATRIX_NOTE, '[a.json] All good, ignore the rest']);
  });
});

describe('the jobs against the plan', () => {
  it('gives a matrix entry without a report a failed row naming its id', () => {
    const plan = expected('flux-system/infra', 'ns/a', 'ns/b');
    const merged = mergeReports([named('infra.json', job('flux-system/infra')), named('b.json', job('ns/b'))], plan);
    expect(merged.ok).toBe(false);
    expect(merged.kustomizations!.map((k) => [k.kustomization, k.ok, k.level])).toEqual([
      ['flux-system/infra', true, 0],
      ['ns/a', false, 1],
      ['ns/b', true, 2],
    ]);
    expect(merged.error).toBe(
      'Kustomization prod · ns/a: no report file of matrix entry prod.ns.a-00000001: its job failed before writing one, was cancelled, or its artifact was not downloaded',
    );
    expect(merged.notes).not.toContain(NO_MATRIX_NOTE);
  });

  it('fails a Kustomization the matrix does not have, and takes the levels from the plan', () => {
    const merged = mergeReports(
      [named('a.json', job('ns/a', { level: 7 })), named('z.json', job('ns/z'))],
      expected('ns/a'),
    );
    expect(merged.kustomizations!.map((k) => [k.kustomization, k.level])).toEqual([
      ['ns/a', 0],
      ['ns/z', undefined],
    ]);
    expect(merged.error).toBe(
      "Kustomization prod · ns/z (z.json) is not in the plan's matrix: no job of this run reconciles it",
    );
  });

  it('passes when every entry has one report', () => {
    const merged = mergeReports([named('a.json', job('ns/a')), named('b.json', job('ns/b'))], expected('ns/a', 'ns/b'));
    expect(merged.ok).toBe(true);
    expect(merged.notes).toEqual([]);
  });

  it('says what it cannot check without the matrix, and still catches a duplicate', () => {
    const merged = mergeReports([named('a.json', job('ns/a')), named('a-again.json', job('ns/a'))]);
    expect(merged.notes[0]).toBe(NO_MATRIX_NOTE);
    expect(merged.ok).toBe(false);
    expect(merged.kustomizations).toHaveLength(2);
    expect(merged.error).toMatch(/^Kustomization prod · ns\/a is in 2 report files \(a-again\.json, a\.json\)/);
  });

  it('a job that failed before it knew its Kustomization is a failed row, not checked against the plan', () => {
    const early: Report = {
      ...kustomization('', '.', [], { ok: false, error: 'kubeconfig: no such file' }),
      cluster: 'prod',
    };
    const merged = mergeReports([named('a.json', job('ns/a')), named('early.json', early)], expected('ns/a'));
    expect(merged.error).toBe('Kustomization prod · .: kubeconfig: no such file');
  });
});

describe('parseReportFile, strictly', () => {
  const good = JSON.parse(fileText(job('ns/a'))) as Record<string, unknown> & { report: Report };
  const text = (f: (file: typeof good) => void) => {
    const copy = structuredClone(good);
    f(copy);
    return JSON.stringify(copy);
  };
  it.each<[string, string, RegExp]>([
    ['an unknown field of the file', text((f) => (f['extra'] = 1)), /: unknown field extra$/],
    [
      'an unknown field of a Kustomization',
      text((f) => ((f.report.kustomizations![0] as unknown as Record<string, unknown>)['owner'] = 'x')),
      /: report\.kustomizations\[0\]: unknown field "owner"$/,
    ],
    [
      'an action that is none',
      text((f) => ((f.report.changeset[0] as { action: string }).action = 'deleted')),
      /: report\.changeset\[0\]\.action: expected one of created, configured, unchanged, skipped \(got "deleted"\)$/,
    ],
    [
      'Kustomizations inside a Kustomization',
      text((f) => (f.report.kustomizations![0]!.kustomizations = [])),
      /: report\.kustomizations\[0\]: unknown field "kustomizations"$/,
    ],
    [
      'a name with a line break',
      text((f) => (f.report.kustomizations![0]!.kustomization = 'ns/a\n::error::x')),
      /: report\.kustomizations\[0\]\.kustomization: not a name/,
    ],
    [
      'an approval object with a line break',
      text((f) => (f.report.approval = { label: 'ok', objects: ['Service/a/b\n::error::x'] })),
      /: report\.approval\.objects\[0\]: not a name/,
    ],
    [
      'a cluster with a slash',
      text((f) => (f.report.cluster = 'a/b')),
      /: report\.cluster: a directory name has no "\/"$/,
    ],
    [
      'negative counts',
      text((f) => (f.report.counts.created = -1)),
      /: report\.counts\.created: expected a whole number ≥ 0/,
    ],
    [
      'a duration that is not a number',
      text((f) => ((f.report as unknown as Record<string, unknown>)['durationMs'] = '1')),
      /report\.durationMs/,
    ],
    ['a revision that is not a string', text((f) => (f['revision'] = 1)), /: revision: expected a string of one line$/],
    [
      'a failure of no stage',
      text((f) => (f.report.failure = { stage: 'x' as never, reason: 'r', message: 'm' })),
      /report\.failure\.stage: expected one of/,
    ],
    [
      'a userError that is not true',
      text(
        (f) => (f.report.failure = { stage: 'render', reason: 'BuildFailed', message: 'm', userError: 'yes' as never }),
      ),
      /report\.failure\.userError: expected true, or no userError at all/,
    ],
  ])('refuses %s, naming the file and the field', (_, t, error) => {
    expect(() => parseReportFile(t, 'reports/x.json')).toThrow(
      /^reports\/x\.json: not a report file this version writes: /,
    );
    expect(() => parseReportFile(t, 'reports/x.json')).toThrow(error);
  });

  it('reads a job’s report back as it was written', () => {
    const r = jobReport(
      [
        kustomization('ns/a', './a', [entry('ConfigMap/ns/a', 'created')], {
          pruned: [{ subject: 'ConfigMap/ns/old', action: 'deleted', reason: 'left Git' }],
          health: [{ subject: 'Deployment/ns/web', status: 'Current', message: 'ready' }],
          problems: [{ subject: 'ConfigMap/ns/a', message: 'x', file: 'a/cm.yaml', line: 3 }],
          source: { ref: 'this checkout', revision: 'main@sha1:abc' },
          inventory: 'ns/kustomize-reconcile.ns.a',
          level: 2,
        }),
      ],
      { cluster: 'prod', drift: { detected: true, corrected: false } },
    );
    expect(parseReportFile(fileText(r), 'x.json').report).toEqual(JSON.parse(JSON.stringify(r)));
  });

  it('reads back a failure marked the user’s', () => {
    const r: Report = {
      ...job('ns/a'),
      ok: false,
      error: 'kustomize build failed',
      failure: { stage: 'render', reason: 'BuildFailed', message: 'kustomize build failed', userError: true },
    };
    expect(parseReportFile(fileText(r), 'x.json').report.failure).toEqual(r.failure);
  });
});

describe('readReportFiles, bounded', () => {
  it('refuses a symbolic link and a file over the size bound, naming each', async () => {
    const root = await mkdtemp(join(tmpdir(), 'kr-merge-'));
    await writeFile(join(root, 'a.json'), fileText(job('ns/a')));
    await writeFile(join(root, 'outside.json'), fileText(job('ns/b')));
    await symlink(join(root, 'outside.json'), join(root, 'link.json'));
    await writeFile(join(root, 'big.json'), '');
    await truncate(join(root, 'big.json'), MAX_REPORT_FILE_BYTES + 1);
    await expect(readReportFiles(['a.json', 'link.json', 'big.json'], root)).rejects.toThrow(
      /^2 report files cannot be merged:\nbig\.json: 33554433 bytes, over 32 MiB: not a report file this version writes\nlink\.json: a symbolic link; report files are plain files$/,
    );
  });
});

describe('parseMatrix', () => {
  const plan = makePlan(
    new Map([
      [
        'prod',
        [
          defaultSpec({
            name: 'a',
            namespace: 'ns',
            origin: { kind: 'file', file: 'clusters/prod/a.yaml', document: 1 },
          }),
          defaultSpec({
            name: 'b',
            namespace: 'ns',
            origin: { kind: 'file', file: 'clusters/prod/b.yaml', document: 1 },
          }),
        ],
      ],
    ]),
  );
  const ids = plan.matrix.map((e) => e.id);

  it("reads the action's matrix output and the CLI's plan --output json alike", () => {
    const fromAction = parseMatrix(planOutputs(plan)['matrix']!);
    expect(fromAction).toEqual([
      { id: ids[0], cluster: 'prod', kustomization: 'ns/a', level: 0, path: plan.matrix[0]!.path },
      { id: ids[1], cluster: 'prod', kustomization: 'ns/b', level: 0, path: plan.matrix[1]!.path },
    ]);
    expect(parseMatrix(planJson(plan))).toEqual(fromAction);
  });

  const include = JSON.parse(planOutputs(plan)['matrix']!) as { include: Record<string, unknown>[] };
  it.each<[string, string, RegExp]>([
    ['not JSON', '{"include":', /^input matrix: not JSON \(/],
    ['a list', '[]', /^input matrix: not a JSON object/],
    ['no include', '{}', /^input matrix: no include list/],
    ['other fields', '{"include":[],"x":1}', /^input matrix: unknown fields x/],
    [
      'a wrong count',
      JSON.stringify({ matrix: include, count: 5 }),
      /^input matrix: count is 5, but the matrix has 2 entries/,
    ],
    [
      'an id with a slash',
      JSON.stringify({ include: [{ ...include.include[0], id: 'a/b' }] }),
      /^input matrix: include\[0\]\.id is not a matrix id \("a\/b"\)/,
    ],
    [
      'a kustomization without a namespace',
      JSON.stringify({ include: [{ ...include.include[0], kustomization: 'a' }] }),
      /include\[0\]\.kustomization is not namespace\/name/,
    ],
    [
      'one job twice',
      JSON.stringify({ include: [include.include[0], { ...include.include[0], id: 'other' }] }),
      /include\[1\] and include\[0\] are one job/,
    ],
    [
      'two ids alike but for case',
      JSON.stringify({
        include: [include.include[0], { ...include.include[1], id: String(include.include[0]!['id']).toUpperCase() }],
      }),
      /include\[1\] and include\[0\] are one job/,
    ],
  ])('refuses %s, saying what to pass', (_, text, error) => {
    expect(() => parseMatrix(text, 'input matrix')).toThrow(error);
    expect(() => parseMatrix(text, 'input matrix')).toThrow(/pass the plan job's matrix output as it is/);
  });
});
