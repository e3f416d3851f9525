/**
 * The end of a run, the same for both edges (main.ts, the action; cli.ts, the terminal): the report
 * scrubbed of every secret the run learnt before it leaves the run, and written as a report file for
 * mode: report to merge. The edges only say where the lines go and how a failure reads.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { Settings } from '../options/settings.js';
import { reportFileText } from '../report/file.js';
import type { Report } from '../report/model.js';
import { scrubReport, type Scrubber } from '../report/scrub.js';
import type { Clock, Hooks } from './context.js';
import { reconcile } from './index.js';

/**
 * reconcile(), its report scrubbed of every credential the run met. `hooks.secret`, when the edge
 * masks credentials too, must add each to `scrubber` itself (Scrubber.add returns the forms it had
 * not seen, which are the ones to mask: adding a value here first would leave none); without it,
 * each goes to `scrubber` alone.
 */
export async function reconcileScrubbed(
  settings: Settings,
  hooks: Omit<Hooks, 'secret'> & { secret?: Hooks['secret'] },
  scrubber: Scrubber,
  clock?: Clock,
): Promise<Report> {
  const raw = await reconcile(
    settings,
    {
      ...hooks,
      secret:
        hooks.secret ??
        ((value) => {
          scrubber.add(value);
        }),
    },
    clock,
  );
  return scrubReport(raw, scrubber.known);
}

/**
 * Writes a (scrubbed) report to the settings' report file, relative to the root, making its
 * directory; `meta` says which run and job wrote it. Returns the path written.
 */
export async function writeReportFile(
  report: Report,
  settings: Settings,
  meta: { runUrl?: string; job?: string } = {},
): Promise<string> {
  if (settings.reportFile === undefined) throw new Error('internal: no report file to write');
  const path = resolve(settings.root, settings.reportFile);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(
    path,
    reportFileText(report, { ...(settings.run.commit ? { revision: settings.run.commit } : {}), ...meta }),
  );
  return path;
}
