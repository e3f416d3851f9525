#!/usr/bin/env bash
# Builds (once) and caches the peer tools the benchmark compares against, then prints one line per tool
# on stdout:  <tool>\t<path to binary or "-">\t<version or reason it is unavailable>
# Called by bench/run.ts; safe to run by hand:  bash bench/peers.sh
#
# Cache: ${KR_BENCH_CACHE:-$HOME/.cache/kr-bench}/<tool>-<version>[/...]. Nothing outside it is written
# (test/cluster/go.mod and go.sum are never modified: kubectl is built in a temporary copy).
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
kapp_line() {
  local version bin err
  # The proxy may not serve it (it answers 403 for carvel.dev/kapp here); try the module paths kapp has had.
  for mod in carvel.dev/kapp github.com/carvel-dev/kapp github.com/vmware-tanzu/carvel-kapp github.com/k14s/kapp; do
    version="$(cd "$cache" && GOFLAGS=-mod=mod go list -m -versions "$mod" 2>>"$log" | tr ' ' '\n' |
      grep -E '^v[0-9]+\.[0-9]+\.[0-9]+$' | sort -V | tail -1 || true)"
    [ -n "$version" ] && break
  done
  if [ -z "$version" ]; then
    err="$(grep -m1 -o '[0-9]\{3\} [A-Za-z ]*' "$log" || true)"
    printf 'kapp\t-\tnot served by the Go module proxy (go list -m -versions carvel.dev/kapp: %s)\n' "${err:-no versions}"
    return
  fi
  bin="$cache/kapp-$version/kapp"
  if [ ! -x "$bin" ]; then
    echo "peers: building kapp $version ($mod)..." >&2
    if ! GOBIN="$cache/kapp-$version" go install "$mod/cmd/kapp@$version" >>"$log" 2>&1; then
      printf 'kapp\t-\tgo install %s/cmd/kapp@%s failed: %s\n' "$mod" "$version" "$(tail -1 "$log")"
      return
    fi
  fi
  printf 'kapp\t%s\t%s\n' "$bin" "$version"
}

# ---------------------------------------------------------------- Flux kustomize-controller
flux_line() {
  local mod=github.com/fluxcd/kustomize-controller version out
  version="$(cd "$cache" && go list -m -versions "$mod" 2>>"$log" | tr ' ' '\n' | sort -V | tail -1 || true)"
  if [ -z "$version" ]; then
    printf 'kustomize-controller\t-\tnot served by the Go module proxy\n'
    return
  fi
  # `go install mod@version` refuses a module whose go.mod has replace directives, whatever the Go version.
  local gomod replaces
  gomod="$(cd "$cache" && go mod download -json "$mod@$version" 2>>"$log" | sed -n 's/.*"GoMod": *"\([^"]*\)".*/\1/p' || true)"
  replaces="$(grep -cE '^replace|=>' "$gomod" 2>/dev/null || true)"
  out="$(cd "$cache" && GOBIN="$cache/kustomize-controller-$version" go install "$mod@$version" 2>&1 | tail -1 || true)"
  # A controller, not a CLI: even when it builds it reconciles Kustomization objects whose source is a
  # source-controller artifact (an HTTP tarball + GitRepository/OCIRepository status). It is recorded, not run.
  printf 'kustomize-controller\t-\t%s: go install fails (%s); its go.mod has replace directives (%s lines), which go install pkg@version refuses; and it is a controller, not a one-shot CLI (it needs a Kustomization CR and a source-controller artifact server)\n' \
    "$version" "${out:-built}" "$replaces"
}

kubectl_line
kapp_line
flux_line
