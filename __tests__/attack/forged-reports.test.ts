// Forged and missing fan-out reports (issue 33, items 4 and 5): mode: plan and mode: report of the
// bundled action, as the README's fan-out workflow runs them. The report files are untrusted (a
// fork's run may have written them): a job that wrote none, two files for one Kustomization, or a
// file whose totals and verdict contradict its own object lists must not make the merged report
// pass or hide a deletion. Each case writes reports/attack/<case>.json for
// scripts/attack-summary.mjs; a case fails when its attack got through. No cluster is needed.
//
// The rule the cases expect: matrix ids are unique per (cluster, namespace, name); mode: report
// checks the files against the plan's matrix (input matrix): every entry exactly once; counts and
// verdicts are recomputed from each Kustomization's object lists, and a failure in any file wins.
import { rm } from 'node:fs/promises';
import { describe, it } from 'vitest';
import type { Report } from '../../src/report/model.js';
import { runAction, type ActionResult } from '../helpers/action.js';
import { writeTree } from '../helpers/cluster.js';
import { attackCase } from '../helpers/hostile.js';
import { kustomizationYaml } from '../helpers/manifests.js';
import { entry, fileText, jobReport, kustomization } from '../helpers/report-files.js';

const output = (r: ActionResult) => `${r.stdout}\n${r.stderr}`;
const tail = (r: ActionResult) => `exit ${r.code}: ${output(r).split('\n').slice(-15).join('\n')}`;

interface MatrixEntry {
  id: string;
  cluster: string;
  kustomization: string;
}

/** mode: plan on `files`: the matrix output as the plan job hands it on, and its entries. */
async function plan(files: Record<string, string>): Promise<{ r: ActionResult; text: string; entries: MatrixEntry[] }> {
  const root = await writeTree(files);
  try {
    const r = await runAction(root, { mode: 'plan', kustomizations: 'clusters/*/*.yaml' });
    if (r.code !== 0) throw new Error(`mode: plan failed:\n${output(r)}`);
    const text = r.outputs['matrix'] ?? '';
    return { r, text, entries: (JSON.parse(text) as { include: MatrixEntry[] }).include };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/** mode: report over `reports` (file name → report), with the plan's matrix when given. */
async function report(reports: Record<string, Report>, matrix?: string): Promise<ActionResult> {
  const root = await writeTree(
    Object.fromEntries(Object.entries(reports).map(([name, r]) => [`reports/${name}`, fileText(r)])),
  );
  try {
    return await runAction(root, {
      mode: 'report',
      reports: 'reports/*.json',
      kustomizations: 'clusters/*/*.yaml',
      ...(matrix !== undefined ? { matrix } : {}),
    });
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

const merged = (r: ActionResult): Report | undefined =>
  r.outputs['report'] ? (JSON.parse(r.outputs['report']) as Report) : undefined;

/** Three Kustomizations of cluster prod: infra, payments (after infra) and web. */
const prodTree = (): Record<string, string> => ({
  'clusters/prod/infra.yaml': kustomizationYaml({ name: 'infra', path: './infra' }),
  'clusters/prod/payments.yaml': kustomizationYaml({
    name: 'payments',
    namespace: 'payments',
    path: './payments',
    spec: 'dependsOn: [{name: infra, namespace: flux-system}]',
  }),
  'clusters/prod/web.yaml': kustomizationYaml({ name: 'web', path: './web' }),
});

/** One job's report of `name` in cluster prod (a fan-out job's: combine() over its one Kustomization). */
const job = (name: string, extra: Partial<Report> = {}, changeset = [entry(`ConfigMap/x/${name}`, 'unchanged')]) =>
  jobReport([kustomization(name, `./${name.split('/')[1]!}`, changeset, extra)], { cluster: 'prod' });

const PAYMENTS_DB = 'StatefulSet/payments/payments-db';

/** One case; `log(run)` keeps the end of a run's output in the result file. */
function attempt(
  id: string,
  title: string,
  body: (evidence: string[], log: (r: ActionResult) => void) => Promise<void>,
): Promise<void> {
  return attackCase({ id, title }, async (evidence, result) => {
    const logs: string[] = [];
    result['log'] = logs;
    await body(evidence, (r) => logs.push(tail(r)));
  });
}

describe.concurrent('forged fan-out reports (bundled action, mode: plan and mode: report)', () => {
  it('33-4a two matrix entries with one id', async () => {
    await attempt(
      '33-4a-colliding-matrix-ids',
      'clusters/a/ks.yaml (b/c.d) and clusters/a.b/ks.yaml (c/d) are planned: two jobs, one id, one report file and artifact',
      async (evidence, log) => {
        const { r, entries } = await plan({
          'clusters/a/ks.yaml': kustomizationYaml({ name: 'c.d', namespace: 'b', path: './x' }),
          'clusters/a.b/ks.yaml': kustomizationYaml({ name: 'd', namespace: 'c', path: './x' }),
        });
        log(r);
        if (entries.length !== 2) throw new Error(`expected 2 entries, got ${JSON.stringify(entries)}`);
        const ids = entries.map((e) => e.id);
        if (new Set(ids.map((i) => i.toLowerCase())).size !== ids.length)
          evidence.push(`the entries share an id: ${ids.join(', ')}`);
        const unsafe = ids.filter((i) => /[":<>|*?\r\n\\/]/.test(i) || i.startsWith('.'));
        if (unsafe.length > 0) evidence.push(`ids not valid in artifact or file names: ${unsafe.join(', ')}`);
      },
    );
  });

  it('33-5a two report files for one Kustomization: the failed one with a pending prune is hidden', async () => {
    await attempt(
      '33-5a-duplicate-hides-failure',
      "payments' failed report (pending prune of payments-db) and a later ok:true report for it are merged",
      async (evidence, log) => {
        const { text } = await plan(prodTree());
        const r = await report(
          {
            'a-infra.json': job('flux-system/infra'),
            'a-web.json': job('flux-system/web'),
            'b-payments.json': job('payments/payments', {
              ok: false,
              error: 'health check failed: Deployment/payments/api not ready',
              pruned: [{ subject: PAYMENTS_DB, action: 'deleted' }],
            }),
            'c-payments.json': job('payments/payments'),
          },
          text,
        );
        log(r);
        if (r.code === 0) evidence.push('mode: report exited 0');
        const m = merged(r);
        if (m?.ok !== false) evidence.push('the merged report is not failed');
        if ((m?.counts.deleted ?? 0) < 1)
          evidence.push(`the merged report deletes ${m?.counts.deleted ?? '?'} objects`);
        if (r.outputs['deleted'] !== '1') evidence.push(`the output deleted is ${r.outputs['deleted'] ?? 'unset'}`);
        if (!r.summary.includes('payments-db')) evidence.push("the job summary does not show payments-db's deletion");
        if (!/b-payments\.json/.test(m?.error ?? '') || !/c-payments\.json/.test(m?.error ?? ''))
          evidence.push(`the error does not name both files: ${m?.error ?? 'no error'}`);
      },
    );
  });

  it('33-5b a job that wrote no report file', async () => {
    await attempt(
      '33-5b-missing-job',
      'the plan has 3 entries; the payments job died before writing its report: 2 files are merged',
      async (evidence, log) => {
        const { text, entries } = await plan(prodTree());
        if (entries.length !== 3) throw new Error(`expected 3 entries, got ${entries.length}`);
        const missing = entries.find((e) => e.kustomization === 'payments/payments')!;
        const r = await report(
          { 'a-infra.json': job('flux-system/infra'), 'a-web.json': job('flux-system/web') },
          text,
        );
        log(r);
        if (r.code === 0) evidence.push('mode: report exited 0');
        const m = merged(r);
        if (m?.ok !== false) evidence.push('the merged report is not failed');
        const said = `${m?.error ?? ''}\n${output(r)}`;
        if (!said.includes(missing.id) || !said.includes('payments/payments'))
          evidence.push(`the failure does not name the missing entry ${missing.id}: ${m?.error ?? 'no error'}`);
        if (!(m?.kustomizations ?? []).some((k) => k.kustomization === 'payments/payments' && !k.ok))
          evidence.push('the merged report has no failed row for payments/payments');
      },
    );
  });

  it('33-5c a duplicate report file', async () => {
    await attempt(
      '33-5c-duplicate-file',
      'the same ok report of web is there twice under two names (no matrix given)',
      async (evidence, log) => {
        const r = await report({ 'web.json': job('flux-system/web'), 'web-again.json': job('flux-system/web') });
        log(r);
        if (r.code === 0) evidence.push('mode: report exited 0');
        const m = merged(r);
        if (m?.ok !== false) evidence.push('the merged report is not failed');
        if (!/web-again\.json/.test(m?.error ?? '')) evidence.push(`the error does not name the files: ${m?.error}`);
        if ((m?.kustomizations ?? []).length !== 2) evidence.push('the two files are not both shown');
      },
    );
  });

  it('33-5d a report file whose totals and verdict contradict its object lists', async () => {
    await attempt(
      '33-5d-lying-totals',
      'one file says ok with zero counts while its Kustomization creates an object, deletes payments-db, fails a deletion, and its top-level list deletes a PVC no Kustomization lists',
      async (evidence, log) => {
        const { text } = await plan(prodTree());
        const zero = { created: 0, configured: 0, unchanged: 0, skipped: 0, deleted: 0 };
        const lying = job(
          'payments/payments',
          {
            pruned: [
              { subject: PAYMENTS_DB, action: 'deleted' },
              { subject: 'Secret/payments/db-credentials', action: 'failed', reason: 'forbidden' },
            ],
          },
          [entry('ConfigMap/payments/settings', 'created')],
        );
        lying.kustomizations![0]!.counts = zero;
        lying.counts = zero;
        lying.pruned = [
          ...(lying.pruned ?? []),
          { subject: 'PersistentVolumeClaim/payments/data-payments-db-0', action: 'deleted' },
        ];
        const r = await report(
          { 'a-infra.json': job('flux-system/infra'), 'a-web.json': job('flux-system/web'), 'b-payments.json': lying },
          text,
        );
        log(r);
        if (r.code === 0) evidence.push('mode: report exited 0 (a deletion failed)');
        const m = merged(r);
        const row = m?.kustomizations?.find((k) => k.kustomization === 'payments/payments');
        if (row?.ok !== false) evidence.push("payments' row is not failed");
        if (row?.counts.created !== 1 || row.counts.deleted !== 1)
          evidence.push(`payments' row counts are the file's: ${JSON.stringify(row?.counts)}`);
        if (r.outputs['created'] !== '1') evidence.push(`the output created is ${r.outputs['created'] ?? 'unset'}`);
        if (!(m?.error ?? '').includes('data-payments-db-0'))
          evidence.push(`the PVC the top-level list deletes is not shown: ${m?.error ?? 'no error'}`);
      },
    );
  });
});
