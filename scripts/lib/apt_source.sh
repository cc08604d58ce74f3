# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Fetching pinned Debian source packages with `apt-get source` through a private apt configuration
# (scripts/third_party.sh, scripts/sshd_build.sh). Sourced; the caller defines log().
#
# The configuration lives under a directory the caller owns (inside its temporary build dir): one deb-src
# line of one suite, signed by the host's debian-archive-keyring (which holds the trixie keys), on the
# mirror the caller passes (scripts/lib/apt_mirror.sh). The host's sources, lists and caches are never
# read for packages nor changed: only apt's configuration defaults are. apt checks the Release signature
# and every file's hash; dpkg-source applies Debian's patches. Nothing else is downloaded.
#
# Pins are exact versions. A security or point-release update supersedes a version and the mirror then
# drops it: apt-get source fails naming nothing useful, so apt_source_fetch says which versions the mirror
# has and that the pin needs updating.

# apt_source_apt TOOL DIR ARGS...: apt-get or apt-cache with only DIR's sources, lists and caches.
apt_source_apt() {
  local tool="$1" d="$2"
  shift 2
  "$tool" -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$d/sources.list.d" \
    -o Dir::State::Lists="$d/lists" -o Dir::Cache="$d/cache" -o Dir::State::status=/dev/null \
    -o APT::Sandbox::User=root "$@"
}

# apt_source_fetch APT_DIR DEST MIRROR SUITE PKG=VERSION...: writes the private configuration into
# APT_DIR, fetches SUITE's source index from MIRROR and unpacks each pinned source package into DEST.
# Exit 1, saying why, when the index cannot be fetched or a pin is not on the mirror.
apt_source_fetch() {
  local d="$1" dest="$2" mirror="$3" suite="$4"
  shift 4
  mkdir -p "$d/sources.list.d" "$d/lists/partial" "$d/cache/archives/partial" "$dest"
  cat >"$d/sources.list.d/debian-src.sources" <<EOF
Types: deb-src
URIs: $mirror
Suites: $suite
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  # apt-get update exits 0 when it cannot fetch an index (it warns and carries on without it), so success
  # is the index on disk; without it every `apt-get source` below would only say the package is unknown.
  apt_source_apt apt-get "$d" -q update 2>&1 | tee "$d/update.log"
  if ! compgen -G "$d/lists/*_dists_${suite}_*Sources*" >/dev/null; then
    log "cannot fetch the $suite source index from the mirror $mirror (apt-get update said:" \
      "$(grep -E '^(E:|W: Failed)' "$d/update.log" | head -n 2 | tr '\n' ' ' | sed 's/ *$//'))." \
      "Check that this machine reaches it (DNS, proxy: http_proxy/no_proxy, firewall), or set" \
      "K8S_AGENT_DEBIAN_MIRROR to a Debian mirror it reaches; its Release file must verify with /usr/share/keyrings/debian-archive-keyring.gpg"
    return 1
  fi
  local pkg ver
  for pkg in "$@"; do
    if ! (cd "$dest" && apt_source_apt apt-get "$d" -q source "$pkg"); then
      ver="$(apt_source_apt apt-cache "$d" showsrc "${pkg%%=*}" 2>/dev/null | sed -n 's/^Version: //p' | tr '\n' ' ')"
      log "apt-get source $pkg failed; the mirror has ${pkg%%=*} ${ver:-none}: update the pin in $0"
      return 1
    fi
  done
}
