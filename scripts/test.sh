#!/usr/bin/env bash
# The README's test command: set up what is missing, then run exactly what CI runs
# (format, lint, typecheck, unit, integration and hostile-PR tests against a real cluster), and print
# one plain "N passed, N failed" line from the test runner's JSON report.
set -euo pipefail
cd "$(dirname "$0")/.."

start=$SECONDS
bash scripts/setup.sh
rm -f reports/vitest.json
# Every step runs, whatever the one before it gave: a red format check or workflows run still lets the
# suites run and report, and each failed step counts as one failure in the closing line.
failed_steps=()
run_step() {
  local name=$1
  shift
  "$@" || failed_steps+=("$name")
}
nested=${KR_WORKFLOWS_NESTED:-}
run_step format npm run --silent format
run_step lint npm run --silent lint
run_step typecheck npm run --silent build
run_step workflows npm run --silent workflows
if [ -n "$nested" ]; then
  # Inside npm run workflows, which runs .github/workflows/ci.yml (this command) under act: the outer
  # run is running every suite right now, so this one runs only the unit files that say the tree is
  # consistent (dist/ fresh, layout and imports, options against action.yml, the README's tables).
  echo "tests: inside a workflow run of npm run workflows: the tree's own checks only"
  run_step vitest npx vitest run --project unit __tests__/unit/dist-fresh.test.ts __tests__/unit/layout.test.ts \
    __tests__/unit/no-import-cycle.test.ts __tests__/unit/options.test.ts __tests__/unit/readme.test.ts
else
  run_step vitest npm test
  # The integration suite again on the oldest Kubernetes release teams still run, which
  # test/cluster/build.sh links beside the default as testcluster-vMAJOR.MINOR.
  for bin in test/cluster/bin/testcluster-v*; do
    [ -e "$bin" ] || continue
    name=$(basename "$bin")
    rm -f "reports/vitest-$name.json"
    run_step "integration on $name" env KR_TESTCLUSTER="$name" KR_VITEST_REPORT="reports/vitest-$name.json" \
      npx vitest run --project integration
  done
fi
status=0
[ ${#failed_steps[@]} -eq 0 ] || status=1

if [ -f reports/vitest.json ]; then
  # One line per Kubernetes release the integration suite ran on, then the counts of every run together.
  read -r passed failed total < <(node scripts/test-counts.mjs reports/vitest.json reports/vitest-testcluster-v*.json)
  [ "$total" -gt 0 ] || { echo "no tests ran"; status=1; }
  [ "$failed" -eq 0 ] || status=1
  echo "tests: finished in $((SECONDS - start))s"
  # The hostile-PR suite ran above (the attack project of vitest run): its one line, from its result files.
  [ -n "$nested" ] || node scripts/attack-summary.mjs || status=1
else
  echo "the test runner wrote no report"
  passed=0
  failed=0
  status=1
fi
# A step that failed outside the test runner (format, lint, typecheck, workflows, or the runner itself
# when it wrote no report) is one failure more; vitest's own failures are in its count already.
for s in "${failed_steps[@]}"; do
  if [ "$s" = vitest ] && [ -f reports/vitest.json ]; then continue; fi
  if [[ "$s" = "integration on "* ]] && [ -f "reports/vitest-${s#integration on }.json" ]; then continue; fi
  echo "tests: step failed: $s"
  failed=$((failed + 1))
done
[ "$failed" -gt 0 ] || [ "$status" -eq 0 ] || failed=1
echo "$passed passed, $failed failed"
exit "$status"
