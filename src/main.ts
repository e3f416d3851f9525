import * as core from './action/core.js';
import { githubContext, type GitHubContext } from './github/context.js';
import { lookUpApproval } from './github/approval.js';
import { readEventFile } from './github/event.js';
import { reconcileScrubbed, writeReportFile } from './reconcile/finish.js';
import type { Report } from './report/model.js';
import { exitStatusOf } from './report/exit.js';
import { closingLines } from './report/render.js';
import { Scrubber } from './report/scrub.js';
import { readActionSettings } from './action/inputs.js';
import { openBuildCache } from './action/build-cache.js';
import { failFor, publishReport, reportKey, setOutputs, writeSummary } from './action/outputs.js';
import { knownSecrets, runMode, type Settings } from './options/settings.js';
import { untrustedTreeOf } from './source/trust.js';

/** The action's edge: inputs in; log, job summary, PR comment, check run, outputs and exit code out. */
export async function run(): Promise<void> {
  try {
    const event = await readEvent();
    // Every input read, and every credential among them masked, before anything else.
    const read = readActionSettings();
    // The fan-out's two modes without a cluster: plan (before the matrix) and report (after it).
    if (read.mode === 'plan' || read.mode === 'report') {
      const edge =
        read.mode === 'plan' ? await import('./action/plan-mode.js') : await import('./action/report-mode.js');
      process.exitCode = await edge.run(event, read);
      return;
    }
    const ctx = githubContext(process.env, event);
    // A preview, or any run on a pull request, builds a tree nobody has reviewed yet (source/trust.ts).
    const untrusted = untrustedTreeOf({
      mode: read.mode,
      eventName: process.env['GITHUB_EVENT_NAME'],
      event,
      ...(read.base ? { base: read.base } : {}),
      root: read.root,
    });
    // The build cache restored from the Actions cache before anything builds (action/build-cache.ts).
    const buildCache = await openBuildCache(read);
    const settings = {
      ...read,
      ...(buildCache ? { buildCache: buildCache.dir } : {}),
      fork: ctx?.fork === true,
      ...(untrusted ? { untrustedTree: untrusted } : {}),
      ...(await approvalOf(read, ctx, untrusted !== undefined)),
    };
    // Each secret in every form it can take (newline-stripped, line by line, JSON-escaped, base64).
    const scrubber = new Scrubber();
    const secret = (s: string) => {
      for (const f of scrubber.add(s)) core.setSecret(f);
    };
    knownSecrets(settings).forEach(secret);
    core.info(`kustomize-reconcile ${settings.mode}`);
    // Everything the report carries below leaves the runner's masked log (comment, check run, summary,
    // outputs, the report file): it is scrubbed as well as masked, so that no value depends on the
    // runner's masking to stay hidden.
    const report = await reconcileScrubbed(
      settings,
      {
        log: (l) => {
          core.info(scrubber.text(l));
        },
        secret,
        group: logGroups((title) => scrubber.text(title)),
      },
      scrubber,
    );
    // Each applied and pruned object had its line in the phases' groups above.
    for (const line of closingLines(report)) core.info(line);
    await buildCache?.save();
    if (settings.reportFile !== undefined) await reportFile(report, settings, ctx);
    // A fan-out job's own comment never replaces the merged one (mode: report) of the same files.
    const part = [settings.cluster ?? '', ...settings.select].filter((x) => x !== '').join(' ');
    const key = reportKey(settings.kustomizations, settings.path) + (part ? ` (${part})` : '');
    const published = await publishReport(report, ctx, settings.github, key);
    setOutputs(report, settings.run.revision, published);
    await writeSummary(report, published);
    const code = exitStatusOf('action', runMode(settings), report);
    failFor(report, code);
    process.exitCode = code;
  } catch (err) {
    core.setFailed(err instanceof Error ? err.message : String(err));
    process.exitCode = 2;
  }
}

/**
 * With destructive-approval-label, in a run that may apply (apply, or drift with drift-correction):
 * whether the merged pull request of the pushed commit carries the label (github/approval.ts).
 */
async function approvalOf(
  settings: Settings,
  ctx: GitHubContext | undefined,
  untrusted: boolean,
): Promise<Pick<Settings, 'approval'>> {
  const label = settings.destructiveApprovalLabel;
  const applies = settings.mode === 'apply' || (settings.mode === 'drift' && settings.driftCorrection);
  if (label === undefined || label === '' || !applies) return {};
  // A tree nobody merged yet has no merged pull request to carry the yes, whatever its labels.
  const approval = untrusted
    ? { approved: false, why: 'the run is for a pull request that is not merged' }
    : await lookUpApproval(ctx, settings.github.token ?? '', process.env['GITHUB_SHA'], label);
  core.info(`destructive-approval-label: ${approval.why}`);
  return { approval };
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

/** The report as a file for mode: report to merge (input report-file); a failure to write fails the run. */
async function reportFile(report: Report, settings: Settings, ctx: GitHubContext | undefined): Promise<void> {
  await writeReportFile(report, settings, {
    ...(ctx?.runUrl ? { runUrl: ctx.runUrl } : {}),
    ...(process.env['GITHUB_JOB'] ? { job: process.env['GITHUB_JOB'] } : {}),
  }).catch((err: unknown) => {
    throw new Error(`report-file ${settings.reportFile ?? ''}: ${(err as Error).message}`, { cause: err });
  });
  core.info(`Report written to ${settings.reportFile}`);
}

async function readEvent(): Promise<unknown> {
  const path = process.env['GITHUB_EVENT_PATH'];
  const { event, error } = await readEventFile(path);
  if (error !== undefined) core.warning(`Could not read the event payload ${path}: ${error}`);
  return event;
}
