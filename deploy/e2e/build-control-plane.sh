#!/usr/bin/env bash
# build-control-plane.sh builds kube-apiserver, kube-controller-manager,
# kube-scheduler, kubelet and kubectl of Kubernetes $K8S_VERSION from the Go
# module proxy into $OUT (cached: a second run returns at once). Plain `go
# install k8s.io/kubernetes/cmd/...@v1.32.4` fails on the replace directives
# of k8s.io/kubernetes' go.mod; a wrapper module that requires it and
# replaces every k8s.io/* staging module with its published v0.x.y builds.
# About 20 minutes on 2 cores.
set -euo pipefail
K8S_VERSION=${K8S_VERSION:-v1.32.4}
OUT=${1:?usage: build-control-plane.sh OUTDIR}
BINS="kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl"
done=1
for b in $BINS; do [ -x "$OUT/$b" ] || done=; done
if [ -n "$done" ]; then echo "control plane $K8S_VERSION: cached in $OUT"; exit 0; fi

staging_version=v0.${K8S_VERSION#v1.}
STAGING="api apiextensions-apiserver apimachinery apiserver cli-runtime client-go cloud-provider
  cluster-bootstrap code-generator component-base component-helpers controller-manager cri-api
  cri-client csi-translation-lib dynamic-resource-allocation endpointslice externaljwt kms
  kube-aggregator kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics
  mount-utils pod-security-admission sample-apiserver sample-cli-plugin sample-controller"

mod=$(mktemp -d)
trap 'rm -rf "$mod"' EXIT
{
  echo "module cordon.local/k8s-e2e-control-plane"
  echo
  echo "go 1.24"
  echo
  echo "require k8s.io/kubernetes $K8S_VERSION"
  echo
  echo "replace ("
  for s in $STAGING; do echo "	k8s.io/$s => k8s.io/$s $staging_version"; done
  echo ")"
} >"$mod/go.mod"
cat >"$mod/tools.go" <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
GO
minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1"
ldflags="$ldflags -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
ldflags="$ldflags -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION"
start=$(date +%s)
mkdir -p "$OUT"
(
  cd "$mod"
  GOFLAGS=-mod=mod go mod tidy -e >/dev/null 2>&1 || true
  for b in $BINS; do
    echo "building $b $K8S_VERSION"
    GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -tags tools -ldflags "$ldflags" -o "$OUT/$b.tmp" "k8s.io/kubernetes/cmd/$b"
    mv "$OUT/$b.tmp" "$OUT/$b"
  done
)
echo "control plane $K8S_VERSION built in $(( $(date +%s) - start )) s into $OUT"
