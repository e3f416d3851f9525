#!/usr/bin/env bash
# Builds (once) and caches the peer tools the benchmark compares against, then prints one line per tool
# on stdout:  <tool>\t<path to binary or "-">\t<version or reason it is unavailable>
# Called by bench/run.ts (buildPeers, bench/run/peers.ts); safe to run by hand:  bash bench/peers.sh
#
# Cache: ${KR_BENCH_CACHE:-$HOME/.cache/kr-bench}/<tool>-<version>[/...]. Nothing else is written
# (test/cluster/go.mod and go.sum are never modified: kubectl is built in a temporary copy), except by
# test/flux/build.sh, which caches Flux's kustomize-controller under ~/.cache/kr-flux and links test/flux/bin.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
cache="${KR_BENCH_CACHE:-$HOME/.cache/kr-bench}"
mkdir -p "$cache"
export CGO_ENABLED=0 GOFLAGS=-buildvcs=false
log="$cache/peers.log"
: >"$log"

# ---------------------------------------------------------------- kubectl, from the cluster's own k8s.io/kubernetes
kubectl_line() {
  local version bin tmp
  version="$(awk '$1 == "k8s.io/kubernetes" { print $2; exit }' "$repo/test/cluster/go.mod")"
  if [ -z "$version" ]; then
    printf 'kubectl\t-\tk8s.io/kubernetes not found in test/cluster/go.mod\n'
    return
  fi
  bin="$cache/kubectl-$version"
  if [ ! -x "$bin" ]; then
    echo "peers: building kubectl $version (k8s.io/kubernetes/cmd/kubectl, test/cluster's module graph)..." >&2
    # Try in place first (works when go.sum already covers kubectl's imports), else in a temporary copy
    # where `go get` may add the missing go.sum entries without touching the repository.
    # Stamp the version as the Kubernetes release does (else kubectl says v0.0.0-master).
    local minor="${version#v1.}"
    minor="${minor%%.*}"
    local ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$version"
    ldflags+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
    ldflags+=" -X k8s.io/client-go/pkg/version.gitVersion=$version"
    if ! (cd "$repo/test/cluster" && go build -ldflags "$ldflags" -o "$bin.tmp" k8s.io/kubernetes/cmd/kubectl) >>"$log" 2>&1; then
      tmp="$(mktemp -d)"
      cp "$repo/test/cluster/go.mod" "$repo/test/cluster/go.sum" "$tmp/"
      printf 'package main\n\nfunc main() {}\n' >"$tmp/main.go"
      if ! (cd "$tmp" && go get "k8s.io/kubernetes/cmd/kubectl@$version" &&
        go build -ldflags "$ldflags" -o "$bin.tmp" k8s.io/kubernetes/cmd/kubectl) >>"$log" 2>&1; then
        rm -rf "$tmp"
        printf 'kubectl\t-\tbuild failed, see %s\n' "$log"
        return
      fi
      rm -rf "$tmp"
    fi
    mv "$bin.tmp" "$bin"
  fi
  printf 'kubectl\t%s\t%s\n' "$bin" "$("$bin" version --client -o json 2>/dev/null |
    sed -n 's/.*"gitVersion": *"\([^"]*\)".*/\1/p' | head -1)"
}

# ---------------------------------------------------------------- kapp (Carvel)
# The Go module proxy refuses carvel.dev/kapp (and its older paths), so kapp comes from, in order:
#   $KR_KAPP      a kapp binary;
#   $KR_KAPP_SRC  a checkout of github.com/carvel-dev/kapp (it vendors every dependency);
#   $KR_KAPP_MIRROR (default /work/.mirror/carvel-dev+kapp/repo) a git directory of that repository, whose HEAD
#                 is built.
# A build from source is cached as $cache/kapp-<tag or commit>/kapp.
kapp_mirror="${KR_KAPP_MIRROR:-/work/.mirror/carvel-dev+kapp/repo}"
kapp_how='set KR_KAPP to a kapp binary, or KR_KAPP_SRC to a checkout of github.com/carvel-dev/kapp (git clone https://github.com/carvel-dev/kapp), or KR_KAPP_MIRROR to a git directory of it; a release binary is at https://github.com/carvel-dev/kapp/releases'

kapp_version_of() { "$1" version 2>/dev/null | sed -n 's/^kapp version //p' | head -1; }

kapp_line() {
  local bin version src tmp gitdir need have
  if [ -n "${KR_KAPP:-}" ]; then
    if [ ! -x "$KR_KAPP" ]; then
      printf 'kapp\t-\tKR_KAPP=%s is not an executable file; %s\n' "$KR_KAPP" "$kapp_how"
      return
    fi
    printf 'kapp\t%s\t%s\n' "$KR_KAPP" "$(kapp_version_of "$KR_KAPP")"
    return
  fi
  if [ -n "${KR_KAPP_SRC:-}" ]; then
    src="$KR_KAPP_SRC"
    if [ ! -f "$src/go.mod" ] || [ ! -d "$src/cmd/kapp" ]; then
      printf 'kapp\t-\tKR_KAPP_SRC=%s is not a checkout of github.com/carvel-dev/kapp (no go.mod or cmd/kapp); %s\n' "$src" "$kapp_how"
      return
    fi
    version="$(git -C "$src" describe --tags --always 2>/dev/null || echo src)"
  elif git --git-dir="$kapp_mirror" rev-parse --verify -q HEAD >/dev/null 2>&1; then
    gitdir="$kapp_mirror"
    version="$(git --git-dir="$gitdir" describe --tags --always HEAD 2>/dev/null)"
  else
    printf 'kapp\t-\tno kapp binary or source (the Go module proxy refuses carvel.dev/kapp); %s\n' "$kapp_how"
    return
  fi
  bin="$cache/kapp-$version/kapp"
  if [ ! -x "$bin" ]; then
    echo "peers: building kapp $version from ${src:-$gitdir} (go build -mod=vendor ./cmd/kapp; a few minutes on 2 cores)..." >&2
    tmp=""
    if [ -n "${gitdir:-}" ]; then
      tmp="$(mktemp -d)"
      git --git-dir="$gitdir" archive HEAD | tar -x -C "$tmp"
      src="$tmp"
    fi
    # kapp's go.mod names a go version; past the machine's, GOTOOLCHAIN=go1.27.3 is the route to a newer Go.
    local toolchain="" module ldflags
    need="$(awk '$1 == "go" { print $2; exit }' "$src/go.mod")"
    have="$(go env GOVERSION | sed 's/^go//')"
    [ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | tail -1)" = "$have" ] || toolchain=go1.27.3
    mkdir -p "$cache/kapp-$version"
    # Stamp the version as kapp's hack/build.sh does (the module path is still github.com/vmware-tanzu/carvel-kapp).
    module="$(awk '$1 == "module" { print $2; exit }' "$src/go.mod")"
    ldflags="-s -w -X $module/pkg/kapp/version.Version=${version#v}"
    if ! (if [ -n "$toolchain" ]; then export GOTOOLCHAIN="$toolchain"; fi
      cd "$src" && go build -mod=vendor -trimpath -ldflags "$ldflags" -o "$bin.tmp" ./cmd/kapp) >>"$log" 2>&1; then
      [ -z "$tmp" ] || rm -rf "$tmp"
      printf 'kapp\t-\tgo build -mod=vendor ./cmd/kapp of %s failed (see %s); %s\n' "$version" "$log" "$kapp_how"
      return
    fi
    [ -z "$tmp" ] || rm -rf "$tmp"
    mv "$bin.tmp" "$bin"
  fi
  printf 'kapp\t%s\t%s\n' "$bin" "$(kapp_version_of "$bin")"
}

# ---------------------------------------------------------------- Flux kustomize-controller
# Built by test/flux/build.sh (the pinned v1.10.1 from the Go module proxy, cached under ~/.cache/kr-flux,
# linked as test/flux/bin/kustomize-controller); bench/run/flux.ts starts it out of cluster (test/flux/flux.ts).
flux_line() {
  local bin="$repo/test/flux/bin/kustomize-controller" version
  if ! bash "$repo/test/flux/build.sh" >>"$log" 2>&1 || [ ! -x "$bin" ]; then
    printf 'kustomize-controller\t-\tbash test/flux/build.sh failed: %s\n' "$(tail -1 "$log")"
    return
  fi
  version="$(cat "$(dirname "$(readlink -f "$bin")")/VERSION" 2>/dev/null || echo unknown)"
  printf 'kustomize-controller\t%s\t%s\n' "$bin" "$version"
}

kubectl_line
kapp_line
flux_line
