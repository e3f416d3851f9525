/**
 * A private scratch directory (mkdtemp: mode 0700) for a run's temporary trees: on a runner in
 * RUNNER_TEMP, which the runner empties after the job, elsewhere in the system's temporary
 * directory. The caller removes it (`remove`); whatever is still there when the process ends is
 * removed then: on exit, and on SIGINT or SIGTERM (a cancelled run), after which the signal is
 * raised again so that the process ends as it would have (exit status 128 + the signal's number).
 */
import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The directories made and not removed yet. */
const live = new Set<string>();
let installed = false;

function removeLive(): void {
  for (const dir of live) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // best effort: the process is ending
    }
  }
  live.clear();
}

function onSignal(signal: NodeJS.Signals): void {
  removeLive();
  process.removeListener(signal, onSignal);
  // Raised again with nobody else listening: the default action ends the process by that signal.
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
}

/** The exit and signal handlers, installed once, with the first scratch directory. */
function install(): void {
  if (installed) return;
  installed = true;
  process.on('exit', removeLive);
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}

export async function scratchDir(prefix: string): Promise<{ dir: string; remove: () => Promise<void> }> {
  install();
  const dir = await mkdtemp(join(process.env['RUNNER_TEMP'] || tmpdir(), prefix));
  live.add(dir);
  return {
    dir,
    remove: async () => {
      await rm(dir, { recursive: true, force: true });
      live.delete(dir);
    },
  };
}
