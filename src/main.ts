import * as core from '@actions/core';
import { reconcile } from './reconcile.js';
import { exitCode } from './report/model.js';
import { renderLines, renderSummary } from './report/render.js';
import { readActionSettings } from './settings.js';

/** The action's edge: inputs in; log, job summary, outputs and exit code out. */
export async function run(): Promise<void> {
  try {
    const settings = readActionSettings();
    const report = await reconcile(settings, {
      log: (l) => {
        core.info(l);
      },
      secret: (s) => {
        core.setSecret(s);
      },
    });
    for (const line of renderLines(report).slice(report.changeset.length)) core.info(line);
    core.setOutput('changeset', JSON.stringify(report.changeset));
    core.setOutput('created', report.counts.created);
    core.setOutput('configured', report.counts.configured);
    core.setOutput('unchanged', report.counts.unchanged);
    core.setOutput('changed', report.counts.created + report.counts.configured > 0);
    core.setOutput(
      'pruned',
      JSON.stringify((report.pruned ?? []).filter((p) => p.action === 'deleted').map((p) => p.subject)),
    );
    core.setOutput('report', JSON.stringify(report));
    if (process.env['GITHUB_STEP_SUMMARY']) {
      await core.summary.addRaw(renderSummary(report)).write();
    } else {
      core.info('No job summary written: GITHUB_STEP_SUMMARY is not set (not running on GitHub Actions?)');
    }
    const code = exitCode(report, settings.mode === 'drift');
    if (code === 2) core.setFailed(report.error ?? 'failed');
    if (code === 1)
      core.setFailed(`drift found: ${report.counts.created} to create, ${report.counts.configured} to configure`);
    process.exitCode = code;
  } catch (err) {
    core.setFailed(err instanceof Error ? err.message : String(err));
    process.exitCode = 2;
  }
}
