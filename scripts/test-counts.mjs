// Reads the test runner's JSON reports (the whole run, then one per more Kubernetes release the
// integration suite ran on) and prints, on stderr, one line per release the integration suite ran
// on; on stdout "passed failed total" of all the reports together, for scripts/test.sh.
//
//   node scripts/test-counts.mjs reports/vitest.json reports/vitest-testcluster-v1.34.json
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

const INTEGRATION = /[/\\]__tests__[/\\]integration[/\\]/;

/** The release a test cluster binary says it is (`testcluster version`), or its name. */
function release(bin) {
  try {
    return execFileSync(bin, ['version'], { encoding: 'utf8' }).trim().split(/\s+/).pop();
  } catch {
    return bin;
  }
}

const totals = { passed: 0, failed: 0, total: 0 };
for (const file of process.argv.slice(2)) {
  if (!existsSync(file)) continue;
  const r = JSON.parse(readFileSync(file, 'utf8'));
  totals.passed += r.numPassedTests;
  totals.failed += r.numFailedTests;
  totals.total += r.numTotalTests;
  const name = /vitest-(testcluster-v[\d.]+)\.json$/.exec(file)?.[1] ?? 'testcluster';
  const counts = { passed: 0, failed: 0 };
  for (const f of r.testResults ?? []) {
    if (!INTEGRATION.test(f.name)) continue;
    for (const a of f.assertionResults ?? []) {
      if (a.status === 'passed') counts.passed++;
      else if (a.status === 'failed') counts.failed++;
    }
  }
  if (counts.passed + counts.failed > 0) {
    console.error(
      `integration on Kubernetes ${release(`test/cluster/bin/${name}`)}: ${counts.passed} passed, ${counts.failed} failed`,
    );
  }
}
console.log(totals.passed, totals.failed, totals.total);
