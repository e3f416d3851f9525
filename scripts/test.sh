#!/usr/bin/env bash
# The README's test command: set up what is missing, then run exactly what CI runs
# (format, lint, typecheck, unit, integration and hostile-PR tests against a real cluster), and print
# one plain "N passed, N failed" line from the test runner's JSON report.
set -euo pipefail
cd "$(dirname "$0")/.."

start=$SECONDS
bash scripts/setup.sh
rm -f reports/vitest.json
status=0
nested=${KR_WORKFLOWS_NESTED:-}
if [ -n "$nested" ]; then
  # Inside npm run workflows, which runs .github/workflows/ci.yml (this command) under act: the
  # same steps, with the unit project only, since the outer run is running the rest right now.
  echo "tests: inside a workflow run of npm run workflows: vitest's unit project only"
  { npm run --silent format && npm run --silent lint && npm run --silent build && npm run --silent workflows &&
    npx vitest run --project unit; } || status=$?
else
  npm run --silent all || status=$?
fi

if [ -f reports/vitest.json ]; then
  read -r passed failed total < <(node -e '
    const r = JSON.parse(require("fs").readFileSync("reports/vitest.json", "utf8"));
    console.log(r.numPassedTests, r.numFailedTests, r.numTotalTests);')
  [ "$total" -gt 0 ] || { echo "no tests ran"; status=1; }
  [ "$failed" -eq 0 ] || status=1
  echo "tests: finished in $((SECONDS - start))s"
  # The hostile-PR suite ran above (the attack project of vitest run): its one line, from its result files.
  [ -n "$nested" ] || node scripts/attack-summary.mjs || status=1
  echo "$passed passed, $failed failed"
else
  echo "the test runner wrote no report (a check before the tests failed)"
  echo "0 passed, 1 failed"
  [ "$status" -ne 0 ] || status=1
fi
exit "$status"
