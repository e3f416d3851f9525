#!/usr/bin/env bash
# The README's main command: set up what is missing, start the local test cluster (tier b:
# a real kube-apiserver with controllers and a fake node), reconcile examples/ into it with the
# bundled CLI, print the change set, and stop the cluster. --keep leaves it running.
set -euo pipefail
cd "$(dirname "$0")/.."
keep=false
[ "${1:-}" = "--keep" ] && keep=true

# Only what the demo uses (the test command installs the rest: the parity oracle, the registry, ...).
bash scripts/setup.sh --demo >&2
dir=$(mktemp -d "${TMPDIR:-/tmp}/kr-demo-XXXXXX")
t0=$SECONDS
echo "demo: starting the local cluster in $dir" >&2
test/cluster/bin/testcluster up --tier b --dir "$dir" > "$dir/up.out" 2> "$dir/up.err" &
up_pid=$!
stop() { test/cluster/bin/testcluster down --dir "$dir" >&2 || true; }
$keep || trap stop EXIT

for _ in $(seq 1 600); do
  grep -q '^KUBECONFIG=' "$dir/up.out" 2>/dev/null && break
  if ! kill -0 "$up_pid" 2>/dev/null; then
    echo "demo: the cluster failed to start:" >&2
    cat "$dir/up.err" >&2
    exit 2
  fi
  sleep 0.2
done
kubeconfig=$(sed -n 's/^KUBECONFIG=//p' "$dir/up.out")
[ -n "$kubeconfig" ] || { echo "demo: the cluster did not start within 120s" >&2; cat "$dir/up.err" >&2; exit 2; }
tail -n 1 "$dir/up.err" >&2
echo "demo: cluster: $((SECONDS - t0))s" >&2

echo "demo: kustomize-reconcile apply --path examples" >&2
t0=$SECONDS
PATH="$PWD/test/cluster/bin:$PATH" node_modules/.bin/node dist/cli.js apply --path examples --kubeconfig "$kubeconfig"
echo "demo: apply: $((SECONDS - t0))s" >&2

if $keep; then
  echo "demo: the cluster keeps running: export KUBECONFIG=$kubeconfig" >&2
  echo "demo: stop it with: npm run cluster:down -- --dir $dir" >&2
fi
