#!/usr/bin/env bash
# Builds the real control plane into target/controlplane/bin: etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kubectl (controlplane/go.mod) and kwok
# (controlplane/kwok/go.mod). Go's module and build caches under $HOME make a second
# run a link-only step. GOTOOLCHAIN=local: the machine's Go (1.26.8) or a clear failure.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${CONTROLPLANE_BIN:-$here/../target/controlplane/bin}"
mkdir -p "$out"
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false CGO_ENABLED=0

kube=$(cd "$here" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
minor=${kube#v1.}; minor=${minor%%.*}
v=k8s.io/component-base/version
cv=k8s.io/client-go/pkg/version
ldflags="-s -w"
for p in $v $cv; do
  ldflags+=" -X $p.gitVersion=$kube -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
done

build() { # dir package binary
  echo "controlplane: building $3" >&2
  (cd "$1" && go build -trimpath -ldflags "$ldflags" -o "$out/$3" "$2")
}
build "$here" go.etcd.io/etcd/server/v3 etcd
for c in kube-apiserver kube-controller-manager kube-scheduler kubectl; do
  build "$here" "k8s.io/kubernetes/cmd/$c" "$c"
done
build "$here/kwok" sigs.k8s.io/kwok/cmd/kwok kwok


# kwok runs no stage of its own: kwokctl hands it the node and pod stages of its module
# (node-initialize, node-heartbeat-with-lease, pod-ready, pod-complete, pod-delete).
# They are taken from that module here, as published.
kwokdir=$(cd "$here/kwok" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
{
  for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
    pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
    echo "---"
    cat "$kwokdir/kustomize/stage/$f"
  done
} >"$out/kwok-stages.yaml"
echo "controlplane: binaries in $out" >&2
