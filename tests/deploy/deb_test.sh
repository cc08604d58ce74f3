#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Packages a built tree with CPack (DEB), checks the control fields and the
# contents, installs the package with dpkg -i into a scratch root and runs
# the installed k8s-agent --version. Also checks that the sysconfdir presets
# install only when asked and never replace an existing file (all under a
# scratch DESTDIR).
# Usage: deb_test.sh BUILD_DIR (k8s-agent built there).
# shellcheck disable=SC2015 # "check && ok || fail": ok always succeeds
set -euo pipefail

build="${1:?usage: deb_test.sh BUILD_DIR}"
# shellcheck source=tests/lib/testlib.sh
source "$(dirname "$0")/../lib/testlib.sh"
TEST_KEEP_GOING=1
for tool in cpack dpkg dpkg-deb; do
  command -v "$tool" >/dev/null || skip "$tool not installed"
done
if [[ ! -f "$build/CPackConfig.cmake" ]]; then
  echo "FAIL: no $build/CPackConfig.cmake: is launcher/packaging.cmake included from CMakeLists.txt?" >&2
  exit 1
fi
tmp="$(mktemp -d /tmp/k8s-deploy-deb.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT

# Package into the temp dir: the build tree stays as it was.
cpack --config "$build/CPackConfig.cmake" -G DEB -B "$tmp/pkg" >"$tmp/cpack.log" 2>&1 ||
  { cat "$tmp/cpack.log" >&2; echo "FAIL: cpack -G DEB" >&2; exit 1; }
debs=("$tmp"/pkg/*.deb)
if [[ ${#debs[@]} -ne 1 || ! -f "${debs[0]}" ]]; then
  echo "FAIL: expected one .deb, got: ${debs[*]}" >&2
  exit 1
fi
deb="${debs[0]}"
ok "built $(basename "$deb")"

# --- Control fields.
field() { dpkg-deb -f "$deb" "$1"; }
[[ "$(field Package)" == k8s-agent ]] && ok "Package: k8s-agent" || fail "Package is '$(field Package)'"
[[ -n "$(field Maintainer)" ]] && ok "Maintainer: $(field Maintainer)" || fail "no Maintainer"
[[ -n "$(field Description)" ]] || fail "no Description"
depends="$(field Depends)"
echo "Depends: $depends"
# The binary is static but for glibc: libc6 and nothing of the libraries
# it links.
deps="$(tr ',|' '\n' <<<"$depends" | awk '{print $1}')"
grep -qx libc6 <<<"$deps" && ok "Depends on libc6" || fail "Depends lacks libc6"
for dep in libcurl4 libssh2-1 libyaml-cpp0.7; do
  # Whole package names only: "libcurl4" must not match "libcurl4-gnutls".
  if grep -qx "$dep" <<<"$deps"; then
    fail "Depends on $dep (it is linked in)"
  else
    ok "no Depends on $dep"
  fi
done
grep -qw openmpi-bin <<<"$(field Recommends)" && ok "Recommends openmpi-bin" ||
  fail "Recommends is '$(field Recommends)'"

# --- Contents.
dpkg-deb --contents "$deb" | awk '{print $6}' >"$tmp/contents"
for path in ./usr/bin/k8s-agent ./usr/bin/k8s-agent-inject ./usr/share/k8s-agent/ompi-conf/openmpi-mca-params.conf \
  ./usr/share/k8s-agent/ompi-conf/prte-mca-params.conf; do
  grep -qx "$path" "$tmp/contents" && ok "contains $path" || fail "lacks $path"
done
# Open MPI's files in /etc/openmpi belong to openmpi-common.
if grep -q '^\./etc/' "$tmp/contents"; then
  fail "the package writes into /etc: $(grep '^\./etc/' "$tmp/contents" | tr '\n' ' ')"
else
  ok "nothing in /etc"
fi

# --- dpkg -i into a scratch root. Its database is empty, so the
# dependencies (present on this machine) cannot be satisfied there.
root="$tmp/root"
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
touch "$root/var/lib/dpkg/status" "$root/var/lib/dpkg/available"
if dpkg --root="$root" --log="$tmp/dpkg.log" --force-depends --force-not-root \
  -i "$deb" >"$tmp/dpkg.out" 2>&1; then
  ok "dpkg -i into a scratch root"
else
  cat "$tmp/dpkg.out" >&2
  fail "dpkg -i --root"
fi
status="$(dpkg --root="$root" -s k8s-agent 2>/dev/null | sed -n 's/^Status: //p')"
[[ "$status" == "install ok installed" ]] && ok "dpkg status: $status" || fail "dpkg status is '$status'"
version="$("$root/usr/bin/k8s-agent" --version 2>&1)" && ok "installed k8s-agent --version: $version" ||
  fail "installed k8s-agent --version failed: $version"
grep -qF "$(field Version)" <<<"$version" || fail "--version '$version' does not name $(field Version)"

# --- Sysconfdir presets, in a scratch DESTDIR only.
sysconf="$(sed -n 's/^K8S_AGENT_OMPI_SYSCONFDIR:PATH=//p' "$build/CMakeCache.txt")"
asked="$(sed -n 's/^K8S_AGENT_INSTALL_OMPI_CONF:BOOL=//p' "$build/CMakeCache.txt")"
[[ -n "$sysconf" ]] || fail "K8S_AGENT_OMPI_SYSCONFDIR not in the cache"
dest="$tmp/destdir"
if [[ "${asked^^}" != ON ]]; then
  DESTDIR="$dest" cmake --install "$build" --prefix /usr >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log" >&2; fail "cmake --install"; }
  [[ -x "$dest/usr/bin/k8s-agent" ]] && ok "cmake --install: usr/bin/k8s-agent" || fail "cmake --install: no k8s-agent"
  [[ ! -e "$dest$sysconf" ]] && ok "not asked: nothing in $sysconf" || fail "installed into $sysconf unasked"
fi
install_sysconf() {
  DESTDIR="$dest" cmake --install "$build" --component ompi-sysconf >"$tmp/sysconf.log" 2>&1
}
install_sysconf || { cat "$tmp/sysconf.log" >&2; fail "install component ompi-sysconf"; }
conf="$dest$sysconf/openmpi-mca-params.conf"
src="$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")"
cmp -s "$conf" "$src/ompi-conf/openmpi-mca-params.conf" &&
  ok "asked: preset installed in $sysconf" || fail "asked: $conf missing or different"
echo "# the user's own settings" >"$conf"
install_sysconf || fail "second install"
[[ "$(cat "$conf")" == "# the user's own settings" ]] && ok "existing file kept" || fail "existing file replaced"
[[ -f "$conf.k8s-agent-new" ]] && ok "preset beside it as .k8s-agent-new" || fail "no $conf.k8s-agent-new"
grep -q "keeping the existing" "$tmp/sysconf.log" && ok "the install says so" || fail "no message about the kept file"

testlib_exit PASS
