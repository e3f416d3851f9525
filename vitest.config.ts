import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // KR_VITEST_REPORT: scripts/test.sh's second integration run (another Kubernetes release) writes its own.
    reporters: ['default', ['json', { outputFile: process.env['KR_VITEST_REPORT'] ?? 'reports/vitest.json' }]],
    projects: [
      {
        test: {
          name: 'unit',
          include: ['__tests__/unit/**/*.test.ts'],
          // A unit test takes milliseconds here, but on a machine busy with other work (load 10 to 50 on
          // 2 cores) it may take 25 times as long: the bound is for a test that hangs, not a slow one. A
          // file whose tests do real I/O (git, processes, trees of 1,000 files) or read inputs of tens of
          // thousands of keys sizes its own (__tests__/helpers/heavy.ts).
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['__tests__/integration/**/*.test.ts'],
          globalSetup: ['__tests__/helpers/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          // The hostile-PR suite (npm run attack): each case writes reports/attack/<case>.json.
          name: 'attack',
          include: ['__tests__/attack/**/*.test.ts'],
          globalSetup: ['__tests__/helpers/global-setup.ts', '__tests__/attack/setup.ts'],
          testTimeout: 240_000,
          hookTimeout: 120_000,
          maxConcurrency: 3,
        },
      },
      {
        test: {
          name: 'parity',
          include: ['__tests__/parity/**/*.test.ts'],
          globalSetup: ['__tests__/parity/setup.ts'],
          testTimeout: 600_000,
          hookTimeout: 300_000,
          maxConcurrency: 6,
        },
      },
    ],
  },
});
