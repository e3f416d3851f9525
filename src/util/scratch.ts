/**
 * A private scratch directory (mkdtemp: mode 0700) for a run's temporary trees: on a runner in
 * RUNNER_TEMP, which the runner empties after the job, so that nothing outlives a cancelled run;
 * elsewhere in the system's temporary directory. The caller removes it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export async function scratchDir(prefix: string): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(process.env['RUNNER_TEMP'] || tmpdir(), prefix));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}
