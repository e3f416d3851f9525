#!/usr/bin/env bash
# Builds the workflow tools, pinned, from the Go module proxy, cached under $HOME and linked into
# test/act/bin: actionlint (github.com/rhysd/actionlint), which `npm run workflows` runs over
# .github/workflows/ and every workflow the README and docs print. Nothing built here is committed.
set -euo pipefail
cd "$(dirname "$0")"
# shellcheck source=../lib/go-module.sh
source ../lib/go-module.sh

# The newest release the proxy lists here.
ACTIONLINT_VERSION=v1.7.12

go_module_binary test/act github.com/rhysd/actionlint "$ACTIONLINT_VERSION" ./cmd/actionlint actionlint \
  "${KR_ACT_CACHE_DIR:-$HOME/.cache/kr-act}" "$(sha256sum build.sh ../lib/go-module.sh | sha256sum | cut -c1-12)"
mkdir -p bin
ln -sfn "$GO_MODULE_DIR/actionlint" bin/actionlint
echo "test/act: ready: $(pwd)/bin/actionlint ($ACTIONLINT_VERSION)"
