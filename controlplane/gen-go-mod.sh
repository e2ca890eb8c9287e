#!/usr/bin/env bash
# Writes controlplane/go.mod from the real k8s.io/kubernetes go.mod: one
# `replace k8s.io/X => k8s.io/X vK8S_STAGING` per staging module that kubernetes
# itself replaces with ./staging/src/k8s.io/X. Run it when bumping KUBERNETES.
set -euo pipefail
cd "$(dirname "$0")"
KUBERNETES=v1.37.2
STAGING=v0.${KUBERNETES#v1.}
ETCD=v3.7.3

upstream=$(go mod download -json "k8s.io/kubernetes@$KUBERNETES" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
staging=$(go mod edit -json "$upstream" |
  sed -n 's/.*"Path": "\(k8s\.io\/[^"]*\)".*/\1/p' | sort -u |
  while read -r m; do
    if go mod edit -json "$upstream" | grep -q "\"Path\": \"./staging/src/$m\""; then echo "$m"; fi
  done)
[ -n "$staging" ] || { echo "gen-go-mod: no staging replaces found in $upstream" >&2; exit 1; }

rm -f go.mod go.sum
go mod init github.com/wasm-operator/wasm-operator/controlplane >/dev/null 2>&1
go mod edit -go=1.26.0
for m in $staging; do go mod edit -replace "$m=$m@$STAGING"; done
go mod edit -require "k8s.io/kubernetes@$KUBERNETES" -require "go.etcd.io/etcd/server/v3@$ETCD"
go get -tool k8s.io/kubernetes/cmd/kube-apiserver@$KUBERNETES \
  k8s.io/kubernetes/cmd/kube-controller-manager@$KUBERNETES \
  k8s.io/kubernetes/cmd/kube-scheduler@$KUBERNETES \
  k8s.io/kubernetes/cmd/kubectl@$KUBERNETES \
  go.etcd.io/etcd/server/v3@$ETCD
go mod tidy
echo "gen-go-mod: $(echo "$staging" | wc -l) staging replaces at $STAGING" >&2
