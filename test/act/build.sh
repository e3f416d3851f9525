#!/usr/bin/env bash
# Builds the workflow tools, pinned, from the Go module proxy, cached under $HOME and linked into
# test/act/bin: actionlint (github.com/rhysd/actionlint), which `npm run workflows` runs over
# .github/workflows/ and every workflow the README and docs print, and act (github.com/nektos/act),
# which runs them on this machine. Nothing built here is committed.
set -euo pipefail
cd "$(dirname "$0")"
# shellcheck source=../lib/go-module.sh
source ../lib/go-module.sh

# The newest releases the proxy lists here.
ACTIONLINT_VERSION=v1.7.12
ACT_VERSION=v0.2.89
key=$(sha256sum build.sh ../lib/go-module.sh | sha256sum | cut -c1-12)
cache=${KR_ACT_CACHE_DIR:-$HOME/.cache/kr-act}

mkdir -p bin
go_module_binary test/act github.com/rhysd/actionlint "$ACTIONLINT_VERSION" ./cmd/actionlint actionlint "$cache" "$key"
ln -sfn "$GO_MODULE_DIR/actionlint" bin/actionlint
go_module_binary test/act github.com/nektos/act "$ACT_VERSION" . act "$cache" "$key"
ln -sfn "$GO_MODULE_DIR/act" bin/act
echo "test/act: ready: $(pwd)/bin/actionlint ($ACTIONLINT_VERSION), $(pwd)/bin/act ($ACT_VERSION)"
