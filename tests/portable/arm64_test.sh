#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The linux-aarch64 release binary (label arm64): cross-built by the "aarch64" preset into
# SOURCE_DIR/build-aarch64, tested here under qemu-user (qemu-aarch64-static with the cross glibc of
# /usr/aarch64-linux-gnu) with the x86_64 tests' own scripts, the agent path pointing at the arm64 one.
# Only the agent is emulated: sshd, the fake API server and the test harness are the host's.
#
# usage: arm64_test.sh SOURCE_DIR SANITIZED(ON|OFF) MODE [ARGS...]
#   build                   configure and build the preset's targets, the programs the archive ships (fixture
#                           arm64: a cold build makes the arm64 third-party prefix first)
#   portable                tests/portable/portable_binary_test.sh: glibc only, <= GLIBC_2.34, runs
#   layout                  tests/launcher/idle_path_layout.py: the idle path ordered by lld
#   release                 tests/portable/release_test.sh archive: release.sh --arch aarch64's tarball
#   reproducible            tests/portable/repro_test.sh: a second cross build of the commit elsewhere
#                           gives the same agent and tarball
#   agent FILE SCENARIO     tests/integration/agent/FILE SCENARIO with the arm64 agent under qemu
# Exit 77 (skip), saying why: the sanitizer build (only the default build's tests run the arm64 ones), no
# cross toolchain or no qemu-user (scripts/deps.sh --aarch64 installs them), or no arm64 binary (the build
# test did not run or skipped).
set -uo pipefail
src="$1" sanitized="$2" mode="$3"
shift 3
build="$src/build-aarch64"
bin="$build/launcher/k8s-agent"
skip() {
  echo "SKIP: $*"
  exit 77
}
[[ "$sanitized" == ON ]] && skip "sanitizer build: the arm64 tests run in the default build's ctest only"
for tool in aarch64-linux-gnu-g++ aarch64-linux-gnu-objdump qemu-aarch64-static; do
  command -v "$tool" >/dev/null || skip "no $tool: scripts/deps.sh --aarch64 installs the cross toolchain and qemu-user"
done
[[ -e /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 ]] ||
  skip "no /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 (libc6-arm64-cross): scripts/deps.sh --aarch64"
if [[ "$mode" != build && ! -x "$bin" ]]; then
  skip "no $bin: the arm64.build test builds it (cmake --preset aarch64 && cmake --build --preset aarch64)"
fi

case "$mode" in
build)
  cd "$src" || exit 1
  t0=$SECONDS
  cmake --preset aarch64 >/dev/null || exit 1
  cmake --build --preset aarch64 || exit 1
  echo "ok: $bin built in $((SECONDS - t0)) s: $(readelf -h "$bin" | sed -n 's/^ *Machine: *//p')"
  ;;
portable)
  exec "$src/tests/portable/portable_binary_test.sh" "$bin" OFF aarch64
  ;;
layout)
  # Linked by lld: GNU ld cannot order by symbol (launcher/CMakeLists.txt).
  linker="$(readelf -p .comment "$bin" | grep -o 'Linker: .*LLD [0-9.]*')" || {
    echo "FAIL: $bin was not linked by lld: $(readelf -p .comment "$bin" | tr -s ' \n' ' ')"
    exit 1
  }
  echo "ok: $linker"
  NM=aarch64-linux-gnu-nm exec /usr/bin/python3 "$src/tests/launcher/idle_path_layout.py" \
    "$src/launcher/idle_path.order" "$bin"
  ;;
release)
  exec "$src/tests/portable/release_test.sh" "$src" "$build" OFF archive aarch64
  ;;
reproducible)
  exec "$src/tests/portable/repro_test.sh" "$src" "$build" OFF aarch64
  ;;
agent)
  file="$1" scenario="$2"
  tmp="$(mktemp -d /tmp/k8s-agent-arm64.XXXXXX)"
  trap 'rm -rf "$tmp"' EXIT
  # exec: the harness's agent pid (signals, wait) is qemu's, which runs the agent in its own process.
  printf '#!/bin/sh\nexec qemu-aarch64-static -L /usr/aarch64-linux-gnu %q "$@"\n' "$bin" >"$tmp/k8s-agent"
  chmod 755 "$tmp/k8s-agent"
  "$tmp/k8s-agent" --version | head -n1 | grep -q '^k8s-agent ' || {
    echo "FAIL: $bin --version under qemu: $("$tmp/k8s-agent" --version 2>&1)"
    exit 1
  }
  t0=$(date +%s%N)
  "$src/tests/integration/agent/$file" "$tmp/k8s-agent" "$scenario"
  rc=$?
  echo "arm64 agent scenario $scenario: exit $rc in $((($(date +%s%N) - t0) / 1000000)) ms under qemu"
  exit $rc
  ;;
*)
  echo "FAIL: mode $mode"
  exit 1
  ;;
esac
