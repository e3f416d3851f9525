#!/usr/bin/env bash
# Builds the test cluster binary and the pinned tools the tests use, through the
# Go module proxy, cached under $HOME keyed by versions and sources, and links
# them into test/cluster/bin/. Prints timings; a warm run only links symlinks.
set -euo pipefail
# build_cluster runs in $(...): a failed go build there must stop the script too.
shopt -s inherit_errexit
cd "$(dirname "$0")"

# The Kubernetes of the test cluster: go.mod's (test/cluster/bin/testcluster, what the tests use unless told),
# and the oldest release teams still run (bin/testcluster-v1.34), built from this same module with its
# k8s.io requirements rewritten to that release (see build_from_release). CI runs the integration suite on both.
K8S_VERSION=v1.37.2
K8S_OLDEST=v1.34.4
KUSTOMIZE_VERSION=v5.8.1
SOPS_VERSION=v3.13.2
AGE_VERSION=v1.3.1

cache_root="${KR_CACHE_DIR:-$HOME/.cache/kr-testcluster}"
gover=$(go env GOVERSION)
src_hash=$(cat go.mod go.sum ./*.go build.sh | sha256sum | cut -c1-16)
tools_dir="$cache_root/tools-$gover-kustomize$KUSTOMIZE_VERSION-sops$SOPS_VERSION-age$AGE_VERSION"
grep -q "k8s.io/kubernetes $K8S_VERSION\$" go.mod || {
  echo "test/cluster: go.mod does not require k8s.io/kubernetes $K8S_VERSION (K8S_VERSION in build.sh)" >&2
  exit 1
}

export CGO_ENABLED=0 GOFLAGS=-buildvcs=false
t0=$SECONDS

# build_from_release DIR VERSION: rewrites the copy of this module in DIR to Kubernetes VERSION. The staging
# modules (k8s.io/api, client-go, ...) are the ones k8s.io/kubernetes VERSION itself replaces with ./staging,
# each taken at v0.MINOR.PATCH; etcd at the version that release requires; the rest as go mod tidy finds it.
build_from_release() {
  local dir=$1 version=$2 gomod staging etcd
  gomod=$(cd "$dir" && go mod download -json "k8s.io/kubernetes@$version" | sed -n 's|.*"GoMod": "\(.*\)".*|\1|p')
  [ -f "$gomod" ] || { echo "test/cluster: the Go module proxy did not serve k8s.io/kubernetes@$version" >&2; return 1; }
  staging="v0.${version#v1.}"
  etcd=$(sed -n 's|^\s*go.etcd.io/etcd/client/v3 \(v[0-9.]*\).*|\1|p' "$gomod" | head -1)
  {
    echo "module $(sed -n 's/^module //p' go.mod)"
    echo
    echo "go $(sed -n 's/^go //p' go.mod)"
    echo
    echo "require ("
    grep -E '^\s+(github.com/spf13/pflag|sigs.k8s.io/kwok) ' go.mod
    echo "	go.etcd.io/etcd/server/v3 $etcd"
    echo "	k8s.io/kubernetes $version"
    for m in api apimachinery client-go component-base; do echo "	k8s.io/$m $staging"; done
    echo ")"
    echo
    echo "replace ("
    sed -n 's|^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/.*|	\1 => \1 '"$staging"'|p' "$gomod"
    echo ")"
  } >"$dir/go.mod"
  (cd "$dir" && go mod tidy)
}

# build_cluster VERSION: the testcluster binary for that Kubernetes release, cached; prints its path.
build_cluster() {
  local version=$1 dir src v major minor ldflags tags="" kwok t=$SECONDS
  dir="$cache_root/cluster-$version-$gover-$src_hash"
  if [ -x "$dir/testcluster" ]; then
    echo "test/cluster: testcluster (kubernetes $version) cached at $dir" >&2
    echo "$dir/testcluster"
    return
  fi
  echo "test/cluster: building testcluster (kubernetes $version) into $dir" >&2
  src=.
  if [ "$version" != "$K8S_VERSION" ]; then
    src=$(mktemp -d)
    cp go.mod go.sum ./*.go "$src/"
    build_from_release "$src" "$version" >&2
  fi
  (cd "$src" && go mod download) >&2
  echo "test/cluster: modules downloaded in $((SECONDS - t))s" >&2
  mkdir -p "$dir"
  v=${version#v}; major=${v%%.*}; minor=${v#*.}; minor=${minor%%.*}
  if [ "$minor" -lt 36 ]; then
    # kwok's own code (v0.8.0, and v0.7.0 too) no longer compiles against the kubelet and CRI packages of
    # releases before 1.36: such a build leaves it out (-tags nokwok) and runs kwok built on its own,
    # with its own dependencies, installed beside it (kwok_external.go).
    tags=nokwok
    kwok=$(sed -n 's|^\s*sigs.k8s.io/kwok \(v[0-9.]*\).*|\1|p' go.mod)
    GOBIN="$dir" go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$kwok" >&2
  fi
  ldflags="-s -w -X main.k8sVersion=$version"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitVersion=$version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
    ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
  done
  (cd "$src" && go build -trimpath -tags "$tags" -ldflags "$ldflags" -o "$dir/testcluster.tmp" .) >&2
  mv "$dir/testcluster.tmp" "$dir/testcluster"
  [ "$src" = . ] || rm -rf "$src"
  # Keep the two newest builds of each release; each is ~130 MB.
  ls -dt "$cache_root"/cluster-"$version"-* 2>/dev/null | tail -n +3 | xargs -r rm -rf
  echo "test/cluster: testcluster (kubernetes $version) built in $((SECONDS - t))s ($(du -h "$dir/testcluster" | cut -f1))" >&2
  echo "$dir/testcluster"
}

cluster=$(build_cluster "$K8S_VERSION")
oldest=$(build_cluster "$K8S_OLDEST")
# Builds of releases this script no longer names.
for d in "$cache_root"/cluster-*; do
  case "$d" in "$cache_root/cluster-$K8S_VERSION-"* | "$cache_root/cluster-$K8S_OLDEST-"*) ;; *) rm -rf "$d" ;; esac
done

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
ln -sfn "$cluster" bin/testcluster
oldest_minor=${K8S_OLDEST%.*}
ln -sfn "$oldest" "bin/testcluster-$oldest_minor"
for t in kustomize sops age age-keygen; do ln -sfn "$tools_dir/$t" "bin/$t"; done
echo "test/cluster: ready in $((SECONDS - t0))s: $(pwd)/bin"
