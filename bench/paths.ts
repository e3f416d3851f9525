// Where the benchmarks (bench/run.ts, bench/fanout.ts) find what they run: the repository, the bundled
// CLI and action, kustomize, the peers' build script, /usr/bin/time and Node itself; and where they write
// their results, each run's files named by the time it started (or, for the fan-out, ended).
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('..', import.meta.url));
export const CLI = join(REPO, 'dist', 'cli.js');
export const ACTION = join(REPO, 'dist', 'index.js');
export const KUSTOMIZE = join(REPO, 'test', 'cluster', 'bin', 'kustomize');
export const PEERS = join(REPO, 'bench', 'peers.sh');
export const TIME = '/usr/bin/time';
export const NODE = process.execPath;
/** Where a benchmark writes its results (.md and .json). */
export const RESULTS = join(REPO, 'bench', 'results');

/** The time now to the minute, for a results file's name: 2025-01-31T1205Z. */
export function stamp(): string {
  return new Date()
    .toISOString()
    .replace(/:\d\d\.\d+Z$/, 'Z')
    .replace(':', '');
}
