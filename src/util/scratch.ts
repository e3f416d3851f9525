/**
 * A private scratch directory (mkdtemp: mode 0700) for a run's temporary trees: on a runner in
 * RUNNER_TEMP, which the runner empties after the job, elsewhere in the system's temporary
 * directory. The caller removes it (`remove`); whatever is still there when the process ends is
 * removed then (lifecycle.ts): on exit, and on SIGINT, SIGTERM or SIGHUP (a cancelled run) once the
 * children reading it are killed, after which the process ends by that signal (exit status 128 +
 * the signal's number).
 */
import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onExitCleanup } from './lifecycle.js';

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

export async function scratchDir(prefix: string): Promise<{ dir: string; remove: () => Promise<void> }> {
  if (!installed) {
    installed = true;
    onExitCleanup(removeLive);
  }
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
