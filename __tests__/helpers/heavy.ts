import { vi } from 'vitest';

/**
 * The bound for one test of a unit file whose work is real I/O (git repositories, processes, trees of 1,000
 * files) or inputs of tens of thousands of keys: seconds here, and up to 25 times that on a machine at load 50
 * with 2 cores. It stops a hang; it does not measure speed.
 */
export const HEAVY_MS = 240_000;

/** Gives every test and hook of the calling file the heavy bound (vitest's setConfig is per file). */
export function heavyFile(): void {
  vi.setConfig({ testTimeout: HEAVY_MS, hookTimeout: HEAVY_MS });
}
