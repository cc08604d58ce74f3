#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The shipped binary is static but for glibc and needs nothing newer than
# GLIBC_2.34 (Ubuntu 22.04, RHEL 9, Debian 12), and carries libssh2 1.11
# and the pinned OpenSSL.
#
# usage: portable_binary_test.sh K8S_AGENT_BINARY SANITIZED(ON|OFF) [ARCH]
#   ARCH x86_64 (default) or aarch64: the cross-built binary, read with the
#   aarch64 binutils (readelf for what ldd says of a native one, since ldd
#   cannot load a foreign binary) and run under qemu-user.
# Exit 77 (skip) for the sanitizer build, which links its runtimes shared
# and is never shipped.
set -uo pipefail
bin="$1"
arch="${3:-x86_64}"
# shellcheck source=tests/lib/testlib.sh
source "$(dirname "$0")/../lib/testlib.sh"
if [[ "${2:-OFF}" == ON ]]; then
  skip "sanitizer build (ASan/UBSan runtimes are shared libraries; only the default build ships)"
fi
case "$arch" in
x86_64) objdump=objdump run=() ;;
aarch64) objdump=aarch64-linux-gnu-objdump run=(qemu-aarch64-static -L /usr/aarch64-linux-gnu) ;;
*) fail "arch $arch" ;;
esac
TEST_KEEP_GOING=1

# 1. ldd: only glibc's own libraries and the loader (aarch64: the NEEDED
#    entries and the program interpreter, which is what ldd would list; the
#    loader is NEEDED there too, for __stack_chk_guard, which aarch64's
#    glibc keeps in ld.so).
allowed='^(linux-vdso\.so\.1|libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|/lib64/ld-linux-x86-64\.so\.2|(/lib/)?ld-linux-aarch64\.so\.1)$'
if [[ "$arch" == x86_64 ]]; then
  libs="$(ldd "$bin" | awk '{print $1}')"
else
  machine="$(readelf -h "$bin" | sed -n 's/^ *Machine: *//p')"
  [[ "$machine" == AArch64 ]] || fail "$bin is a '$machine' binary, not AArch64"
  libs="$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'
    readelf -l "$bin" | sed -n 's/.*Requesting program interpreter: \(.*\)\]$/\1/p')"
fi
[[ -n "$libs" ]] || fail "ldd printed nothing for $bin"
while read -r lib; do
  [[ -z "$lib" ]] && continue
  if [[ "$lib" =~ $allowed ]]; then echo "ok: needs $lib"; else fail "needs $lib (only glibc may be shared)"; fi
done <<<"$libs"

# 2. objdump -T: every versioned symbol is GLIBC_2.34 or older; no
#    libstdc++/libgcc versions (those are linked in).
versions="$("$objdump" -T "$bin" | grep -o '(\?\(GLIBC\|GLIBCXX\|CXXABI\|GCC\)_[0-9.]*' | tr -d '(' | sort -uV)"
[[ -n "$versions" ]] || fail "objdump -T shows no symbol versions"
while read -r v; do
  [[ -z "$v" ]] && continue
  case "$v" in
  GLIBC_*)
    n="${v#GLIBC_}"
    if [[ "$(printf '%s\n2.34\n' "$n" | sort -V | tail -n1)" == 2.34 ]]; then
      echo "ok: $v"
    else
      fail "$v is newer than GLIBC_2.34: $("$objdump" -T "$bin" | grep -F "($v)" | awk '{print $NF}' | tr '\n' ' ')"
    fi
    ;;
  *) fail "$v: $("$objdump" -T "$bin" | grep -F "$v" | awk '{print $NF}' | head -n3 | tr '\n' ' ')(libstdc++/libgcc must be static)" ;;
  esac
done <<<"$versions"

# 3. The SSH library is the one built from Debian 13's source (its banner).
banner="$(grep -ao 'SSH-2\.0-libssh2_[0-9.]*' "$bin" | head -n1)"
case "$banner" in
SSH-2.0-libssh2_1.1[1-9].*) echo "ok: $banner" ;;
*) fail "libssh2 banner '${banner:-none}', want >= 1.11.1" ;;
esac

# 4. It runs (exceptions unwind through the static libgcc: a YAML error).
out="$(${run[@]+"${run[@]}"} "$bin" --version 2>&1)" || fail "--version: $out"
echo "ok: $out"
# 5. Its OpenSSL is the pinned one (scripts/lib/bookworm_debs.sh), the same on both arches, never the
#    build host's libssl-dev.
# shellcheck source=scripts/lib/bookworm_debs.sh
source "$(dirname "$0")/../../scripts/lib/bookworm_debs.sh"
pinned="${LIBSSL_DEV_PIN#*=}"
pinned="${pinned%%-*}"
if grep -q "^linked: OpenSSL $pinned," <<<"$out"; then
  echo "ok: OpenSSL $pinned, the pin ($LIBSSL_DEV_PIN)"
else
  fail "--version names $(grep -o 'OpenSSL [0-9.]*' <<<"$out" || echo 'no OpenSSL'), the pin is $LIBSSL_DEV_PIN (scripts/lib/bookworm_debs.sh)"
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
printf 'clusters: [\n  {a: b\n' >"$tmp/kubeconfig"
out="$(KUBECONFIG="$tmp/kubeconfig" ${run[@]+"${run[@]}"} "$bin" somehost true 2>&1)"
rc=$?
if [[ $rc -eq 255 && "$out" == *yaml* ]]; then echo "ok: a YAML error is reported (exit 255)"; else fail "bad kubeconfig: exit $rc: $out"; fi

testlib_exit PASS
