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
#
# Why the replaces appended to its go.mod: the Go module proxy here refuses (403) the zips of some
# modules v1.10.1 requires. Each is swapped for a version it serves or for our own code:
#   github.com/fluxcd/pkg/spiffe (+ /broker)    standin/spiffe: the flag names; every SPIFFE feature
#                                                (mTLS, the SPIFFE Broker) refused at start-up
#   github.com/fluxcd/pkg/apis/crypto/v1        standin/crypto: the object-identity spec for what parity
#                                                reaches (no annotations; the kubernetes credential with
#                                                audiences); aws/azure/gcp, spiffe and the Vault
#                                                transit-engine annotations refused by name when used
#   github.com/fluxcd/pkg/http/fetch v0.30.1    standin/fetch: v0.25.0 (served) plus the two names v1.10
#                                                added (ErrDigestMismatch recognised; WithTLSConfig, SPIFFE)
#   github.com/fluxcd/pkg/masktoken v0.10.0     v0.9.0 (served, the same API)
#   github.com/opencontainers/go-digest/blake3  the version fetch v0.25.0 uses (the newer one is refused)
#   github.com/fluxcd/pkg/testserver v0.15.0    v0.14.0 (tests only; the copy's tests are removed anyway)
# The stand-ins are this project's code (test/flux/standin/README.md); nothing of Flux's is copied.
set -euo pipefail
cd "$(dirname "$0")"

KC_VERSION=v1.10.1
# The source-controller whose API kustomize-controller v1.10.1 requires (its go.mod: source-controller/api
# v1.10.0); its module carries the source CRD manifests the api module lacks.
SC_VERSION=v1.10.0
# The flux CLI: the proxy serves flux2/v2 v2.6.4 and v2.9.5 only, so v2.9.5, the newest (Flux v2.9, whose
# kustomize-controller is v1.9); no Flux release with kustomize-controller v1.10 is served.
CLI_VERSION=v2.9.5
# kustomize-controller v1.10 needs Go 1.27 (its go.mod: go 1.27.0), and the Go module proxy serves the
# go1.27.3 toolchain. Exported for this script only: the project's own Go stays as it is.
export GOTOOLCHAIN=go1.27.3
standin="$(pwd)/standin"

cache_root="${KR_FLUX_CACHE_DIR:-$HOME/.cache/kr-flux}"
gover=$(go env GOVERSION)
self_hash=$(sha256sum build.sh | cut -c1-12)
# The controller's key also covers the stand-ins it is built with (the flux CLI's does not).
kc_hash=$( (sha256sum build.sh && cd standin && find . -type f | LC_ALL=C sort | xargs sha256sum) |
  sha256sum | cut -c1-12)
dir="$cache_root/kustomize-controller-$KC_VERSION-$gover-$kc_hash"
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
  cat >>"$work/kc/go.mod" <<EOF

// Added by kustomize-reconcile's test/flux/build.sh (see there).
replace (
	github.com/fluxcd/pkg/spiffe => $standin/spiffe
	github.com/fluxcd/pkg/apis/crypto => $standin/crypto
	github.com/fluxcd/pkg/http/fetch => $standin/fetch
	kr.invalid/fluxcd/pkg/http/fetch => github.com/fluxcd/pkg/http/fetch v0.25.0
	github.com/fluxcd/pkg/masktoken => github.com/fluxcd/pkg/masktoken v0.9.0
	github.com/opencontainers/go-digest/blake3 => github.com/opencontainers/go-digest/blake3 v0.0.0-20250116041648-1e56c6daea3b
	github.com/fluxcd/pkg/testserver => github.com/fluxcd/pkg/testserver v0.14.0
)
EOF
  # Its tests import modules the proxy refuses, and `go mod tidy` resolves the imports of tests too.
  find "$work/kc" -name '*_test.go' -delete
  rm -rf "$work/kc/tests"
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

# The flux CLI (flux build/diff kustomization, to compare `build` output with), best effort: the suite
# does not need it. Its cmd/flux embeds install manifests that its Makefile generates (`manifests/*.yaml`);
# they are not in the module, so a placeholder stands in: `flux install` is the one command it loses.
cli_dir="$cache_root/flux-cli-$CLI_VERSION-$gover-$self_hash"
if [ ! -x "$cli_dir/flux" ] && [ ! -f "$cli_dir/FAILED" ]; then
  t1=$SECONDS
  echo "test/flux: building the flux CLI $CLI_VERSION into $cli_dir"
  mkdir -p "$cli_dir"
  work=$(mktemp -d)
  trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
  if src=$(cd "$work" && go mod download -json "github.com/fluxcd/flux2/v2@$CLI_VERSION" |
    sed -n 's|.*"Dir": "\(.*\)".*|\1|p') && [ -d "$src" ]; then
    cp -r "$src" "$work/cli" && chmod -R u+w "$work/cli"
    mkdir -p "$work/cli/cmd/flux/manifests"
    echo '# placeholder for the generated install manifests (flux install is not used)' >"$work/cli/cmd/flux/manifests/placeholder.yaml"
    if (cd "$work/cli" && go build -trimpath -ldflags "-s -w -X main.VERSION=${CLI_VERSION#v}" -o "$cli_dir/flux" ./cmd/flux) >"$cli_dir/build.log" 2>&1; then
      echo "test/flux: flux CLI built in $((SECONDS - t1))s"
    else
      echo "go build failed: $(tail -1 "$cli_dir/build.log")" >"$cli_dir/FAILED"
    fi
  else
    echo "the Go module proxy did not serve github.com/fluxcd/flux2/v2@$CLI_VERSION" >"$cli_dir/FAILED"
  fi
  [ -f "$cli_dir/FAILED" ] && echo "test/flux: no flux CLI: $(cat "$cli_dir/FAILED") (not needed by the tests)"
fi

mkdir -p bin
ln -sfn "$dir/kustomize-controller" bin/kustomize-controller
ln -sfn "$dir/crds" bin/crds
if [ -x "$cli_dir/flux" ]; then ln -sfn "$cli_dir/flux" bin/flux; else rm -f bin/flux; fi
echo "test/flux: ready: $(pwd)/bin (kustomize-controller $KC_VERSION$([ -x "$cli_dir/flux" ] && echo ", flux CLI $CLI_VERSION"))"
