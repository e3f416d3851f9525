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
# The real Flux kustomize-controller, the parity suite's oracle and a benchmark peer (cached under $HOME).
bash test/flux/build.sh
bash test/registry/build.sh
# moto, a local AWS KMS/STS emulator (PyPI), for the KMS key service's emulator tests.
bash test/kms/setup.sh

# The SOPS tests encrypt fixtures with gpg and make SSH keys with ssh-keygen; the report tests open the
# rendered PR comment and job summary in headless Chromium (Debian packages).
missing=()
command -v gpg >/dev/null || missing+=(gnupg)
command -v ssh-keygen >/dev/null || missing+=(openssh-client)
[ -x /usr/bin/chromium ] || missing+=(chromium)
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null
fi
