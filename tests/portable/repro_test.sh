#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The release is reproducible across builds, not only across archives of one build: a second, independent
# build of the commit the tree is at (a fresh clone at another path, of another length, configured with
# the same preset) gives the same bytes as BUILD_DIR's: the agent with its debug info stripped (what
# release.sh ships) and scripts/release.sh's tarball. The unstripped agents are compared too (the debug
# info holds no build path: CMakeLists.txt maps them). Only the programs the archive ships (k8s-agent,
# k8s-agent-inject, k8s-agent-sshd, k8s-agent-deliver) are built the second time, at -j${K8S_REPRO_JOBS:-2};
# the time it took is printed.
#
# usage: repro_test.sh SOURCE_DIR BUILD_DIR SANITIZED(ON|OFF) [ARCH]
#   ARCH x86_64 (default; BUILD_DIR the "default" preset's) or aarch64 (the "aarch64" preset's;
#        tests/portable/arm64_test.sh)
# Exit 77 (skip), saying why: the sanitizer build (not released), uncommitted changes (BUILD_DIR's binary
# is then not the commit's), or BUILD_DIR's binary built from another commit than HEAD.
set -uo pipefail
src="$1" build="$2" sanitized="$3" arch="${4:-x86_64}"
# shellcheck source=tests/lib/testlib.sh
source "$(dirname "$0")/../lib/testlib.sh"
[[ "$sanitized" == ON ]] && skip "sanitizer build (only the default build is released)"
case "$arch" in
x86_64) preset=default bdir=build strip=strip run=() ;;
aarch64)
  preset=aarch64 bdir=build-aarch64 strip=aarch64-linux-gnu-strip run=(qemu-aarch64-static -L /usr/aarch64-linux-gnu)
  { command -v "$strip" && command -v qemu-aarch64-static; } >/dev/null ||
    skip "no $strip or qemu-aarch64-static: scripts/deps.sh --aarch64"
  ;;
*) fail "arch $arch" ;;
esac
src="$(cd "$src" && pwd)" build="$(cd "$build" && pwd)"
bin="$build/launcher/k8s-agent"
[[ -x "$bin" ]] || fail "no $bin"
git -C "$src" diff --quiet HEAD -- ||
  skip "uncommitted changes in $src: its build is not the commit's (commit, build, run again)"
head="$(git -C "$src" rev-parse HEAD)" || fail "$src is not a git checkout"
built="$(${run[@]+"${run[@]}"} "$bin" --version | awk '$1 == "commit" { print $2 }')"
[[ "$built" == "$head" ]] || skip "$bin is of commit ${built:-unknown}, the tree is at $head: build it again"

tmp="$(mktemp -d /tmp/k8s-agent-repro.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
# --shared: the clone borrows the objects (no copy) and writes nothing into SOURCE_DIR's repository.
clone="$tmp/second/build-of/k8s-agent"
{ git clone -q --shared --no-checkout "$src" "$clone" && git -C "$clone" checkout -q --detach "$head"; } ||
  fail "cloning $src at $head into $clone"
t0=$SECONDS
(cd "$clone" && cmake --preset "$preset" >"$tmp/configure.log" 2>&1) || {
  tail -n 20 "$tmp/configure.log"
  fail "cmake --preset $preset in $clone"
}
t1=$SECONDS
programs=(k8s-agent k8s-agent-inject k8s-agent-sshd k8s-agent-deliver)
cmake --build "$clone/$bdir" -j"${K8S_REPRO_JOBS:-2}" --target "${programs[@]}" >"$tmp/build.log" 2>&1 || {
  tail -n 20 "$tmp/build.log"
  fail "building ${programs[*]} in $clone/$bdir"
}
echo "second build in $clone/$bdir: configure $((t1 - t0)) s, ${programs[*]} $((SECONDS - t1)) s (-j${K8S_REPRO_JOBS:-2})"
other="$clone/$bdir/launcher/k8s-agent"

# What differs, when something does: build ids, how many bytes, and whether a build path shows.
explain() {
  echo "  build ids: $(readelf -n "$1" | awk '/Build ID/ { print $3 }') vs $(readelf -n "$2" | awk '/Build ID/ { print $3 }')"
  echo "  $(cmp -l "$1" "$2" | wc -l) bytes differ (sizes $(stat -c %s "$1") and $(stat -c %s "$2"))"
  echo "  build paths in the second one: $(grep -c -a -F -e "$clone" -e "$tmp" "$2")"
}
{ "$strip" --strip-debug -o "$tmp/stripped-1" "$bin" && "$strip" --strip-debug -o "$tmp/stripped-2" "$other"; } || fail "$strip"
if ! cmp -s "$tmp/stripped-1" "$tmp/stripped-2"; then
  explain "$tmp/stripped-1" "$tmp/stripped-2"
  fail "the stripped agents of two builds of $head differ"
fi
echo "ok: the stripped agents are identical ($(stat -c %s "$tmp/stripped-1") bytes, sha256 $(sha256sum <"$tmp/stripped-1" | cut -c1-16))"
if ! cmp -s "$bin" "$other"; then
  explain "$bin" "$other"
  fail "the agents with their debug info differ"
fi
echo "ok: with their debug info too ($(stat -c %s "$bin") bytes)"

a="$("$src/scripts/release.sh" --arch "$arch" --build-dir "$build" --out "$tmp/dist-first")" || fail "release.sh in $src"
b="$("$clone/scripts/release.sh" --arch "$arch" --build-dir "$clone/$bdir" --out "$tmp/dist-second")" ||
  fail "release.sh in $clone"
[[ "$(basename "$a")" == "$(basename "$b")" ]] || fail "archive names: $(basename "$a") and $(basename "$b")"
cmp -s "$a" "$b" || fail "the release archives of two builds differ: $(sha256sum "$a" "$b")"
echo "ok: $(basename "$a") is the same bytes from both builds ($(stat -c %s "$a") bytes, sha256 $(sha256sum <"$a" | cut -c1-16))"
