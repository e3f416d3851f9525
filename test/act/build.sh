#!/usr/bin/env bash
# Builds the workflow tools, pinned, from the Go module proxy, cached under $HOME and linked into
# test/act/bin: actionlint (github.com/rhysd/actionlint), which `npm run workflows` runs over
# .github/workflows/ and every workflow the README and docs print. Nothing built here is committed.
#
# Why not `go install`: it is built as the main module from a copy of the module, so that the
# module's own go.mod and go.sum decide its dependencies (as its release build does).
set -euo pipefail
cd "$(dirname "$0")"

# The newest release the proxy lists here.
ACTIONLINT_VERSION=v1.7.12
MODULE=github.com/rhysd/actionlint

cache_root="${KR_ACT_CACHE_DIR:-$HOME/.cache/kr-act}"
gover=$(go env GOVERSION)
self_hash=$(sha256sum build.sh | cut -c1-12)
dir="$cache_root/actionlint-$ACTIONLINT_VERSION-$gover-$self_hash"
export CGO_ENABLED=0 GOFLAGS=-buildvcs=false

t0=$SECONDS
if [ ! -x "$dir/actionlint" ]; then
  echo "test/act: building actionlint $ACTIONLINT_VERSION into $dir"
  work=$(mktemp -d)
  trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
  (cd "$work" && go mod download -json "$MODULE@$ACTIONLINT_VERSION") >"$work/download.json"
  src=$(sed -n "s|.*\"Dir\": \"\(.*@$ACTIONLINT_VERSION\)\".*|\1|p" "$work/download.json")
  [ -d "$src" ] || {
    echo "test/act: the Go module proxy did not serve $MODULE@$ACTIONLINT_VERSION (see $work/download.json)" >&2
    exit 1
  }
  cp -r "$src" "$work/src"
  chmod -R u+w "$work/src"
  (cd "$work/src" && { go build -trimpath -ldflags "-s -w" -o "$work/actionlint" ./cmd/actionlint ||
    { go mod tidy && go build -trimpath -ldflags "-s -w" -o "$work/actionlint" ./cmd/actionlint; }; })
  rm -rf "$dir"
  mkdir -p "$dir"
  mv "$work/actionlint" "$dir/"
  echo "$ACTIONLINT_VERSION" >"$dir/VERSION"
  # Keep the two newest builds.
  ls -dt "$cache_root"/actionlint-* 2>/dev/null | tail -n +3 | xargs -r rm -rf
  echo "test/act: actionlint built in $((SECONDS - t0))s"
else
  echo "test/act: actionlint cached at $dir"
fi

mkdir -p bin
ln -sfn "$dir/actionlint" bin/actionlint
echo "test/act: ready: $(pwd)/bin/actionlint ($ACTIONLINT_VERSION)"
