#!/usr/bin/env bash
# Builds the test cluster binary and the pinned tools the tests use, through the
# Go module proxy, cached under $HOME keyed by versions and sources, and links
# them into test/cluster/bin/. Prints timings; a warm run only links symlinks.
set -euo pipefail
cd "$(dirname "$0")"

K8S_VERSION=v1.36.3
KUSTOMIZE_VERSION=v5.8.1
SOPS_VERSION=v3.13.2
AGE_VERSION=v1.3.1

cache_root="${KR_CACHE_DIR:-$HOME/.cache/kr-testcluster}"
gover=$(go env GOVERSION)
src_hash=$(cat go.mod go.sum ./*.go | sha256sum | cut -c1-16)
cluster_dir="$cache_root/cluster-$K8S_VERSION-$gover-$src_hash"
tools_dir="$cache_root/tools-$gover-kustomize$KUSTOMIZE_VERSION-sops$SOPS_VERSION-age$AGE_VERSION"

export CGO_ENABLED=0 GOFLAGS=-buildvcs=false
t0=$SECONDS
if [ ! -x "$cluster_dir/testcluster" ]; then
  echo "test/cluster: building testcluster (kubernetes $K8S_VERSION) into $cluster_dir"
  go mod download
  echo "test/cluster: modules downloaded in $((SECONDS - t0))s"
  mkdir -p "$cluster_dir"
  v=${K8S_VERSION#v}; major=${v%%.*}; minor=${v#*.}; minor=${minor%%.*}
  ldflags="-s -w -X main.k8sVersion=$K8S_VERSION"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
    ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
  done
  go build -trimpath -ldflags "$ldflags" -o "$cluster_dir/testcluster.tmp" .
  mv "$cluster_dir/testcluster.tmp" "$cluster_dir/testcluster"
  # Keep the two newest builds; each is ~130 MB.
  ls -dt "$cache_root"/cluster-* 2>/dev/null | tail -n +3 | xargs -r rm -rf
  echo "test/cluster: testcluster built in $((SECONDS - t0))s ($(du -h "$cluster_dir/testcluster" | cut -f1))"
else
  echo "test/cluster: testcluster cached at $cluster_dir"
fi

t1=$SECONDS
if [ ! -x "$tools_dir/kustomize" ] || [ ! -x "$tools_dir/sops" ] || [ ! -x "$tools_dir/age" ] || [ ! -x "$tools_dir/age-keygen" ]; then
  echo "test/cluster: installing kustomize $KUSTOMIZE_VERSION, sops $SOPS_VERSION, age $AGE_VERSION into $tools_dir"
  mkdir -p "$tools_dir"
  GOBIN="$tools_dir" go install -trimpath -ldflags "-s -w" \
    "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION"
  GOBIN="$tools_dir" go install -trimpath -ldflags "-s -w" \
    "github.com/getsops/sops/v3/cmd/sops@$SOPS_VERSION"
  GOBIN="$tools_dir" go install -trimpath -ldflags "-s -w" \
    "filippo.io/age/cmd/age@$AGE_VERSION" "filippo.io/age/cmd/age-keygen@$AGE_VERSION"
  echo "test/cluster: tools installed in $((SECONDS - t1))s"
else
  echo "test/cluster: tools cached at $tools_dir"
fi

mkdir -p bin
ln -sfn "$cluster_dir/testcluster" bin/testcluster
for t in kustomize sops age age-keygen; do ln -sfn "$tools_dir/$t" "bin/$t"; done
echo "test/cluster: ready in $((SECONDS - t0))s: $(pwd)/bin"
