/**
 * How the action reports a run, shared by a reconciling run (src/main.ts) and mode: report
 * (report-mode.ts), so that a fan-out's merged report reads like one run's: the PR comment and
 * check run, the outputs, the job summary and the failure message.
 */
import * as core from './core.js';
import { movedObjects } from '../report/destructive.js';
import type { GitHubContext } from '../github/context.js';
import type { Published } from '../github/publish.js';
import { hasChanges, type Report } from '../report/model.js';
import type { ExitStatus } from '../report/exit.js';
import { renderSummary } from '../report/render.js';
import { mdText } from '../util/markdown.js';
import { stripTerminalControls } from '../util/terminal.js';

export interface GitHubReporting {
  token?: string;
  comment: boolean;
  checkRun: boolean;
}

/**
 * What identifies a set of Kustomizations on GitHub: the sticky comment's marker and the check
 * run's name. The kustomizations input when given, else the path: mode: report computes it from the
 * same kustomizations input as its jobs, so its comment is the one sticky comment of that set.
 */
export function reportKey(kustomizations: readonly string[], path: string): string {
  return kustomizations.length > 0 ? kustomizations.join(',') : path;
}

/** Comment and check run; never fails the run (an apply that succeeded stays a success). */
export async function publishReport(
  report: Report,
  ctx: GitHubContext | undefined,
  github: GitHubReporting,
  key: string,
): Promise<Published> {
  const { token, comment, checkRun } = github;
  if (!ctx || (!comment && !checkRun)) return { warnings: [] };
  if (!token) {
    // A ::warning:: in the log too, not only a line of the job summary: the reader of the log sees it.
    const warning =
      'No github-token: no PR comment or check run was posted (set github-token, e.g. ${{ github.token }})';
    core.warning(warning);
    return { warnings: [warning] };
  }
  try {
    // Octokit is loaded only by a run that posts to GitHub.
    const { publish } = await import('../github/publish.js');
    const published = await publish(report, ctx, { token, comment, checkRun, key });
    for (const w of published.warnings) core.warning(w);
    if (published.commentUrl) core.info(`Preview comment: ${published.commentUrl}`);
    if (published.checkRunUrl) core.info(`Check run: ${published.checkRunUrl}`);
    return published;
  } catch (err) {
    const warning = `Reporting to GitHub failed: ${(err as Error).message}`;
    core.warning(warning);
    return { warnings: [warning] };
  }
}

/** The outputs every run sets; `revision` is the commit reconciled ('' when unknown). */
export function setOutputs(report: Report, revision: string | undefined, published: Published): void {
  const deleted = (report.pruned ?? []).filter((p) => p.action === 'deleted');
  // The outputs stay compact: the YAML diffs are for the comment and the summary.
  const compact = (entries: Report['changeset']) => entries.map(({ yamlDiff: _yamlDiff, ...rest }) => rest);
  core.setOutput('changeset', JSON.stringify(compact(report.changeset)));
  core.setOutput('created', report.counts.created);
  core.setOutput('configured', report.counts.configured);
  core.setOutput('unchanged', report.counts.unchanged);
  core.setOutput('skipped', report.counts.skipped);
  core.setOutput('deleted', deleted.length);
  core.setOutput('changed', hasChanges(report));
  core.setOutput(
    'pruned',
    JSON.stringify(report.mode === 'apply' || report.drift?.corrected ? deleted.map((p) => p.subject) : []),
  );
  core.setOutput('moved', JSON.stringify(movedObjects(report)));
  core.setOutput('drift-detected', report.drift?.detected ?? false);
  core.setOutput('revision', revision ?? '');
  core.setOutput('comment-url', published.commentUrl ?? '');
  core.setOutput('check-run-url', published.checkRunUrl ?? '');
  core.setOutput(
    'report',
    JSON.stringify({
      ...report,
      changeset: compact(report.changeset),
      ...(report.kustomizations
        ? { kustomizations: report.kustomizations.map((k) => ({ ...k, changeset: compact(k.changeset) })) }
        : {}),
    }),
  );
}

export async function writeSummary(report: Report, published: Published): Promise<void> {
  if (!process.env['GITHUB_STEP_SUMMARY']) {
    core.info('No job summary written: GITHUB_STEP_SUMMARY is not set (not running on GitHub Actions?)');
    return;
  }
  let md = renderSummary(report);
  // A warning can quote GitHub's answers and a fork's branch name (workflow_run): text, not markup.
  if (published.warnings.length > 0)
    md += `\n> [!WARNING]\n${published.warnings.map((w) => `> ${mdText(w)}`).join('\n>\n')}\n`;
  // Escapes from the tree (a name, a path, a kustomize error) are not the summary's to interpret.
  await core.summary.addRaw(stripTerminalControls(md)).write();
}

/** Fails the step for exit code 2 (with the report's error) or 1 (drift found, with the totals). */
export function failFor(report: Report, code: ExitStatus): void {
  if (code === 2) core.setFailed(report.error ?? 'failed');
  if (code === 1)
    core.setFailed(
      `drift found: ${report.counts.created} to create, ${report.counts.configured} to configure, ${report.counts.deleted} to delete`,
    );
}
