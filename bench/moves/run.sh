#!/bin/bash
# What looking for moves costs a fan-out job (issue #37): N Kustomizations of M ConfigMaps each in
# one repository, applied once; then single-Kustomization jobs (apply --select, as a fan-out matrix
# entry runs), two whose Kustomization changed an object (no prune) and two whose Kustomization lost
# one (its prune first asks the N-1 other builds whether they have it now, each rendered once).
# KIND=plain builds in process; KIND=kustomize adds commonLabels, so every build runs kustomize.
#   KC=/tmp/kc/kubeconfig N=100 M=20 KIND=plain bash bench/moves/run.sh   (npm run cluster:up -- --tier b --dir /tmp/kc)
set -euo pipefail
N=${N:-100}
M=${M:-20}
KIND=${KIND:-plain}
KC=${KC:?set KC to the kubeconfig of a test cluster}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
NODE=$REPO/node_modules/.bin/node
ROOT=$(mktemp -d)
NS=moves-$RANDOM
cli() { (cd "$ROOT" && "$NODE" "$REPO/dist/cli.js" "$@" --kubeconfig "$KC" --kustomize-path "$REPO/test/cluster/bin/kustomize"); }
ms() {
  local start
  start=$(date +%s%N)
  "$@" >/dev/null 2>&1 || echo "failed: $*" >&2
  echo $((($(date +%s%N) - start) / 1000000))
}
drop_first() { "$NODE" -e 'const f=process.argv[1],fs=require("fs");fs.writeFileSync(f,fs.readFileSync(f,"utf8").split("---\n").slice(1).join("---\n"))' "$1"; }
NSDIR=$(mktemp -d)
trap 'rm -rf "$ROOT" "$NSDIR"' EXIT
printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n' "$NS" >"$NSDIR/ns.yaml"
for i in $(seq 0 $((N - 1))); do
  mkdir -p "$ROOT/apps/k$i"
  for j in $(seq 0 $((M - 1))); do
    printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: k%s-c%s, namespace: %s}\ndata: {a: "%s"}\n---\n' "$i" "$j" "$NS" "$j"
  done >"$ROOT/apps/k$i/cms.yaml"
  [ "$KIND" = kustomize ] && printf 'resources: [cms.yaml]\ncommonLabels: {team: k%s}\n' "$i" >"$ROOT/apps/k$i/kustomization.yaml"
  printf 'apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: k%s, namespace: %s}\nspec: {interval: 10m, prune: true, path: ./apps/k%s, sourceRef: {kind: GitRepository, name: repo}}\n---\n' "$i" "$NS" "$i" >>"$ROOT/ks.yaml"
done
(cd "$ROOT" && git init -q && git add -A && git -c user.email=bench@example.com -c user.name=bench commit -qm tree)
(cd "$NSDIR" && "$NODE" "$REPO/dist/cli.js" apply --path . --name "$NS" --kubeconfig "$KC" --kustomize-path "$REPO/test/cluster/bin/kustomize" >/dev/null)
echo "moves bench: $N Kustomizations x $M ConfigMaps, builds: $KIND"
echo "first apply, one job: $(ms cli apply --kustomizations ks.yaml) ms"
for k in 1 2; do
  sed -i "s/data: {a: \"$k\"}/data: {a: \"changed\"}/" "$ROOT/apps/k$k/cms.yaml"
  echo "job k$k, one object changed (no prune): $(ms cli apply --kustomizations ks.yaml --select "$NS/k$k") ms"
done
for k in 0 3; do
  drop_first "$ROOT/apps/k$k/cms.yaml"
  echo "job k$k, one object removed (prune; $((N - 1)) other builds asked): $(ms cli apply --kustomizations ks.yaml --select "$NS/k$k") ms"
done
