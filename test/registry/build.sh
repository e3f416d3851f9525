#!/usr/bin/env bash
# Builds the CNCF distribution registry (github.com/distribution/distribution/v3, its cmd/registry),
# pinned, from the Go module proxy, cached under $HOME and linked as test/registry/bin/registry. The
# OCIRepository tests (__tests__/helpers/registry.ts) run it on loopback with filesystem storage as a
# real OCI registry to push Flux artifacts to and fetch them from. Nothing built here is committed.
#
# Why not `go install`: it is built as the main module from a copy of the module, so that the module's
# own go.mod and go.sum decide its dependencies (as its release build does).
set -euo pipefail
cd "$(dirname "$0")"

# The newest release the proxy serves here (v3.0.0, v3.1.1 and v3.1.2 are listed); its go.mod asks for
# go 1.26.0, which the machine's Go has.
REGISTRY_VERSION=v3.1.2
MODULE=github.com/distribution/distribution/v3

cache_root="${KR_REGISTRY_CACHE_DIR:-$HOME/.cache/kr-registry}"
gover=$(go env GOVERSION)
self_hash=$(sha256sum build.sh | cut -c1-12)
dir="$cache_root/registry-$REGISTRY_VERSION-$gover-$self_hash"
export CGO_ENABLED=0 GOFLAGS=-buildvcs=false

t0=$SECONDS
if [ ! -x "$dir/registry" ]; then
  echo "test/registry: building the distribution registry $REGISTRY_VERSION into $dir"
  work=$(mktemp -d)
  trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
  (cd "$work" && go mod download -json "$MODULE@$REGISTRY_VERSION") >"$work/download.json"
  src=$(sed -n "s|.*\"Dir\": \"\(.*@$REGISTRY_VERSION\)\".*|\1|p" "$work/download.json")
  [ -d "$src" ] || {
    echo "test/registry: the Go module proxy did not serve $MODULE@$REGISTRY_VERSION (see $work/download.json)" >&2
    exit 1
  }
  cp -r "$src" "$work/src"
  chmod -R u+w "$work/src"
  # `go mod tidy` only when the module's go.sum does not cover the build as it is.
  (cd "$work/src" && { go build -trimpath -ldflags "-s -w" -o "$work/registry" ./cmd/registry ||
    { go mod tidy && go build -trimpath -ldflags "-s -w" -o "$work/registry" ./cmd/registry; }; })
  rm -rf "$dir"
  mkdir -p "$dir"
  mv "$work/registry" "$dir/"
  echo "$REGISTRY_VERSION" >"$dir/VERSION"
  # Keep the two newest builds.
  ls -dt "$cache_root"/registry-* 2>/dev/null | tail -n +3 | xargs -r rm -rf
  echo "test/registry: registry built in $((SECONDS - t0))s"
else
  echo "test/registry: registry cached at $dir"
fi

mkdir -p bin
ln -sfn "$dir/registry" bin/registry
echo "test/registry: ready: $(pwd)/bin/registry (distribution $REGISTRY_VERSION)"
