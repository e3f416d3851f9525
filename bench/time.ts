// `/usr/bin/time` around a benchmark's child process (bench/run/measure.ts, bench/fanout/proc.ts): the
// command that runs the process under it when the machine has it, and the peak RSS and CPU time it
// wrote to its output file once the process has exited.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { TIME } from './paths.ts';

/**
 * The program and arguments that run `cmd` under /usr/bin/time, which writes to `file`; `cmd` and
 * `args` as they are when the machine has no /usr/bin/time.
 */
export function timed(cmd: string, args: string[], file: string): [string, string[]] {
  return existsSync(TIME) ? [TIME, ['-f', '%M %U %S', '-o', file, cmd, ...args]] : [cmd, args];
}

/** What /usr/bin/time wrote to `file`: peak RSS, KiB, and CPU time (user + system), ms; undefined if unread. */
export async function readTimes(file: string): Promise<{ peakRssKiB: number | undefined; cpuMs: number | undefined }> {
  // The last line (after "Command exited with non-zero status N"): peak RSS KiB, user s, system s.
  const [rss, user, sys] = ((await readFile(file, 'utf8').catch(() => '')).trim().split('\n').pop() ?? '')
    .split(' ')
    .map(Number);
  return {
    peakRssKiB: rss !== undefined && Number.isFinite(rss) && rss > 0 ? rss : undefined,
    cpuMs: user !== undefined && sys !== undefined && Number.isFinite(user + sys) ? (user + sys) * 1000 : undefined,
  };
}
