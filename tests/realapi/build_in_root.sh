#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Runs INSIDE the Debian 13 build root (chroot) made by apiserver_build.sh: builds the v1.20.2 server binaries
# (kube-apiserver for tests/realapi; kubelet, kube-controller-manager, kube-scheduler, kube-proxy and kubectl for
# the single-node cluster, tests/cluster) from the Debian 12 source tree unpacked at $1 into the directory $2.
# Offline: every input is already in the root (Go 1.24, Debian's reflect2, the source tree). One build of the
# tree for all six: the generated openapi code and Go's build cache are shared (the five cost ~3 min more).
#
# usage: build_in_root.sh SRC_DIR OUT_DIR
set -euo pipefail
src="$1" out="$2"

export PATH="/usr/lib/go-1.24/bin:$PATH"
# The v1.20 tree predates modules working with this Go: GOPATH mode, no network, no toolchain switching.
export GO111MODULE=off GOPATH=/gopath GOPROXY=off GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=
export GOCACHE=/gopath/cache
mkdir -p /gopath/src/k8s.io
ln -sfn "$src" /gopath/src/k8s.io/kubernetes
cd /gopath/src/k8s.io/kubernetes

# The vendored reflect2 1.0.1 reads runtime internals that changed in Go 1.18; Debian's 1.0.2 does not.
rm -rf vendor/github.com/modern-go/reflect2
cp -a /usr/share/gocode/src/github.com/modern-go/reflect2 vendor/github.com/modern-go/reflect2

# pkg/generated/openapi/zz_generated.openapi.go is generated, not shipped. Inputs as upstream's
# build/root/Makefile.generated_files computes them for its KUBE target: every Go directory of the tree
# (staging named as its vendor/ alias, vendor/ itself and _*/.* pruned) with a file carrying
# "+k8s:openapi-gen=", less code-generator's and sample-apiserver's.
go build -o /gopath/bin/openapi-gen ./vendor/k8s.io/kube-openapi/cmd/openapi-gen
dirs="$(find -H . -not \( \( -path './_*' -o -path './.*' -o -path ./vendor \) -prune \) -type f -name '*.go' |
  sed -e 's|^\./staging/src|vendor|' -e 's|^\./||' -e 's|/[^/]*$||' | LC_ALL=C sort -u)"
# shellcheck disable=SC2086 # one word per directory
inputs="$(for d in $dirs; do
  grep -l --color=never '^// *+k8s:' "$d"/*.go 2>/dev/null || true
done | grep -v -e '^vendor/k8s.io/code-generator/' -e '^vendor/k8s.io/sample-apiserver/' |
  xargs grep -l --color=never '+k8s:openapi-gen=' | xargs -n1 dirname | LC_ALL=C sort -u |
  sed 's|^|k8s.io/kubernetes/|' | paste -sd,)"
/gopath/bin/openapi-gen --logtostderr -i "$inputs" -p k8s.io/kubernetes/pkg/generated/openapi \
  -O zz_generated.openapi -h vendor/k8s.io/code-generator/hack/boilerplate.go.txt \
  -r /gopath/openapi-violations.report
# The generator's API-rule report must match the checked-in exceptions, as upstream's make rule demands: a
# difference means the inputs above are not upstream's.
diff -u api/api-rules/violation_exceptions.list /gopath/openapi-violations.report

# The version as upstream's hack/lib/version.sh stamps it (kubectl's and the kubelet's reports read it; the
# node object carries it), with a fixed build date so the same tree makes the same binaries.
mkdir -p "$out"
ldx=""
for v in k8s.io/kubernetes/vendor/k8s.io/component-base/version k8s.io/kubernetes/vendor/k8s.io/client-go/pkg/version; do
  ldx+=" -X $v.gitVersion=v1.20.2 -X $v.gitMajor=1 -X $v.gitMinor=20 -X $v.gitTreeState=clean"
  ldx+=" -X $v.buildDate=1970-01-01T00:00:00Z"
done
for cmd in kube-apiserver kubelet kube-controller-manager kube-scheduler kube-proxy kubectl; do
  t0=$SECONDS
  go build -trimpath -ldflags "-s -w$ldx" -o "$out/$cmd" "./cmd/$cmd"
  echo "built $cmd in $((SECONDS - t0)) s"
done
