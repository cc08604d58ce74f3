#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Makes a Debian "slim" base image from Debian's own packages, for machines
# that reach Debian's mirror but no container registry.
#
#   sudo scripts/debian-image.sh SUITE [IMAGE]   e.g. bookworm debian:bookworm-slim
#
# Nothing happens when podman already has IMAGE (pulled or made before).
# Otherwise: `debootstrap --variant=minbase SUITE`, trimmed as the official
# slim images are (no docs, man pages or locales; Debian's apt sources with
# updates and security), then `podman import`. The root file system is kept
# as a tarball in $K8S_AGENT_CACHE (default /var/cache/k8s-agent), named
# after a hash of the recipe below, so a second machine state (a reset
# podman store) re-imports in seconds. It is built in a temporary directory
# under a flock and renamed into place: a killed build leaves nothing under
# the final name. Only debootstrap talks to the network, to the Debian
# mirror this machine's apt uses (scripts/lib/apt_mirror.sh reads it from
# the apt sources; K8S_AGENT_DEBIAN_MIRROR and
# K8S_AGENT_DEBIAN_SECURITY_MIRROR override it). The image's own apt
# sources name the same mirrors, looked up when the root is built.
# Exit: 0 ok, 1 failure, 77 it must be built but debootstrap is missing,
# no Debian mirror is known or the mirror is unreachable.
set -euo pipefail

: "${K8S_AGENT_CACHE:=/var/cache/k8s-agent}"

log() { printf '[debian-image %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
# shellcheck source=scripts/lib/apt_mirror.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/apt_mirror.sh"
die() {
  log "$*"
  exit 1
}

# What the slim images leave out (their dpkg path excludes), applied to the
# files debootstrap already unpacked and to every later apt-get install.
DPKG_EXCLUDES='path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias'

# The recipe of one root (SUITE MIRROR SECURITY): anything that changes the
# tarball belongs here. Unlike the other caches the mirrors do: they are
# written into the root's apt sources.
recipe() {
  printf 'v1 suite=%s variant=minbase mirror=%s security=%s excludes=%s' "$1" \
    "$2" "$3" "$DPKG_EXCLUDES"
}

# build_root SUITE ROOT MIRROR SECURITY. Runs in a private mount namespace
# so the /proc and /sys that debootstrap mounts inside the root vanish with
# it, even on SIGKILL.
build_root() {
  local suite="$1" root="$2" mirror="$3" security="$4"
  # shellcheck disable=SC2016 # the inner script expands its own parameters
  unshare --mount --propagation private bash -euo pipefail -c '
    suite="$1" root="$2" mirror="$3" security="$4" excludes="$5"
    debootstrap --variant=minbase --keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
      "$suite" "$root" "$mirror"
    printf "%s\n" "$excludes" >"$root/etc/dpkg/dpkg.cfg.d/slim-excludes"
    # Drop what the excludes would have kept out.
    find "$root/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
    find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
    rm -rf "$root"/usr/share/{man,groff,info,lintian,linda}/*
    find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} +
    rm -f "$root/etc/apt/sources.list"
    printf "Types: deb\nURIs: %s\nSuites: %s %s-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\nTypes: deb\nURIs: %s\nSuites: %s-security\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n" \
      "$mirror" "$suite" "$suite" "$security" "$suite" >"$root/etc/apt/sources.list.d/debian.sources"
    # As in the official images: no package lists, no caches, no translations.
    printf "Acquire::Languages \"none\";\n" >"$root/etc/apt/apt.conf.d/docker-no-languages"
    printf "DPkg::Post-Invoke { \"rm -f /var/cache/apt/archives/*.deb /var/cache/apt/*.bin || true\"; };\nAPT::Update::Post-Invoke { \"rm -f /var/cache/apt/archives/*.deb /var/cache/apt/*.bin || true\"; };\nDir::Cache::pkgcache \"\";\nDir::Cache::srcpkgcache \"\";\n" \
      >"$root/etc/apt/apt.conf.d/docker-clean"
    rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* "$root"/var/log/*.log \
      "$root"/var/log/apt/* "$root"/var/cache/debconf/*-old "$root"/var/lib/dpkg/*-old
    # The engine provides these per container.
    : >"$root/etc/hostname"
    : >"$root/etc/resolv.conf"
  ' build "$suite" "$root" "$mirror" "$security" "$DPKG_EXCLUDES"
}

# Prints the cached tarball of SUITE's root, building it first if needed.
ensure_tarball() {
  local suite="$1" mirror security key tar lockfd t rc
  mirror="$(apt_mirror)" || return 77
  security="$(apt_mirror_security)" || return 77
  key="$(recipe "$suite" "$mirror" "$security" | sha256sum | cut -c1-12)"
  tar="$K8S_AGENT_CACHE/debian-$suite-minbase-$key.tar"
  mkdir -p "$K8S_AGENT_CACHE"
  exec {lockfd}>"$K8S_AGENT_CACHE/debian-$suite-minbase.lock"
  flock -w 900 "$lockfd" || die "lock $K8S_AGENT_CACHE/debian-$suite-minbase.lock busy for 15 min"
  if [[ -s "$tar" ]]; then
    printf '%s\n' "$tar"
    return 0
  fi
  # Under the lock, any temporary build is a leftover of a killed one.
  for t in "$K8S_AGENT_CACHE"/.build-debian-"$suite".*; do
    [[ -e "$t" ]] && rm -rf --one-file-system "$t"
  done
  if ! command -v debootstrap >/dev/null; then
    log "debootstrap missing (apt-get install debootstrap): cannot make a $suite base image"
    return 77
  fi
  if ! curl -sSf --max-time 20 -o /dev/null "$mirror/dists/$suite/Release" 2>/dev/null; then
    log "Debian mirror $mirror unreachable: cannot make a $suite base image"
    return 77
  fi
  t="$(mktemp -d "$K8S_AGENT_CACHE/.build-debian-$suite.XXXXXX")"
  chmod 755 "$t"
  log "debootstrap $suite into $t (about a minute; log $t.log)"
  rc=0
  build_root "$suite" "$t/root" "$mirror" "$security" >"$t.log" 2>&1 || rc=$?
  if ((rc != 0)); then
    tail -n 20 "$t.log" >&2
    rm -rf --one-file-system "$t"
    die "debootstrap $suite failed (exit $rc); log kept in $t.log"
  fi
  # Numeric owners: the image must not depend on this machine's user names.
  tar --numeric-owner --xattrs -C "$t/root" -cf "$t/root.tar" . || die "tar of the $suite root failed"
  mv "$t/root.tar" "$tar"
  rm -rf --one-file-system "$t" "$t.log"
  log "cached $tar ($(du -h "$tar" | cut -f1))"
  printf '%s\n' "$tar"
}

main() {
  local suite="${1:-}" image="${2:-}" tar rc
  if [[ -z "$suite" ]]; then
    sed -n '3,8p' "$0" >&2
    exit 2
  fi
  [[ -n "$image" ]] || image="debian:$suite-slim"
  [[ $EUID -eq 0 ]] || die "needs root (debootstrap, podman's root store)"
  command -v podman >/dev/null || die "podman missing (apt-get install podman)"
  if podman image exists "$image"; then
    return 0
  fi
  rc=0
  tar="$(ensure_tarball "$suite")" || rc=$?
  ((rc == 0)) || exit "$rc"
  podman import --quiet --change 'CMD ["bash"]' \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    "$tar" "$image" >/dev/null || die "podman import $tar as $image failed"
  log "imported $image from $tar"
}

main "$@"
