#!/bin/bash
# What most Flux repositories are, on a running test cluster: an overlay over a base of N ConfigMaps
# listed in the base's kustomization.yaml; the overlay adds a Namespace, namespace:, a label and a JSON
# patch to every ConfigMap (issue #36's shape). Ours (dist/cli.js apply --path overlay) against what a
# kapp user runs (kustomize build overlay | kapp deploy -f -), each on its own copy of the tree and
# namespace, interleaved: a first apply, then RUNS no-op re-runs and RUNS one-change re-runs each,
# printing every run and the medians. Also kustomize build alone, the floor of every tool that runs it.
#   KC=/tmp/kc/kubeconfig N=1000 RUNS=5 bash bench/overlay/run.sh   (npm run cluster:up -- --tier b --dir /tmp/kc)
# kapp: $KAPP, else the one bench/peers.sh built (bash bench/peers.sh), else ours and kustomize alone.
set -euo pipefail
N=${N:-1000}
RUNS=${RUNS:-5}
KC=${KC:?set KC to the kubeconfig of a test cluster}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
export PATH=$REPO/test/cluster/bin:$PATH
NODE=$REPO/node_modules/.bin/node
KAPP=${KAPP:-$(ls -d "$HOME"/.cache/kr-bench/kapp-*/kapp 2>/dev/null | tail -1 || true)}
work=$(mktemp -d /tmp/overlay-XXXX)
stamp=$(date +%s)
# Everything printed goes to bench/results/overlay-<UTC date and time>.md too.
results="$REPO/bench/results/overlay-$(date -u +%Y-%m-%dT%H%MZ).md"
exec > >(tee "$results")

# tree DIR NS: the base and the overlay, in namespace NS.
tree() {
  local dir=$1 ns=$2
  mkdir -p "$dir/base" "$dir/overlay"
  {
    printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n'
    for i in $(seq 0 $((N - 1))); do printf -- '- cm-%d.yaml\n' "$i"; done
  } > "$dir/base/kustomization.yaml"
  for i in $(seq 0 $((N - 1))); do
    printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\ndata:\n  generation: "1"\n  app.properties: |\n    x=cm-%d\n    y=%s\n' \
      "$i" "$i" "$(printf 'v%.0s' $(seq 1 64))" > "$dir/base/cm-$i.yaml"
  done
  printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n' "$ns" > "$dir/overlay/ns.yaml"
  cat > "$dir/overlay/kustomization.yaml" <<YAML
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: $ns
labels:
  - pairs:
      bench: overlay
resources:
  - ns.yaml
  - ../base
patches:
  - target:
      kind: ConfigMap
    patch: |-
      - op: add
        path: /data/overlay
        value: "yes"
YAML
}

# change DIR GEN: one ConfigMap of the base edited.
change() { sed -i "s/^  generation: .*/  generation: \"$2\"/" "$1/base/cm-0.yaml"; }

# timed NAME CMD...: runs CMD, prints NAME, its wall time in ms and peak RSS; the ms go to $last.
timed() {
  local name=$1
  shift
  local t0 t1 rss
  t0=$(date +%s%N)
  /usr/bin/time -f '%M' -o "$work/time" bash -c '"$@"' _ "$@" > "$work/out" 2> "$work/err" || {
    echo "$name failed:" >&2
    tail -5 "$work/err" >&2
    exit 2
  }
  t1=$(date +%s%N)
  last=$(((t1 - t0) / 1000000))
  rss=$(tail -1 "$work/time")
  printf '    %-34s %6d ms  %4d MiB\n' "$name" "$last" $((rss / 1024))
}

median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }

ours() { "$NODE" "$REPO/dist/cli.js" apply --path overlay --root "$work/ours" --kubeconfig "$KC" --name ov-ours-$stamp; }
# The same with --build-cache (a directory outside the root, kept between the runs as actions/cache would).
cached() {
  "$NODE" "$REPO/dist/cli.js" apply --path overlay --root "$work/cached" --kubeconfig "$KC" --name ov-cached-$stamp \
    --build-cache "$work/cache"
}
kapp_deploy() {
  kustomize build "$work/kapp/overlay" | "$KAPP" deploy -a ov-kapp-$stamp -n ov-apps-$stamp -f - -y --wait=false \
    --kubeconfig "$KC" --color=false
}

export -f ours cached kapp_deploy
export NODE REPO KC KAPP work stamp

tree "$work/ours" ov-ours-$stamp
tree "$work/cached" ov-cached-$stamp
tree "$work/kapp" ov-kapp-$stamp
peers="ours cached"
if [ -n "$KAPP" ] && [ -x "$KAPP" ]; then
  peers="ours cached kapp"
  # kapp keeps its app record in a namespace of its own.
  mkdir -p "$work/apps"
  printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ov-apps-%s\n' "$stamp" > "$work/apps/ns.yaml"
  "$NODE" "$REPO/dist/cli.js" apply --path apps --root "$work" --kubeconfig "$KC" --name ov-apps-$stamp > /dev/null
else
  echo "kapp: none (set KAPP, or run bash bench/peers.sh); ours and kustomize alone" >&2
  KAPP=
fi
echo "    N = $N ConfigMaps in the base; $(nproc) cores; kustomize $(kustomize version 2>/dev/null)${KAPP:+; kapp $("$KAPP" version 2>/dev/null | sed -n 's/^kapp version //p' | head -1)}"

fn() { [ "$1" = kapp ] && echo kapp_deploy || echo "$1"; }
declare -A first noop one
for p in $peers; do
  timed "$p: first apply" "$(fn "$p")"
  first[$p]=$last
done
floor=()
for r in $(seq 1 "$RUNS"); do
  for p in $peers; do
    timed "$p: no-op re-run $r" "$(fn "$p")"
    noop[$p]="${noop[$p]:-} $last"
  done
  timed "kustomize build alone $r" kustomize build "$work/ours/overlay"
  floor+=("$last")
done
for r in $(seq 1 "$RUNS"); do
  for p in $peers; do
    change "$work/$p" $((r + 1))
    timed "$p: one change $r" "$(fn "$p")"
    one[$p]="${one[$p]:-} $last"
  done
done

echo
echo "| N = $N, overlay | ours | ours, --build-cache | kustomize build \\| kapp deploy | kustomize build alone |"
echo "|---|---:|---:|---:|---:|"
k_first=${first[kapp]:-}
k_noop=$([ -n "${noop[kapp]:-}" ] && median ${noop[kapp]} || true)
k_one=$([ -n "${one[kapp]:-}" ] && median ${one[kapp]} || true)
o_noop=$(median ${noop[ours]})
o_one=$(median ${one[ours]})
c_noop=$(median ${noop[cached]})
c_one=$(median ${one[cached]})
ratio() { [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN {printf " (%.2f×)", a / b}' || true; }
ms() { [ -n "$1" ] && echo "$1 ms" || echo "n/a"; }
echo "| first apply | ${first[ours]} ms$(ratio "${first[ours]}" "$k_first") | ${first[cached]} ms$(ratio "${first[cached]}" "$k_first") | $(ms "$k_first") | |"
echo "| no-op re-run (median of $RUNS) | $o_noop ms$(ratio "$o_noop" "$k_noop") | $c_noop ms$(ratio "$c_noop" "$k_noop") | $(ms "$k_noop") | $(median "${floor[@]}") ms |"
echo "| one change (median of $RUNS) | $o_one ms$(ratio "$o_one" "$k_one") | $c_one ms$(ratio "$c_one" "$k_one") | $(ms "$k_one") | |"
echo
echo "(bench/overlay/run.sh at $(git -C "$REPO" rev-parse --short HEAD), N=$N RUNS=$RUNS)"
rm -rf "$work"
