# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Fetching pinned arm64 binary packages of Debian 12 (the static libraries and headers of its -dev
# packages) for the cross builds (scripts/third_party.sh aarch64, scripts/sshd_build.sh aarch64). Sourced
# after scripts/lib/apt_source.sh (apt_source_apt) and scripts/lib/apt_mirror.sh; the caller defines log().
#
# Why not `apt-get install PKG:arm64`: a multiarch :arm64 package must have its amd64 twin's exact version,
# so installing one upgrades the host's -dev package whenever the mirror has moved on, which changes the
# x86_64 builds and their cache keys. Here apt reads only a private configuration under the caller's
# build dir (bookworm, bookworm-updates and bookworm-security for arm64, signed by the host's
# debian-archive-keyring: signatures and hashes checked), downloads the pinned .debs and dpkg-deb unpacks
# them into a directory of the caller's. Nothing is installed.

# The arm64 OpenSSL linked into both the arm64 agent (scripts/third_party.sh) and the arm64 sshd: one pin,
# so the image's SBOM names one OpenSSL. The security archive's, which may be newer than the host's amd64
# one (--version and the SBOM name the one linked).
# shellcheck disable=SC2034 # read by the scripts that source this
ARM64_LIBSSL_DEV_PIN=libssl-dev=3.0.22-1~deb12u2

# arm64_debs_fetch DIR MIRROR PKG=VERSION...: downloads each pinned package into DIR/debs, unpacks all of
# them into DIR/root and appends "PACKAGE VERSION SOURCE SOURCE_VERSION" per package to DIR/debs.txt.
# Exit 1, saying which versions the mirror has, when a pin is not there.
arm64_debs_fetch() {
  local dir="$1" mirror="$2" d="$1/apt" security deb pkg
  shift 2
  security="$(apt_mirror_security)" || return 1
  mkdir -p "$d/sources.list.d" "$d/lists/partial" "$d/cache/archives/partial" "$dir/debs" "$dir/root"
  cat >"$d/sources.list.d/debian-arm64.sources" <<EOF
Types: deb
URIs: $mirror
Suites: bookworm bookworm-updates
Components: main
Architectures: arm64
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $security
Suites: bookworm-security
Components: main
Architectures: arm64
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  local arch=(-o APT::Architecture=arm64 -o APT::Architectures::=arm64)
  apt_source_apt apt-get "$d" "${arch[@]}" -q update || return 1
  for pkg in "$@"; do
    if ! (cd "$dir/debs" && apt_source_apt apt-get "$d" "${arch[@]}" -q download "${pkg%%=*}:arm64=${pkg#*=}"); then
      log "apt-get download ${pkg%%=*}:arm64=${pkg#*=} failed; the mirror has" \
        "$(apt_source_apt apt-cache "$d" "${arch[@]}" madison "${pkg%%=*}:arm64" | awk '{print $3}' | tr '\n' ' ')" \
        "update the pin in $0"
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
