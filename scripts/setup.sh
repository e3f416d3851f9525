#!/usr/bin/env bash
# Installs what the project needs on a fresh machine, reusing what is already there:
# npm packages (Node 24 among them, from the npm package `node`), the test cluster binary and
# the pinned kustomize, sops and age (built through the Go module proxy, cached under $HOME).
set -euo pipefail
cd "$(dirname "$0")/.."

stamp=node_modules/.kr-lock-sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  t0=$SECONDS
  npm ci --no-audit --no-fund --loglevel=error
  echo "$want" > "$stamp"
  echo "setup: npm ci in $((SECONDS - t0))s"
fi
bash test/cluster/build.sh
