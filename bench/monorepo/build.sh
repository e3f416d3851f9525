#!/bin/bash
# Writes a home-ops-like repository (onedr0p/home-ops' layout): a parent Kustomization cluster-apps
# (kubernetes/flux/apps.yaml) building N apps' ks.yaml under eight namespaces, patching every child with
# HelmRelease defaults and substituting; each app a kustomization.yaml with a HelmRelease and a
# configMapGenerator. Then times `build` of all N + 1 (no cluster needed):
#   N=78 bash bench/monorepo/build.sh [ROOT]
set -euo pipefail
N=${N:-78}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
root=${1:-$(mktemp -d /tmp/kr-build-monorepo-XXXX)}
rm -rf $root; mkdir -p $root/kubernetes/flux $root/kubernetes/apps
cat > $root/kubernetes/flux/apps.yaml <<YAML
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: cluster-apps, namespace: flux-system}
spec:
  interval: 30m
  prune: true
  path: ./kubernetes/apps
  sourceRef: {kind: GitRepository, name: home-kubernetes}
  postBuild:
    substitute: {CLUSTER: home}
  patches:
    - target: {group: kustomize.toolkit.fluxcd.io, kind: Kustomization}
      patch: |
        apiVersion: kustomize.toolkit.fluxcd.io/v1
        kind: Kustomization
        metadata: {name: not-used}
        spec:
          decryption: {provider: sops, secretRef: {name: sops-age}}
          postBuild:
            substitute: {CLUSTER: "\${CLUSTER}"}
          patches:
            - target: {group: helm.toolkit.fluxcd.io, kind: HelmRelease}
              patch: |
                apiVersion: helm.toolkit.fluxcd.io/v2
                kind: HelmRelease
                metadata: {name: not-used}
                spec:
                  install: {crds: CreateReplace, remediation: {retries: 3}}
                  upgrade: {cleanupOnFail: true, crds: CreateReplace, remediation: {retries: 3}}
YAML
nss=(default media network monitoring database security kube-system observability)
{ echo "resources:"; for n in "${nss[@]}"; do echo "  - ./$n"; done; } > $root/kubernetes/apps/kustomization.yaml
for n in "${nss[@]}"; do mkdir -p $root/kubernetes/apps/$n; printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: %s\nresources:\n  - ./namespace.yaml\n' $n > $root/kubernetes/apps/$n/kustomization.yaml; printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n' $n > $root/kubernetes/apps/$n/namespace.yaml; done
for i in $(seq 1 $N); do
  n=${nss[$((i % ${#nss[@]}))]}
  a=app$i
  d=$root/kubernetes/apps/$n/$a
  mkdir -p $d/app
  echo "  - ./$a/ks.yaml" >> $root/kubernetes/apps/$n/kustomization.yaml
  cat > $d/ks.yaml <<YAML
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: &app $a
spec:
  targetNamespace: $n
  commonMetadata: {labels: {app.kubernetes.io/name: *app}}
  path: ./kubernetes/apps/$n/$a/app
  prune: true
  sourceRef: {kind: GitRepository, name: home-kubernetes, namespace: flux-system}
  wait: false
  interval: 30m
  postBuild:
    substitute: {APP: *app}
YAML
  cat > $d/app/kustomization.yaml <<YAML
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ./helmrelease.yaml
configMapGenerator:
  - name: $a-values
    literals: [LOG=info]
generatorOptions: {disableNameSuffixHash: true}
YAML
  cat > $d/app/helmrelease.yaml <<YAML
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: \${APP}
spec:
  interval: 30m
  chart:
    spec: {chart: app-template, version: 3.5.1, sourceRef: {kind: HelmRepository, name: bjw-s, namespace: flux-system}}
  values:
    controllers:
      \${APP}:
        containers:
          app:
            image:
              repository: ghcr.io/example/\${APP}
              tag: 1.0.0
    service:
      app:
        controller: \${APP}
        ports: {http: {port: 80}}
YAML
done
cd "$root"
export PATH=$REPO/test/cluster/bin:$PATH
start=$(date +%s%N)
"$REPO/node_modules/.bin/node" "$REPO/dist/cli.js" build --root . --kustomizations 'kubernetes/flux/apps.yaml,kubernetes/apps/*/*/ks.yaml' > "$root.out" 2> "$root.err"
end=$(date +%s%N)
echo "build of $((N + 1)) Kustomizations: $(( (end - start) / 1000000 )) ms, $(grep -c '^kind: HelmRelease' "$root.out") HelmReleases (root $root, output $root.out)"
