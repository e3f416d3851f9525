#!/bin/bash
# Flux's monorepo layout on a running test cluster: a parent Kustomization (clusters/prod/apps.yaml)
# whose build is N children's ks.yaml, patched by the parent (prune, interval, postBuild, a ConfigMap
# patch); each child's file leaves prune and interval to the parent. Times apply, a no-op re-run, one
# edit and one prune with dist/cli.js, printing one line each.
#   KC=/tmp/kc/kubeconfig N=60 bash bench/monorepo/run.sh      (npm run cluster:up -- --tier b --dir /tmp/kc)
set -euo pipefail
N=${N:-60}
KC=${KC:?set KC to the kubeconfig of a test cluster}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
export PATH=$REPO/test/cluster/bin:$PATH
CLI="$REPO/node_modules/.bin/node $REPO/dist/cli.js"
root=$(mktemp -d /tmp/monorepo-XXXX)
ns=mono-$(date +%s)
mkdir -p $root/clusters/prod $root/apps
cat > $root/clusters/prod/apps.yaml <<YAML
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: cluster-apps, namespace: $ns}
spec:
  interval: 10m
  prune: true
  path: ./apps
  sourceRef: {kind: GitRepository, name: flux-system, namespace: flux-system}
  patches:
    - target: {group: kustomize.toolkit.fluxcd.io, kind: Kustomization}
      patch: |
        - op: add
          path: /spec/prune
          value: true
        - op: add
          path: /spec/interval
          value: 1h
        - op: add
          path: /spec/postBuild
          value: {substitute: {TIER: gold, NS: $ns}}
        - op: add
          path: /spec/patches
          value:
            - target: {kind: ConfigMap}
              patch: |
                - op: add
                  path: /metadata/labels
                  value: {patched-by: cluster-apps}
YAML
{ echo "resources:"; echo "  - namespace.yaml"; for i in $(seq 1 $N); do echo "  - app$i/ks.yaml"; done; } > $root/apps/kustomization.yaml
printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n' $ns > $root/apps/namespace.yaml
for i in $(seq 1 $N); do
  mkdir -p $root/apps/app$i/app
  printf 'apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: app%s, namespace: '"$ns"'}\nspec:\n  path: ./apps/app%s/app\n  sourceRef: {kind: GitRepository, name: flux-system, namespace: flux-system}\n' $i $i > $root/apps/app$i/ks.yaml
  printf 'resources: [config.yaml, extra.yaml]\n' > $root/apps/app$i/app/kustomization.yaml
  printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app%s-config\n  namespace: ${NS}\ndata:\n  tier: "${TIER:=none}"\n  n: "%s"\n' $i $i > $root/apps/app$i/app/config.yaml
  printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app%s-extra\n  namespace: ${NS}\ndata:\n  x: "1"\n' $i > $root/apps/app$i/app/extra.yaml
done
step() {
  local name=$1; shift
  local t0=$(date +%s%N)
  local out; out=$($CLI apply --root $root --kubeconfig $KC --kustomizations 'clusters/prod/*.yaml,apps/*/ks.yaml' 2>&1) || true
  local t1=$(date +%s%N)
  local last; last=$(echo "$out" | grep -E "^(Applied|Failed)" | tail -1 | cut -c1-160)
  printf '%-8s %6d ms  %s\n' "$name" $(( (t1-t0)/1000000 )) "$last"
}
step apply
step no-op
sed -i 's/n: "1"/n: "edited"/' $root/apps/app1/app/config.yaml
step edit
printf 'resources: [config.yaml]\n' > $root/apps/app2/app/kustomization.yaml
step prune
echo "root: $root  namespace: $ns"
