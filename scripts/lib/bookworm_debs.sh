# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Fetching pinned binary packages of Debian 12 (the static libraries and headers of its -dev packages) for
# the builds that must not depend on what this machine has installed: OpenSSL for both arches, and every
# -dev package of the arm64 cross builds (scripts/third_party.sh, scripts/sshd_build.sh). Sourced after
# scripts/lib/apt_source.sh (apt_source_apt) and scripts/lib/apt_mirror.sh; the caller defines log().
#
# Why not `apt-get install PKG[:arm64]`: installing changes the host (its libssl-dev is whatever its last
# upgrade left: 3.0.19 on one machine, 3.0.22 on another, so two builds of one commit would link two
# OpenSSLs), and a multiarch :arm64 package must have its amd64 twin's exact version, so installing one
# upgrades the host's -dev package whenever the mirror has moved on. Here apt reads only a private
# configuration under the caller's build dir (bookworm, bookworm-updates and bookworm-security for the one
# arch, signed by the host's debian-archive-keyring: signatures and hashes checked), downloads the pinned
# .debs and dpkg-deb unpacks them into a directory of the caller's. Nothing is installed.

# The OpenSSL linked into the agent (scripts/third_party.sh) and the portable sshd, on both arches: one pin,
# so every binary and image of a release, and its SBOM, name one OpenSSL. The security archive's (the
# newest fix), whatever the host's libssl-dev is; --version and the SBOM name the one linked. When Debian
# supersedes it, the fetch fails naming the versions the mirror has: update it here (the cache keys follow).
# shellcheck disable=SC2034 # read by the scripts that source this
LIBSSL_DEV_PIN=libssl-dev=3.0.22-1~deb12u2

# bookworm_debs_fetch DIR MIRROR ARCH PKG=VERSION...: downloads each pinned package of ARCH (amd64, arm64)
# into DIR/debs, unpacks all of them into DIR/root and appends "PACKAGE VERSION SOURCE SOURCE_VERSION" per
# package to DIR/debs.txt. Exit 1, saying which versions the mirror has, when a pin is not there.
bookworm_debs_fetch() {
  local dir="$1" mirror="$2" arch="$3" d="$1/apt" security deb pkg
  shift 3
  security="$(apt_mirror_security)" || return 1
  mkdir -p "$d/sources.list.d" "$d/lists/partial" "$d/cache/archives/partial" "$dir/debs" "$dir/root"
  cat >"$d/sources.list.d/debian-$arch.sources" <<EOF
Types: deb
URIs: $mirror
Suites: bookworm bookworm-updates
Components: main
Architectures: $arch
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $security
Suites: bookworm-security
Components: main
Architectures: $arch
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  local arch_opts=(-o "APT::Architecture=$arch" -o "APT::Architectures::=$arch")
  apt_source_apt apt-get "$d" "${arch_opts[@]}" -q update || return 1
  for pkg in "$@"; do
    if ! (cd "$dir/debs" && apt_source_apt apt-get "$d" "${arch_opts[@]}" -q download "${pkg%%=*}:$arch=${pkg#*=}"); then
      log "apt-get download ${pkg%%=*}:$arch=${pkg#*=} failed; the mirror has" \
        "$(apt_source_apt apt-cache "$d" "${arch_opts[@]}" madison "${pkg%%=*}:$arch" | awk '{print $3}' | tr '\n' ' ')" \
        "update the pin in $0 or scripts/lib/bookworm_debs.sh"
      return 1
    fi
  done
  for deb in "$dir/debs"/*.deb; do
    dpkg-deb -x "$deb" "$dir/root" || return 1
    # shellcheck disable=SC2016 # dpkg-deb fields, not shell
    dpkg-deb --show --showformat='${Package} ${Version} ${source:Package} ${source:Version}\n' "$deb" \
      >>"$dir/debs.txt" || return 1
  done
}
