// mode: report end to end: the action bundled from src/ (or KR_DIST_DIR's) under Node 24, in a
// runner-like environment, merging the report files of a fan-out's jobs over two clusters into one
// sticky PR comment and one check run on the local emulation of GitHub's REST API. No Kubernetes
// cluster is needed: the jobs' reports are files.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entryId } from '../../src/fanout/matrix.js';
import { commentMarker } from '../../src/report/comment.js';
import type { Report } from '../../src/report/model.js';
import { runAction, type ActionResult } from '../helpers/action.js';
import { writeTree } from '../helpers/cluster.js';
import { prEvent, repoEnv, startFakeGitHub, type FakeGitHub } from '../helpers/github-server.js';
import { golden } from '../helpers/golden.js';
import { NODE, REPO } from '../helpers/paths.js';
import { fileText, jobReport, kustomization, twoClusters } from '../helpers/report-files.js';

const exec = promisify(execFile);

const KUSTOMIZATIONS = 'clusters/*/flux-system/*.yaml';

/** The plan's matrix output for twoClusters(): each cluster's infra (level 0) and apps (level 1). */
const MATRIX = JSON.stringify({
  include: ['production', 'staging'].flatMap((cluster) =>
    ['infra', 'apps'].map((name, level) => ({
      id: entryId(cluster, 'flux-system', name),
      cluster,
      kustomization: `flux-system/${name}`,
      level,
    })),
  ),
});

/** The jobs' report files as actions/download-artifact with merge-multiple: true leaves them. */
function reportTree(reports: Record<string, Report>): Record<string, string> {
  return Object.fromEntries(Object.entries(reports).map(([name, r]) => [`reports/${name}`, fileText(r)]));
}

describe('mode: report (fake GitHub REST API)', () => {
  let fake: FakeGitHub;
  let script: string;
  let bundleDir: string | undefined;
  beforeAll(async () => {
    fake = await startFakeGitHub({
      tokens: { 'tok-rw': { pull_requests: 'write', checks: 'write', contents: 'read' } },
    });
    if (process.env['KR_DIST_DIR']) {
      script = 'dist/index.js';
    } else {
      // dist/ is bundled at release time: run what src/ is now.
      bundleDir = await mkdtemp(join(tmpdir(), 'kr-bundle-'));
      await exec(NODE, [join(REPO, 'scripts/bundle.mjs'), bundleDir], { cwd: REPO });
      script = join(bundleDir, 'index.js');
    }
  }, 120_000);
  afterAll(async () => {
    await fake.close();
    if (bundleDir) await rm(bundleDir, { recursive: true, force: true });
  });

  const report = (workspace: string, inputs: Record<string, string> = {}): Promise<ActionResult> =>
    runAction(
      workspace,
      {
        mode: 'report',
        reports: 'reports/*.json',
        kustomizations: KUSTOMIZATIONS,
        'github-token': 'tok-rw',
        matrix: MATRIX,
        ...inputs,
      },
      { script, env: repoEnv(fake), event: prEvent() },
    );

  const ours = () => fake.comments.filter((c) => c.body.split('\n', 1)[0] === commentMarker(KUSTOMIZATIONS));

  it('merges two clusters into one sticky comment and one check run; a second run updates the comment', async () => {
    const workspace = await writeTree(reportTree(twoClusters()));
    const checksBefore = fake.checkRuns.length;
    const first = await report(workspace);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(
      'Merging 4 report files: reports/production.flux-system.apps.json, reports/production.flux-system.infra.json, reports/staging.flux-system.apps.json, reports/staging.flux-system.infra.json',
    );
    expect(first.stdout).toMatch(/^Preview of 4 Kustomizations in 2 clusters: 2 created, 2 configured, 2 deleted/m);
    expect(ours()).toHaveLength(1);
    const comment = ours()[0]!;
    golden('merged-comment.md', comment.body);
    expect(first.outputs).toMatchObject({
      'comment-url': comment.html_url,
      jobs: '4',
      created: '2',
      configured: '2',
      deleted: '2',
      unchanged: '4',
      changed: 'true',
      revision: '3f2c1a9e8b7d6c5f4e3d2c1b0a9f8e7d6c5b4a39',
    });
    const merged = JSON.parse(first.outputs['report']!) as Report;
    expect(merged.kustomizations?.map((k) => `${k.cluster}/${k.kustomization}`)).toEqual([
      'production/flux-system/infra',
      'production/flux-system/apps',
      'staging/flux-system/infra',
      'staging/flux-system/apps',
    ]);
    expect(first.summary).toContain('#### Cluster `staging`');
    const checks = fake.checkRuns.slice(checksBefore);
    expect(checks).toHaveLength(1);
    expect(checks[0]).toMatchObject({
      name: `kustomize-reconcile preview: ${KUSTOMIZATIONS}`,
      head_sha: 'head000000000000000000000000000000000bb',
      status: 'completed',
      conclusion: 'neutral',
      html_url: first.outputs['check-run-url'],
    });
    expect(checks[0]!.output.title).toBe('2 to create, 2 to configure, 2 to delete');

    // A second report of one job, failed, comes next to its first: both are shown and the merge fails.
    const failed = jobReport(
      [kustomization('flux-system/apps', './apps/staging', [], { ok: false, error: 'kustomize build failed: boom' })],
      { cluster: 'staging' },
    );
    await writeFile(join(workspace, 'reports/staging.flux-system.apps.rerun.json'), fileText(failed));
    const second = await report(workspace);
    expect(second.code).toBe(2);
    expect(second.stdout).toMatch(
      /^::error::Kustomization staging · flux-system\/apps \(reports\/staging\.flux-system\.apps\.rerun\.json\): kustomize build failed: boom%0AKustomization staging · flux-system\/apps is in 2 report files \(reports\/staging\.flux-system\.apps\.json, reports\/staging\.flux-system\.apps\.rerun\.json\)/m,
    );
    expect(ours()).toHaveLength(1);
    expect(ours()[0]!.id).toBe(comment.id);
    expect(ours()[0]!.body).toContain('| | `flux-system/apps` | 🔄 would change | 0 | 1 | 0 | 1 |');
    expect(ours()[0]!.body).toContain('| | `flux-system/apps` | ❌ kustomize build failed: boom |');
    expect(ours()[0]!.body).toContain(
      'one of 2 reports of this Kustomization: reports/staging.flux-system.apps.rerun.json',
    );
    expect(second.outputs['comment-url']).toBe(comment.html_url);
    expect(second.outputs['jobs']).toBe('5');
    const rechecks = fake.checkRuns.slice(checksBefore);
    expect(rechecks).toHaveLength(2);
    expect(rechecks[1]).toMatchObject({ conclusion: 'failure', html_url: second.outputs['check-run-url'] });
    expect(fake.requests.filter((r) => r.method === 'PATCH' && /\/issues\/comments\/\d+$/.test(r.path))).toHaveLength(
      1,
    );
  });

  it('fails with what to do when no report file matches', async () => {
    const workspace = await writeTree({ 'other/readme.md': 'nothing here\n' });
    const requests = fake.requests.length;
    const res = await report(workspace);
    expect(res.code).toBe(2);
    expect(res.stdout).toMatch(
      /^::error::no report file matches "reports\/\*\.json" under .*actions\/download-artifact .*merge-multiple: true/m,
    );
    expect(fake.requests.slice(requests)).toEqual([]);
  });

  it("refuses a matrix input that is not the plan job's matrix output, before posting anything", async () => {
    const workspace = await writeTree(reportTree(twoClusters()));
    const requests = fake.requests.length;
    const res = await report(workspace, { matrix: '3' });
    expect(res.code).toBe(2);
    expect(res.stdout).toMatch(
      /^::error::input matrix: not a JSON object; pass the plan job's matrix output as it is \(matrix: \$\{\{ needs\.plan\.outputs\.matrix \}\}\)/m,
    );
    expect(fake.requests.slice(requests)).toEqual([]);
  });

  it('refuses report files of different modes, naming them', async () => {
    const reports = twoClusters();
    const applied = { ...reports['staging.flux-system.apps.json']!, mode: 'apply' as const };
    const workspace = await writeTree(reportTree({ ...reports, 'staging.flux-system.apps.json': applied }));
    const res = await report(workspace);
    expect(res.code).toBe(2);
    expect(res.stdout).toMatch(
      /^::error::the report files are of different modes \(preview: reports\/production\.flux-system\.apps\.json, reports\/production\.flux-system\.infra\.json, reports\/staging\.flux-system\.infra\.json; apply: reports\/staging\.flux-system\.apps\.json\)/m,
    );
  });
});
