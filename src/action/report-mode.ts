/**
 * The action's edge for mode: report: no cluster. The report files of a fan-out's jobs in (reports,
 * written with report-file and downloaded again); one PR comment, one check run, the job summary,
 * the outputs and the exit code out, as if one run had reconciled every Kustomization.
 */
import * as core from './core.js';
import { githubContext } from '../github/context.js';
import { parseMatrix } from '../fanout/matrix.js';
import { readReportFiles } from '../report/merge-files.js';
import { mergeReports } from '../report/merge.js';
import type { NamedReportFile } from '../report/merge.js';
import { exitStatusOf } from '../report/exit.js';
import { closingLines } from '../report/render.js';
import { scrubReport } from '../report/scrub.js';
import type { Settings } from '../options/settings.js';
import { failFor, publishReport, reportKey, setOutputs, writeSummary } from './outputs.js';

/** Runs mode: report; returns the exit status, as a run of the merged report's mode (report/exit.ts). */
export async function run(event: unknown, settings: Settings, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const patterns = settings.reports;
  if (patterns.length === 0) {
    throw new Error(
      'mode: report needs reports: the report files the jobs wrote with report-file, as globs relative to the workspace (e.g. reports/*.json)',
    );
  }
  // The plan's matrix: the jobs whose reports are expected (checked before any file is read).
  const expected = settings.matrix === undefined ? undefined : parseMatrix(settings.matrix, 'input matrix');
  const files = await readReportFiles(patterns, settings.root);
  core.info(
    `Merging ${files.length} report file${files.length === 1 ? '' : 's'}: ${files.map((f) => f.name).join(', ')}`,
  );
  // The jobs scrubbed their reports; the credentials this step read (the token) are scrubbed again.
  const report = scrubReport(mergeReports(files, expected), settings.masked);
  for (const line of closingLines(report)) core.info(line);
  // The key a job with the same kustomizations input uses: the merged comment is that set's one comment.
  const key = reportKey(settings.kustomizations, patterns.join(','));
  const published = await publishReport(report, githubContext(env, event), settings.github, key);
  setOutputs(report, revisionOf(files), published);
  core.setOutput('jobs', files.length);
  await writeSummary(report, published);
  const code = exitStatusOf('action', report.mode, report);
  failFor(report, code);
  return code;
}

/** The commit the jobs reconciled, when they agree on one (mergeReports notes when they do not). */
function revisionOf(files: readonly NamedReportFile[]): string | undefined {
  const revisions = new Set(files.flatMap((f) => (f.file.revision ? [f.file.revision] : [])));
  return revisions.size === 1 ? [...revisions][0] : undefined;
}
