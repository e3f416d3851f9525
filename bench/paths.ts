// Where the benchmarks (bench/run.ts, bench/fanout.ts) find what they run: the repository, the bundled
// CLI and action (dist/, or $KR_BENCH_DIST), kustomize, the peers' build script, /usr/bin/time and Node
// itself; and where they write their results, each run's files named by the time it started (or, for
// the fan-out, ended).
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('..', import.meta.url));
/**
 * The bundle the benchmarks run: dist/, or the directory KR_BENCH_DIST names (a bundle of a working
 * tree made with `node scripts/bundle.mjs DIR`, leaving dist/ as committed).
 */
export const DIST = process.env.KR_BENCH_DIST ? resolve(process.env.KR_BENCH_DIST) : join(REPO, 'dist');
export const CLI = join(DIST, 'cli.js');
export const ACTION = join(DIST, 'index.js');
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
