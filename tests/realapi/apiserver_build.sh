#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Builds and caches the real Kubernetes v1.20.2 server binaries plus the Debian 13 root that runs etcd for the
# real-API-server tier (tests/realapi) and the single-node cluster tier (tests/cluster).
#
# usage: apiserver_build.sh ensure   print the cache dir, building it first if it is missing or broken
#        apiserver_build.sh path     print the cache dir it would use (no build)
#        apiserver_build.sh check    exit 0 if the cached build is complete
# Exit: 0 ok, 1 failure, 77 it must be built but cannot be here: the Debian mirror is unreachable, or
# debootstrap is missing (a complete cache needs neither).
#
# The cache dir $K8S_REALAPI_CACHE/kube-apiserver-<recipe hash> (default /var/cache/k8s-agent) holds
#   bin/kube-apiserver   static, built from Debian 12's source package "kubernetes" (the upstream v1.20.2
#                        tree with vendor/, 1.20.5+really1.20.2) with Go 1.24 from Debian 13; beside it, from
#                        the same build, kubelet, kube-controller-manager, kube-scheduler, kube-proxy, kubectl
#   root/                a Debian 13 (trixie, minbase) root with etcd-server (3.5) and kubernetes-client
#                        (kubectl 1.32); realapi_lib.sh runs them with the root's own loader and libraries
# Same pattern as tests/bed/ompi5_root.sh: built in a temporary dir on the same file system under an exclusive
# flock, renamed into place when complete; the recipe (this script's settings and build_in_root.sh) is hashed
# into the name, so a changed recipe builds beside the old one. debootstrap, apt and the Go build run in a
# private mount namespace (their /proc and /dev mounts vanish with them). Only debootstrap and apt reach the
# network: the Debian mirror this machine's apt uses (scripts/lib/apt_mirror.sh; K8S_AGENT_DEBIAN_MIRROR
# overrides it), which is not part of the recipe (the same packages from any mirror make the same build);
# the source package comes through a private apt configuration inside the root, the host's apt sources are
# only read, never touched. Cold: ~15 min on 2 busy cores (see tests/realapi/README.md).
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
: "${K8S_REALAPI_CACHE:=/var/cache/k8s-agent}"
RA_SUITE=trixie
# Go, Debian's reflect2 1.0.2 (replaces the vendored 1.0.1), etcd, kubectl, and dpkg-dev to unpack the source.
RA_PACKAGES="golang-1.24-go golang-github-modern-go-reflect2-dev etcd-server kubernetes-client dpkg-dev xz-utils"
RA_SRC_SUITE=bookworm
RA_SRC_PACKAGE=kubernetes
RA_SRC_VERSION_RE='^1\.20\.5\+really1\.20\.2-'
# The server binaries the build makes and check verifies (kubectl is checked by its client version).
RA_BINARIES="kube-apiserver kubelet kube-controller-manager kube-scheduler kube-proxy"
RA_RECIPE="v2 suite=$RA_SUITE variant=minbase packages=$RA_PACKAGES no-recommends src=$RA_SRC_SUITE/$RA_SRC_PACKAGE \
inner=$(sha256sum "$HERE/build_in_root.sh" | cut -c1-16)"
RA_KEY="$(printf '%s' "$RA_RECIPE" | sha256sum | cut -c1-12)"
RA_DIR="$K8S_REALAPI_CACHE/kube-apiserver-$RA_KEY"
RA_STAMP=".k8s-agent-realapi-stamp"

log() { printf '[realapi-build %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
# shellcheck source=scripts/lib/cache.sh
source "$HERE/../../scripts/lib/cache.sh"

# Runs a binary of the root with the root's loader and libraries (its glibc is newer than the host's).
root_exec() {
  local r="$1" bin="$2"
  shift 2
  "$r/lib64/ld-linux-x86-64.so.2" --library-path "$r/lib/x86_64-linux-gnu:$r/usr/lib/x86_64-linux-gnu" \
    "$r$bin" "$@"
}

# Complete: the stamp written last matches, and every binary the tier runs answers for itself.
ra_check() {
  local d="$1"
  [[ "$(cat "$d/$RA_STAMP" 2>/dev/null)" == "$RA_RECIPE" ]] || return 1
  [[ -x "$d/root/usr/bin/etcd" && -x "$d/root/usr/bin/kubectl" ]] || return 1
  local b
  for b in $RA_BINARIES; do
    # Whole outputs, not "| grep -q": an early grep exit would SIGPIPE the binary and fail the pipeline.
    [[ "$("$d/bin/$b" --version 2>/dev/null)" == "Kubernetes v1.20.2" ]] || return 1
  done
  [[ "$("$d/bin/kubectl" version --client --short 2>/dev/null)" == "Client Version: v1.20.2" ]] &&
    [[ "$(root_exec "$d/root" /usr/bin/etcd --version 2>/dev/null)" == *"etcd Version: 3."* ]] &&
    [[ "$(root_exec "$d/root" /usr/bin/kubectl version --client 2>/dev/null)" == *"Client Version: v1."* ]]
}

# In a private mount namespace: debootstrap, packages, the source package (private apt config for the
# bookworm deb-src line, inside the root), then build_in_root.sh in the root. $1 = temp dir, $2 = mirror.
build_into() {
  local t="$1" mirror="$2"
  mkdir -p "$t/bin"
  # shellcheck disable=SC2016 # the script expands its own positional parameters
  unshare --mount --propagation private bash -euo pipefail -c '
    t="$1" mirror="$2" suite="$3" pkgs="$4" srcsuite="$5" srcpkg="$6" verre="$7" inner="$8"
    r="$t/root"
    debootstrap --variant=minbase --keyring=/usr/share/keyrings/debian-archive-keyring.gpg "$suite" "$r" "$mirror"
    printf "#!/bin/sh\nexit 101\n" >"$r/usr/sbin/policy-rc.d"
    chmod 755 "$r/usr/sbin/policy-rc.d"
    mount -t proc proc "$r/proc"
    mount --bind /dev "$r/dev"
    in_root() { chroot "$r" env DEBIAN_FRONTEND=noninteractive LC_ALL=C "$@"; }
    in_root apt-get update -q
    # shellcheck disable=SC2086
    in_root apt-get install -y -q --no-install-recommends $pkgs
    # The source package, through an apt configuration of its own (the root keeps its trixie sources).
    printf "deb-src %s %s main\n" "$mirror" "$srcsuite" >"$r/etc/apt/realapi-src.list"
    mkdir -p "$r/var/lib/apt/realapi-lists/partial" "$r/build"
    apt_src=(-o Dir::Etc::SourceList=/etc/apt/realapi-src.list -o Dir::Etc::SourceParts=/nonexistent
      -o Dir::State::Lists=/var/lib/apt/realapi-lists)
    in_root apt-get "${apt_src[@]}" update -q
    in_root sh -c "cd /build && apt-get $(printf "%q " "${apt_src[@]}") source -q $srcpkg"
    src="$(cd "$r/build" && ls -d "$srcpkg"-*/ | head -n1)"
    ver="$(in_root sh -c "cd /build/$src && dpkg-parsechangelog -S Version")"
    printf "%s\n" "$ver" | grep -Eq "$verre" || { echo "unexpected source version $ver" >&2; exit 1; }
    echo "source package $srcpkg $ver"
    cp "$inner" "$r/build/build_in_root.sh"
    in_root bash /build/build_in_root.sh "/build/$src" /build/out
    mv "$r"/build/out/* "$t/bin/"
    printf "%s %s\n" "$srcpkg" "$ver" >"$t/bin/kubernetes.source"
    # The source tree, Go caches and apt lists are not needed to run anything: drop them (GBs).
    rm -rf "$r/build" "$r/gopath" "$r/var/lib/apt/realapi-lists" "$r/etc/apt/realapi-src.list"
    in_root apt-get clean
    umount "$r/dev" "$r/proc"
    rm -f "$r/usr/sbin/policy-rc.d"
  ' build "$t" "$mirror" "$RA_SUITE" "$RA_PACKAGES" "$RA_SRC_SUITE" "$RA_SRC_PACKAGE" \
    "$RA_SRC_VERSION_RE" "$HERE/build_in_root.sh"
}

# The build, its duration (tests/realapi/README.md quotes it), then the stamp (written last: ra_check reads it).
ra_build() {
  local t0=$SECONDS
  build_into "$1" "$2" && printf '%s\n' "$((SECONDS - t0))" >"$1/.build-seconds" &&
    printf '%s' "$RA_RECIPE" >"$1/$RA_STAMP"
}

ra_ensure() {
  cache_ensure_root "$K8S_REALAPI_CACHE" kube-apiserver 2400 "$RA_DIR" "$RA_SUITE" \
    "Kubernetes v1.20.2 server binaries (13-38 min cold)" ra_check ra_build
}

case "${1:-}" in
ensure) ra_ensure ;;
path) printf '%s\n' "$RA_DIR" ;;
check) ra_check "$RA_DIR" ;;
*)
  sed -n '3,8p' "$0" >&2
  exit 2
  ;;
esac
