import * as core from '@actions/core';
import { readFile } from 'node:fs/promises';
import { githubContext, type GitHubContext } from './github/context.js';
import type { Published } from './github/publish.js';
import { reconcile } from './reconcile/index.js';
import { exitCode, hasChanges, type Report } from './report/model.js';
import { closingLines, renderSummary } from './report/render.js';
import { Scrubber, scrubReport } from './report/scrub.js';
import { readActionSettings } from './action/inputs.js';
import { knownSecrets, type Settings } from './settings.js';

/** The action's edge: inputs in; log, job summary, PR comment, check run, outputs and exit code out. */
export async function run(): Promise<void> {
  try {
    const ctx = githubContext(process.env, await readEvent());
    const settings = { ...readActionSettings(), fork: ctx?.fork === true };
    // Each secret in every form it can take (newline-stripped, line by line, JSON-escaped, base64).
    const scrubber = new Scrubber();
    const secret = (s: string) => {
      for (const f of scrubber.add(s)) core.setSecret(f);
    };
    knownSecrets(settings).forEach(secret);
    core.info(`kustomize-reconcile ${settings.mode}`);
    const raw = await reconcile(settings, {
      // Scrubbed as well as masked: a value must not depend on the runner's masking to stay hidden.
      log: (l) => {
        core.info(scrubber.text(l));
      },
      secret,
      group: logGroups((title) => scrubber.text(title)),
    });
    // Everything below leaves the runner's masked log: comment, check run, summary, outputs.
    const report = scrubReport(raw, scrubber.known);
    // Each applied and pruned object had its line in the phases' groups above.
    for (const line of closingLines(report)) core.info(line);
    const published = await publishReport(report, settings, ctx);
    setOutputs(report, settings, published);
    await writeSummary(report, published);
    const code = exitCode(report, settings.mode === 'drift');
    if (code === 2) core.setFailed(report.error ?? 'failed');
    if (code === 1)
      core.setFailed(
        `drift found: ${report.counts.created} to create, ${report.counts.configured} to configure, ${report.counts.deleted} to delete`,
      );
    process.exitCode = code;
  } catch (err) {
    core.setFailed(err instanceof Error ? err.message : String(err));
    process.exitCode = 2;
  }
}

/**
 * One collapsible group per phase. The runner's log does not nest groups, and several
 * Kustomizations run at once: a phase that starts while another's group is open is a heading line
 * inside it instead.
 */
function logGroups(clean: (title: string) => string): <T>(title: string, fn: () => Promise<T>) => Promise<T> {
  let open = false;
  return async (title, fn) => {
    if (open) {
      core.info(`── ${clean(title)}`);
      return fn();
    }
    open = true;
    core.startGroup(clean(title));
    try {
      return await fn();
    } finally {
      core.endGroup();
      open = false;
    }
  };
}

async function readEvent(): Promise<unknown> {
  const path = process.env['GITHUB_EVENT_PATH'];
  if (!path) return undefined;
  try {
    return JSON.parse(await readFile(path, 'utf8')) as unknown;
  } catch (err) {
    core.warning(`Could not read the event payload ${path}: ${(err as Error).message}`);
    return undefined;
  }
}

/** Comment and check run; never fails the run (an apply that succeeded stays a success). */
async function publishReport(report: Report, settings: Settings, ctx: GitHubContext | undefined): Promise<Published> {
  const { token, comment, checkRun } = settings.github;
  if (!ctx || (!comment && !checkRun)) return { warnings: [] };
  if (!token) {
    // A ::warning:: in the log too, not only a line of the job summary: the reader of the log sees it.
    const warning =
      'No github-token: no PR comment or check run was posted (set github-token, e.g. ${{ github.token }})';
    core.warning(warning);
    return { warnings: [warning] };
  }
  const key = settings.kustomizations.length > 0 ? settings.kustomizations.join(',') : settings.path;
  try {
    // Octokit is loaded only by a run that posts to GitHub.
    const { publish } = await import('./github/publish.js');
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

function setOutputs(report: Report, settings: Settings, published: Published): void {
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
  core.setOutput('drift-detected', report.drift?.detected ?? false);
  core.setOutput('revision', settings.run.revision ?? '');
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

async function writeSummary(report: Report, published: Published): Promise<void> {
  if (!process.env['GITHUB_STEP_SUMMARY']) {
    core.info('No job summary written: GITHUB_STEP_SUMMARY is not set (not running on GitHub Actions?)');
    return;
  }
  let md = renderSummary(report);
  if (published.warnings.length > 0) md += `\n> [!WARNING]\n${published.warnings.map((w) => `> ${w}`).join('\n>\n')}\n`;
  await core.summary.addRaw(md).write();
}
