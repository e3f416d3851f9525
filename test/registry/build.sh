#!/usr/bin/env bash
# Builds the CNCF distribution registry (github.com/distribution/distribution/v3, its cmd/registry),
# pinned, from the Go module proxy, cached under $HOME and linked as test/registry/bin/registry. The
# OCIRepository tests (__tests__/helpers/registry.ts) run it on loopback with filesystem storage as a
# real OCI registry to push Flux artifacts to and fetch them from. Nothing built here is committed.
set -euo pipefail
cd "$(dirname "$0")"
# shellcheck source=../lib/go-module.sh
source ../lib/go-module.sh

# The newest release the proxy serves here (v3.0.0, v3.1.1 and v3.1.2 are listed); its go.mod asks for
# go 1.26.0, which the machine's Go has.
REGISTRY_VERSION=v3.1.2
MODULE=github.com/distribution/distribution/v3

go_module_binary test/registry "$MODULE" "$REGISTRY_VERSION" ./cmd/registry registry \
  "${KR_REGISTRY_CACHE_DIR:-$HOME/.cache/kr-registry}" "$(sha256sum build.sh ../lib/go-module.sh | sha256sum | cut -c1-12)"
mkdir -p bin
ln -sfn "$GO_MODULE_DIR/registry" bin/registry
echo "test/registry: ready: $(pwd)/bin/registry (distribution $REGISTRY_VERSION)"
