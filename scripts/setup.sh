#!/usr/bin/env bash
# Installs what the project needs on a fresh machine, reusing what is already there:
# npm packages (Node 24 among them, from the npm package `node`), the test cluster binary and
# the pinned kustomize, sops and age (built through the Go module proxy, cached under $HOME).
#
#   bash scripts/setup.sh          everything the tests need (the parity oracle, the registry, moto, ...)
#   bash scripts/setup.sh --demo   only what scripts/demo.sh needs: npm packages, the test cluster, kustomize
#
# Each step prints one line with its time.
set -euo pipefail
cd "$(dirname "$0")/.."

demo=false
[ "${1:-}" = "--demo" ] && demo=true
step() {
  local name=$1 t0=$SECONDS
  shift
  "$@"
  echo "setup: $name: $((SECONDS - t0))s"
}

stamp=node_modules/.kr-lock-sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  step "npm ci" npm ci --no-audit --no-fund --loglevel=error
  echo "$want" > "$stamp"
fi
# The test cluster and the pinned kustomize, sops and age.
step "test cluster, kustomize, sops, age" bash test/cluster/build.sh
$demo && exit 0
# The real Flux kustomize-controller v1.10.1, the parity suite's oracle and a benchmark peer (cached under
# $HOME); its build exports GOTOOLCHAIN=go1.27.3 for itself (v1.10 needs Go 1.27).
step "kustomize-controller, flux CLI" bash test/flux/build.sh
step "OCI registry" bash test/registry/build.sh
# actionlint, which npm run workflows runs over this repository's workflows and the README's.
step "actionlint" bash test/act/build.sh
# moto, a local AWS KMS/STS emulator (PyPI), for the KMS key service's emulator tests.
step "moto (AWS KMS emulator)" bash test/kms/setup.sh

# The SOPS tests encrypt fixtures with gpg and make SSH keys with ssh-keygen; the report tests open the
# rendered PR comment and job summary in headless Chromium (Debian packages).
missing=()
command -v gpg >/dev/null || missing+=(gnupg)
command -v ssh-keygen >/dev/null || missing+=(openssh-client)
[ -x /usr/bin/chromium ] || missing+=(chromium)
if [ ${#missing[@]} -gt 0 ]; then
  install() { apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null; }
  step "apt: ${missing[*]}" install
fi
