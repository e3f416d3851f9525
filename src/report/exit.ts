/**
 * A command's exit status, decided here once for every command and mode of both edges (the action,
 * src/main.ts and action/report-mode.ts; the CLI, src/cli.ts): 2 when the run failed; 1 when the
 * run found what its command exists to find (changes for `diff`, drift for `drift`); else 0. Pure.
 */
import type { Mode } from '../options/settings.js';
import { hasChanges, type Report } from './model.js';

/** 0: ok; 1: the command's findings (changes, or drift not corrected); 2: an error. */
export type ExitStatus = 0 | 1 | 2;

/**
 * What makes a run that succeeded exit 1: nothing (`errors`: only a failure fails), anything to
 * create, configure or delete (`changes`), or drift found and not corrected (`drift`: the report's
 * drift verdict; without one, its changes).
 */
export type ExitPolicy = 'errors' | 'changes' | 'drift';

/** The edge a command runs at: the CLI (`diff`, `apply`, `drift`, `report`) or the action (its modes). */
export type Edge = 'cli' | 'action';

/**
 * Each edge's policy per mode. The CLI's `diff` (a preview) exists to say whether there are
 * changes; the action's preview reports them (comment, check run) and succeeds. `report` (a merged
 * report) exits as a run of its mode at the same edge.
 */
const POLICIES: Readonly<Record<Edge, Readonly<Record<Mode, ExitPolicy>>>> = {
  cli: { apply: 'errors', preview: 'changes', drift: 'drift' },
  action: { apply: 'errors', preview: 'errors', drift: 'drift' },
};

/** The exit policy of a run of `mode`, or of a merged report of that mode, at `edge`. */
export function exitPolicy(edge: Edge, mode: Mode): ExitPolicy {
  return POLICIES[edge][mode];
}

/** A report's exit status under a policy. */
export function exitStatus(report: Pick<Report, 'ok' | 'counts' | 'drift'>, policy: ExitPolicy): ExitStatus {
  if (!report.ok) return 2;
  switch (policy) {
    case 'errors':
      return 0;
    case 'changes':
      return hasChanges(report) ? 1 : 0;
    case 'drift': {
      const found = report.drift ? report.drift.detected && !report.drift.corrected : hasChanges(report);
      return found ? 1 : 0;
    }
  }
}

/** The exit status of a run of `mode` (or a merged report of it) at `edge`: exitStatus under exitPolicy. */
export function exitStatusOf(edge: Edge, mode: Mode, report: Pick<Report, 'ok' | 'counts' | 'drift'>): ExitStatus {
  return exitStatus(report, exitPolicy(edge, mode));
}
