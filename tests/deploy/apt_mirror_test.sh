#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The Debian mirror is never written in the repository: no tracked file names a Debian archive
# host, and scripts/lib/apt_mirror.sh finds the mirror in apt sources as apt reads them. The function runs
# on fixture sources in a temporary apt directory (K8S_AGENT_APT_ETC): deb822 and one-line formats,
# third-party, disabled, cdrom and file entries passed over, the security archive found or derived, the
# override variables, and a clear failure naming K8S_AGENT_DEBIAN_MIRROR when nothing is found. The cached
# builds' `path` needs no mirror, and the scripts using the function pass shellcheck (required).
# Usage: apt_mirror_test.sh [REPO_DIR]
set -uo pipefail

repo="${1:-$(cd "$(dirname "$0")/../.." && pwd)}"
# shellcheck source=tests/lib/testlib.sh
source "$repo/tests/lib/testlib.sh"
TEST_KEEP_GOING=1
tmp="$(mktemp -d /tmp/k8s-apt-mirror.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT

# (a) No archive host in any tracked file (every file under the tree when this is not a git checkout):
# debian + .org (any host of Debian's), or deb. + a host name. The pattern is first checked on samples,
# split by an empty $d so that this file names no host either.
hosts='debian\.org|(^|[^A-Za-z0-9_.-])deb\.[A-Za-z0-9-]+\.[A-Za-z]'
d=""
for sample in "http://deb$d.debian$d.org/debian" "http://snapshot.debian$d.org/" "URIs: https://deb$d.vendor.example/x"; do
  printf '%s\n' "$sample" | grep -qE "$hosts" || fail "the host pattern misses $sample"
done
if git -C "$repo" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  found="$(git -C "$repo" grep -nIE "$hosts" -- . || true)"
else
  found="$(grep -rnIE --exclude-dir=.git --exclude-dir='build*' "$hosts" "$repo" || true)"
fi
if [[ -n "$found" ]]; then
  fail "a Debian archive host is written in the repository (the mirror comes from the apt sources or" \
    "K8S_AGENT_DEBIAN_MIRROR):"
  printf '%s\n' "$found" | head -n 20
else
  ok "no Debian archive host in the tracked files"
fi

# (b) The function on fixtures. Each case is a fresh apt dir; run() prints stdout, then "rc=N", with the
# messages (log) in $tmp/err.
# shellcheck disable=SC2317 # called by the sourced functions
log() { printf '%s\n' "$*" >&2; }
# shellcheck source=scripts/lib/apt_mirror.sh
source "$repo/scripts/lib/apt_mirror.sh"
n=0
etc() {
  n=$((n + 1))
  K8S_AGENT_APT_ETC="$tmp/etc$n"
  mkdir -p "$K8S_AGENT_APT_ETC/sources.list.d"
}
run() {
  local out rc
  out="$("$@" 2>"$tmp/err")"
  rc=$?
  printf '%s rc=%s' "$out" "$rc"
}
expect() {
  local what="$1" want="$2" got
  shift 2
  got="$(run "$@")"
  if [[ "$got" == "$want" ]]; then ok "$what: $got"; else fail "$what: got '$got', want '$want'"; fi
}
unset K8S_AGENT_DEBIAN_MIRROR K8S_AGENT_DEBIAN_SECURITY_MIRROR

# deb822, as Debian 12 and later install it; a third-party stanza sorts first, a disabled and a deb-src
# stanza come first in the Debian file; a continuation line carries the suites.
etc
cat >"$K8S_AGENT_APT_ETC/sources.list.d/a-vendor.sources" <<'EOF'
Types: deb
URIs: https://vendor.example/node_20.x
Suites: nodistro
Components: main
Signed-By: /usr/share/keyrings/vendor.gpg
EOF
cat >"$K8S_AGENT_APT_ETC/sources.list.d/debian.sources" <<'EOF'
# a comment: Types: deb URIs: http://comment.example/debian
Types: deb
URIs: http://disabled.example/debian
Suites: bookworm
Components: main
Enabled: no

Types: deb-src
URIs: http://src.example/debian
Suites: bookworm
Components: main

Types: deb
URIs: http://mirror.example/debian/
Suites:
 bookworm bookworm-updates
Components: main contrib
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://mirror.example/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
expect "deb822 main" "http://mirror.example/debian rc=0" apt_mirror
expect "deb822 security" "http://mirror.example/debian-security rc=0" apt_mirror_security

# One-line sources.list (read before sources.list.d): cdrom, a third-party line, a foreign key, deb-src,
# the security line first, then the mirror with options and a trailing comment.
etc
cat >"$K8S_AGENT_APT_ETC/sources.list" <<'EOF'
deb cdrom:[Debian GNU/Linux 12.5.0 _Bookworm_ - Official amd64 DVD Binary-1]/ bookworm contrib main
deb file:/srv/local-repo bookworm main
deb [arch=amd64 signed-by=/usr/share/keyrings/docker.gpg] https://download.example/linux/debian bookworm stable
deb [signed-by=/usr/share/keyrings/vendor.gpg] http://vendor.example/debian bookworm main
deb-src http://src.example/debian bookworm main
deb http://local.example:3142/debian-security/ bookworm-security main
deb [ arch=amd64 ] http://local.example:3142/debian bookworm main non-free-firmware # the mirror
EOF
cat >"$K8S_AGENT_APT_ETC/sources.list.d/later.list" <<'EOF'
deb http://later.example/debian bookworm main
EOF
expect "one-line main" "http://local.example:3142/debian rc=0" apt_mirror
expect "one-line security" "http://local.example:3142/debian-security rc=0" apt_mirror_security

# No security entry: derived from the main mirror; a *.list in sources.list.d counts.
etc
echo "deb https://only.example/debian trixie main" >"$K8S_AGENT_APT_ETC/sources.list.d/debian.list"
expect "derived security" "https://only.example/debian-security rc=0" apt_mirror_security

# The overrides win over the sources (trailing slash dropped).
K8S_AGENT_DEBIAN_MIRROR=http://override.example/debian/ \
  expect "override" "http://override.example/debian rc=0" apt_mirror
K8S_AGENT_DEBIAN_SECURITY_MIRROR=http://override.example/sec \
  expect "security override" "http://override.example/sec rc=0" apt_mirror_security

# Nothing usable (no sources at all; only third-party and deb-src entries): a failure that says what to
# set.
for sources in "" "deb https://vendor.example/apt stable main
deb [arch=amd64] https://dl.example/linux/chrome/deb/ stable main
deb http://vendor.example/debian/12/prod bookworm main
deb-src http://mirror.example/debian trixie main"; do
  etc
  what="no"
  [[ -z "$sources" ]] || { what="only foreign" && printf '%s\n' "$sources" >"$K8S_AGENT_APT_ETC/sources.list"; }
  for f in apt_mirror apt_mirror_security; do
    got="$(run "$f")"
    if [[ "$got" == " rc=1" ]] && grep -q 'set K8S_AGENT_DEBIAN_MIRROR' "$tmp/err"; then
      ok "$f with $what sources fails: $(head -n1 "$tmp/err")"
    else
      fail "$f with $what sources: got '$got', message '$(cat "$tmp/err")'"
    fi
  done
done

# `path` of every cached build keys nothing on the mirror: it works with no Debian sources at all.
for s in scripts/third_party.sh tests/bed/ompi5_root.sh tests/realapi/apiserver_build.sh; do
  if K8S_AGENT_APT_ETC="$tmp/none" bash "$repo/$s" path >/dev/null 2>"$tmp/err"; then
    ok "$s path needs no mirror"
  else
    fail "$s path: $(cat "$tmp/err")"
  fi
done

if ! command -v shellcheck >/dev/null; then
  fail "shellcheck not installed (scripts/deps.sh installs it)"
elif (cd "$repo" && shellcheck -x scripts/lib/*.sh scripts/third_party.sh scripts/debian-image.sh \
  tests/bed/ompi5_root.sh tests/realapi/apiserver_build.sh tests/deploy/apt_mirror_test.sh); then
  ok "shellcheck"
else
  fail "shellcheck"
fi

testlib_exit PASS
