#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Builds and caches a Debian 13 (trixie) root with Open MPI 5 (PRRTE) for the e2e bed's "Open MPI 5" pods.
#
# usage: ompi5_root.sh ensure   print the root's path, building it first if it is missing or broken
#        ompi5_root.sh path     print the path it would use (no build)
#        ompi5_root.sh check    exit 0 if the cached root is complete
# Exit: 0 ok, 1 failure, 77 the root must be built but cannot be here: the Debian mirror is unreachable or
# debootstrap is not installed (a complete cached root needs neither).
#
# The root lives OUTSIDE the clone in $K8S_OMPI5_CACHE (default /var/cache/k8s-agent), in a directory named
# after a hash of the recipe below (the "version stamp"): change the recipe and a new root is built beside the
# old one. Building happens in a temporary directory on the same file system, under an exclusive flock, and
# the finished root is renamed into place, so a killed build never leaves a half root under the final name and
# two concurrent runs never build into the same directory. debootstrap and apt run in a private mount
# namespace: the /proc, /sys and /dev mounts they make inside the root vanish with them, even on SIGKILL.
# Only debootstrap and apt talk to the network, to the mirror this machine's apt uses
# (scripts/lib/apt_mirror.sh; K8S_AGENT_DEBIAN_MIRROR overrides it). The mirror is not part of the recipe:
# the same packages from any mirror make the same root.
set -uo pipefail

: "${K8S_OMPI5_CACHE:=/var/cache/k8s-agent}"
OMPI5_SUITE=trixie
# Packages of the "pod image": Open MPI 5 runtime + mpicc (gcc, libc6-dev) + the pods' sshd.
OMPI5_PACKAGES="openmpi-bin libopenmpi-dev gcc libc6-dev openssh-server"
# Anything that changes the resulting root belongs in the recipe string (and so in the stamp).
OMPI5_RECIPE="v1 suite=$OMPI5_SUITE variant=minbase packages=$OMPI5_PACKAGES no-recommends"
OMPI5_KEY="$(printf '%s' "$OMPI5_RECIPE" | sha256sum | cut -c1-12)"
OMPI5_ROOT="$K8S_OMPI5_CACHE/trixie-ompi5-$OMPI5_KEY"
OMPI5_STAMP=".k8s-agent-ompi5-stamp"

log() { printf '[ompi5-root %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
# shellcheck source=scripts/lib/cache.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/cache.sh"

# A complete root: the stamp written last by the build matches, the tools the scenario runs exist and run.
ompi5_check() {
  local r="$1" f
  [[ "$(cat "$r/$OMPI5_STAMP" 2>/dev/null)" == "$OMPI5_RECIPE" ]] || return 1
  for f in usr/bin/prterun usr/bin/prted usr/bin/mpirun usr/bin/mpicc usr/bin/gcc usr/sbin/sshd bin/sh \
    etc/openmpi/prte-mca-params.conf etc/hosts etc/resolv.conf; do
    [[ -e "$r/$f" ]] || return 1
  done
  # The binaries load (no library lost): Open MPI 5 answers for itself.
  chroot "$r" /usr/bin/mpirun --version 2>/dev/null | grep -q '^mpirun (Open MPI) 5\.'
}

# build_into TMP MIRROR. In a private mount namespace (see the header): debootstrap, then apt-get in the root.
build_into() {
  local t="$1" mirror="$2"
  # shellcheck disable=SC2016 # the script expands its own positional parameters
  unshare --mount --propagation private bash -euo pipefail -c '
    t="$1" mirror="$2" suite="$3" pkgs="$4"
    debootstrap --variant=minbase --keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
      "$suite" "$t" "$mirror"
    # No service may start inside the root while packages are installed (openssh-server would).
    printf "#!/bin/sh\nexit 101\n" >"$t/usr/sbin/policy-rc.d"
    chmod 755 "$t/usr/sbin/policy-rc.d"
    mount -t proc proc "$t/proc"
    chroot "$t" env DEBIAN_FRONTEND=noninteractive LC_ALL=C apt-get update -q
    # shellcheck disable=SC2086
    chroot "$t" env DEBIAN_FRONTEND=noninteractive LC_ALL=C apt-get install -y -q --no-install-recommends $pkgs
    chroot "$t" apt-get clean
    umount "$t/proc"
    rm -f "$t/usr/sbin/policy-rc.d"
    # Files the bed bind-mounts over must exist as mount points.
    mkdir -p "$t/etc/openmpi" "$t/run/sshd"
    touch "$t/etc/hosts" "$t/etc/resolv.conf" "$t/etc/openmpi/prte-mca-params.conf"
  ' build "$t" "$mirror" "$OMPI5_SUITE" "$OMPI5_PACKAGES"
}

# The build (TMP MIRROR), then the stamp (written last: ompi5_check reads it).
ompi5_build() {
  build_into "$1" "$2" && printf '%s' "$OMPI5_RECIPE" >"$1/$OMPI5_STAMP"
}

ompi5_ensure() {
  cache_ensure_root "$K8S_OMPI5_CACHE" trixie-ompi5 1500 "$OMPI5_ROOT" "$OMPI5_SUITE" \
    "the trixie root ($OMPI5_PACKAGES; several minutes)" ompi5_check ompi5_build
}

case "${1:-}" in
ensure) ompi5_ensure ;;
path) printf '%s\n' "$OMPI5_ROOT" ;;
check) ompi5_check "$OMPI5_ROOT" ;;
*)
  sed -n '3,8p' "$0" >&2
  exit 2
  ;;
esac
