#!/usr/bin/env bash
# Builds the real Flux kustomize-controller (pinned) from the Go module proxy, and collects the CRDs it
# needs (its own Kustomization, and the source CRDs it watches), cached under $HOME and linked into
# test/flux/bin/. The parity suite (`npm run parity`) and the benchmark run it out of cluster against a
# test cluster as an oracle and a peer. Nothing built here is committed.
#
# Why not `go install`: the module's go.mod has a `replace ./api` directive (the nested api module is not
# in the module zip), which `go install mod@version` refuses. So the module is copied, that one replace is
# dropped (the proxy serves github.com/fluxcd/kustomize-controller/api at the same version), and it is
# built as the main module.
set -euo pipefail
cd "$(dirname "$0")"

# v1.10.x needs fluxcd/pkg versions that the module proxy here refuses; v1.9.6 is the newest that builds.
KC_VERSION=v1.9.6
# The source-controller whose API kustomize-controller v1.9.6 requires (its go.mod: source-controller/api
# v1.9.0); its module carries the source CRD manifests the api module lacks.
SC_VERSION=v1.9.0

cache_root="${KR_FLUX_CACHE_DIR:-$HOME/.cache/kr-flux}"
gover=$(go env GOVERSION)
self_hash=$(sha256sum build.sh | cut -c1-12)
dir="$cache_root/kustomize-controller-$KC_VERSION-$gover-$self_hash"
export CGO_ENABLED=0 GOFLAGS=-buildvcs=false

t0=$SECONDS
if [ ! -x "$dir/kustomize-controller" ] || [ ! -d "$dir/crds" ]; then
  echo "test/flux: building kustomize-controller $KC_VERSION into $dir"
  work=$(mktemp -d)
  trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
  (cd "$work" && go mod download -json "github.com/fluxcd/kustomize-controller@$KC_VERSION" \
    "github.com/fluxcd/source-controller@$SC_VERSION") >"$work/download.json"
  kc_src=$(sed -n "s|.*\"Dir\": \"\(.*kustomize-controller@$KC_VERSION\)\".*|\1|p" "$work/download.json")
  sc_src=$(sed -n "s|.*\"Dir\": \"\(.*source-controller@$SC_VERSION\)\".*|\1|p" "$work/download.json")
  [ -d "$kc_src" ] && [ -d "$sc_src" ] || {
    echo "test/flux: the Go module proxy did not serve the modules (see $work/download.json)" >&2
    exit 1
  }
  cp -r "$kc_src" "$work/kc"
  chmod -R u+w "$work/kc"
  sed -i '\|^replace github.com/fluxcd/kustomize-controller/api => ./api|d' "$work/kc/go.mod"
  (cd "$work/kc" && go mod tidy && go build -trimpath -ldflags "-s -w" -o "$work/kustomize-controller" .)
  mkdir -p "$work/crds"
  cp "$kc_src/config/crd/bases/"*.yaml "$work/crds/"
  for kind in gitrepositories ocirepositories buckets externalartifacts; do
    cp "$sc_src/config/crd/bases/source.toolkit.fluxcd.io_$kind.yaml" "$work/crds/"
  done
  chmod -R u+w "$work/crds"
  rm -rf "$dir"
  mkdir -p "$dir"
  mv "$work/kustomize-controller" "$work/crds" "$dir/"
  echo "$KC_VERSION" >"$dir/VERSION"
  # Keep the two newest builds.
  ls -dt "$cache_root"/kustomize-controller-* 2>/dev/null | tail -n +3 | xargs -r rm -rf
  echo "test/flux: kustomize-controller built in $((SECONDS - t0))s"
else
  echo "test/flux: kustomize-controller cached at $dir"
fi

mkdir -p bin
ln -sfn "$dir/kustomize-controller" bin/kustomize-controller
ln -sfn "$dir/crds" bin/crds
echo "test/flux: ready: $(pwd)/bin (kustomize-controller $KC_VERSION)"
