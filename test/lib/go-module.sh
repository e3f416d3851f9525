# Sourced by test/*/build.sh: a pinned Go module's command built from the Go module proxy into a cache.
#
# go_module_binary TAG MODULE VERSION PACKAGE BINARY CACHE_ROOT KEY
#   Builds PACKAGE (e.g. ./cmd/registry) of MODULE@VERSION as BINARY into
#   CACHE_ROOT/BINARY-VERSION-GOVERSION-KEY, unless it is there, and sets GO_MODULE_DIR to that
#   directory; TAG prefixes its lines, KEY is the caller's (a hash of its build script). Why not
#   `go install`: it is built as the main module from a copy of the module, so that the module's own
#   go.mod and go.sum decide its dependencies (as its release build does); `go mod tidy` runs only
#   when they do not cover the build as it is. The directory also gets a VERSION file, and only the
#   two newest builds of BINARY are kept.
go_module_binary() {
  local tag=$1 module=$2 version=$3 pkg=$4 bin=$5 cache_root=$6 key=$7
  local dir="$cache_root/$bin-$version-$(go env GOVERSION)-$key"
  local t0=$SECONDS work src
  GO_MODULE_DIR=$dir
  if [ -x "$dir/$bin" ]; then
    echo "$tag: $bin cached at $dir"
    return
  fi
  echo "$tag: building $bin $version into $dir"
  work=$(mktemp -d)
  # shellcheck disable=SC2064 # the directory is known now
  trap "chmod -R u+w '$work' 2>/dev/null; rm -rf '$work'" EXIT
  (cd "$work" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false go mod download -json "$module@$version") >"$work/download.json"
  src=$(sed -n "s|.*\"Dir\": \"\(.*@$version\)\".*|\1|p" "$work/download.json")
  [ -d "$src" ] || {
    echo "$tag: the Go module proxy did not serve $module@$version (see $work/download.json)" >&2
    exit 1
  }
  cp -r "$src" "$work/src"
  chmod -R u+w "$work/src"
  (cd "$work/src" && export CGO_ENABLED=0 GOFLAGS=-buildvcs=false &&
    { go build -trimpath -ldflags "-s -w" -o "$work/$bin" "$pkg" ||
      { go mod tidy && go build -trimpath -ldflags "-s -w" -o "$work/$bin" "$pkg"; }; })
  rm -rf "$dir"
  mkdir -p "$dir"
  mv "$work/$bin" "$dir/"
  echo "$version" >"$dir/VERSION"
  chmod -R u+w "$work" 2>/dev/null
  rm -rf "$work"
  trap - EXIT
  # Keep the two newest builds.
  ls -dt "$cache_root/$bin"-* 2>/dev/null | tail -n +3 | xargs -r rm -rf
  echo "$tag: $bin built in $((SECONDS - t0))s"
}
