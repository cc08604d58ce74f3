#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Builds and caches the "stock image" of the e2e tests that bring their own sshd: a Debian 13
# (trixie) debootstrap --variant=minbase root plus openmpi-bin (no recommends) and nothing else: Open MPI 5
# (mpirun, prted) but NO OpenSSH server, no sshd user, no /run/sshd, as a training image that never
# planned for ssh. The portable sshd (scripts/sshd_build.sh) must run in it as it is.
#
# usage: minbase_root.sh ensure   print the root's path, building it first if it is missing or broken
#        minbase_root.sh path     print the path it would use (no build)
#        minbase_root.sh check    exit 0 if the cached root is complete and still has no sshd
# Exit: 0 ok, 1 failure, 77 the root must be built but cannot be here: the Debian mirror is unreachable or
# debootstrap is not installed (a complete cached root needs neither).
#
# Same pattern as tests/bed/ompi5_root.sh (scripts/lib/cache.sh): $K8S_MINBASE_CACHE (default
# $K8S_AGENT_CACHE, else /var/cache/k8s-agent)/trixie-minbase-<hash of the recipe>, built under an
# exclusive flock in a temporary dir beside it, in a private mount namespace, renamed into place. The
# mirror (scripts/lib/apt_mirror.sh) is not part of the recipe. Users of the root must not write into it
# (it is shared): mount a tmpfs or an overlay over what they change.
set -uo pipefail

: "${K8S_MINBASE_CACHE:=${K8S_AGENT_CACHE:-/var/cache/k8s-agent}}"
MINBASE_SUITE=trixie
MINBASE_PACKAGES="openmpi-bin"
# Anything that changes the resulting root belongs in the recipe string (and so in the stamp).
MINBASE_RECIPE="v2 suite=$MINBASE_SUITE variant=minbase packages=$MINBASE_PACKAGES no-recommends"
MINBASE_KEY="$(printf '%s' "$MINBASE_RECIPE" | sha256sum | cut -c1-12)"
MINBASE_ROOT="$K8S_MINBASE_CACHE/trixie-minbase-$MINBASE_KEY"
MINBASE_STAMP=".k8s-agent-minbase-stamp"

log() { printf '[minbase-root %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
# shellcheck source=scripts/lib/cache.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/cache.sh"

# minbase_check ROOT [quiet]: the stamp written last matches; Open MPI 5 is there and runs; what the portable
# sshd relies on is there (user nobody, a root-owned /var/lib/misc no one else may write); and no sshd.
minbase_check() {
  local r="$1" quiet="${2:-}" f
  say() { [[ -n "$quiet" ]] || log "check $r: $*"; }
  [[ "$(cat "$r/$MINBASE_STAMP" 2>/dev/null)" == "$MINBASE_RECIPE" ]] || {
    say "no stamp of '$MINBASE_RECIPE' (not built)"
    return 1
  }
  for f in usr/bin/mpirun usr/bin/prted bin/sh bin/bash etc/hosts etc/resolv.conf; do
    [[ -e "$r/$f" ]] || {
      say "$f missing"
      return 1
    }
  done
  if [[ -e "$r/usr/sbin/sshd" ]] || grep -q '^sshd:' "$r/etc/passwd"; then
    say "has an sshd (usr/sbin/sshd or an sshd user): not a stock image"
    return 1
  fi
  grep -q '^nobody:' "$r/etc/passwd" || {
    say "no user nobody"
    return 1
  }
  [[ "$(stat -c '%u %A' "$r/var/lib/misc" 2>/dev/null)" =~ ^0\ d....-..-.$ ]] || {
    say "var/lib/misc missing, not root's or writable by group/others"
    return 1
  }
  # Whole output, not "| grep -q" (an early grep exit would SIGPIPE mpirun).
  [[ "$(chroot "$r" /usr/bin/mpirun --version 2>/dev/null)" =~ (^|$'\n')"mpirun (Open MPI) 5." ]] || {
    say "mpirun --version is not Open MPI 5"
    return 1
  }
}

# build_into TMP MIRROR, in a private mount namespace (the /proc mount vanishes with it).
build_into() {
  local t="$1" mirror="$2"
  # shellcheck disable=SC2016 # the script expands its own positional parameters
  unshare --mount --propagation private bash -euo pipefail -c '
    t="$1" mirror="$2" suite="$3" pkgs="$4"
    debootstrap --variant=minbase --keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
      "$suite" "$t" "$mirror"
    printf "#!/bin/sh\nexit 101\n" >"$t/usr/sbin/policy-rc.d"
    chmod 755 "$t/usr/sbin/policy-rc.d"
    mount -t proc proc "$t/proc"
    chroot "$t" env DEBIAN_FRONTEND=noninteractive LC_ALL=C apt-get update -q
    # shellcheck disable=SC2086
    chroot "$t" env DEBIAN_FRONTEND=noninteractive LC_ALL=C apt-get install -y -q --no-install-recommends $pkgs
    chroot "$t" apt-get clean
    rm -rf "$t"/var/lib/apt/lists/*
    umount "$t/proc"
    rm -f "$t/usr/sbin/policy-rc.d"
    # Mount points for what the kubelet (and the bed) mount over in a container; nothing else is added.
    touch "$t/etc/hosts" "$t/etc/resolv.conf"
  ' build "$t" "$mirror" "$MINBASE_SUITE" "$MINBASE_PACKAGES"
}

# The build (TMP MIRROR), then the stamp (written last: minbase_check reads it).
minbase_build() {
  local t0=$SECONDS
  build_into "$1" "$2" && echo "$((SECONDS - t0))" >"$1/.build-seconds" &&
    printf '%s' "$MINBASE_RECIPE" >"$1/$MINBASE_STAMP"
}

minbase_quiet_check() { minbase_check "$1" quiet; }

minbase_ensure() {
  cache_ensure_root "$K8S_MINBASE_CACHE" trixie-minbase 900 "$MINBASE_ROOT" "$MINBASE_SUITE" \
    "the trixie minbase root ($MINBASE_PACKAGES, no sshd; 1-3 minutes)" minbase_quiet_check minbase_build
}

case "${1:-}" in
ensure) minbase_ensure ;;
path) printf '%s\n' "$MINBASE_ROOT" ;;
check) minbase_check "$MINBASE_ROOT" ;;
*)
  sed -n '8,10p' "$0" >&2
  exit 2
  ;;
esac
