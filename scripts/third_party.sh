#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Builds the static libraries the one shipped k8s-agent binary links: libssh2 and a minimal libcurl from
# Debian 13's own source packages (fetched and verified by apt-get source), pinned, built once, cached.
#
# usage: third_party.sh ensure   print the install prefix, building it first if it is missing or broken
#        third_party.sh path     print the prefix it would use (no build)
#        third_party.sh check    exit 0 if the cached prefix is complete
# Exit: 0 ok, 1 failure (a message says why and what to do).
#
# Why build at all: Debian 12's libssh2 1.10 has no rsa-sha2 (OpenSSH >= 8.8 refuses RSA keys signed with
# SHA-1), no strict KEX and no channel "signal" request; its libcurl drags in Kerberos, LDAP, RTMP, GnuTLS,
# libpsl... (37 shared libraries). OpenSSL, nghttp2 and yaml-cpp come static from Debian 12's -dev packages
# (they ship .a files), so only these two are built.
#
# Fetching (scripts/lib/apt_source.sh): a private apt configuration under the build directory lists only a
# deb-src line of trixie, signed by the host's debian-archive-keyring (which has the trixie keys), on the
# Debian mirror the host's apt uses (scripts/lib/apt_mirror.sh reads it from the host's sources;
# K8S_AGENT_DEBIAN_MIRROR overrides it); the host's sources are never changed. apt checks the Release
# signature and every file's hash, dpkg-source applies Debian's patches. Nothing else is downloaded.
#
# Cache: $K8S_AGENT_CACHE (default /var/cache/k8s-agent)/third-party-<hash>, the hash covering the recipe
# (pins, flags, TP_STEPS_VERSION), the compiler and the Debian -dev packages compiled against, not the
# mirror (apt verifies the pinned sources: any mirror gives the same build). Built under an exclusive flock
# in a temporary directory beside it and renamed into place, so a killed build never leaves a half prefix
# under the final name.
set -uo pipefail

: "${K8S_AGENT_CACHE:=/var/cache/k8s-agent}"

# Bump when the build steps below change in a way that changes the result.
TP_STEPS_VERSION=1

# Pins: exact Debian source versions. When Debian supersedes one (a security update), apt-get source fails
# and names nothing: `ensure` then prints the version the mirror has; update the pin here (that changes the
# hash, so the new build lands beside the old one).
LIBSSH2_VERSION=1.11.1-1+deb13u2
CURL_VERSION=8.14.1-2+deb13u5

# Debian 12 packages whose static libraries and headers go into the build (scripts/deps.sh installs them).
TP_DEV_PACKAGES="libssl-dev libnghttp2-dev libyaml-cpp-dev"

# Hardening as Debian builds; PIC so the objects link into the (PIE) agent.
TP_CFLAGS="-O2 -g0 -fPIC -fstack-protector-strong -D_FORTIFY_SOURCE=2"

# libssh2: OpenSSL backend (rsa-sha2, ed25519, ECDSA, curve25519, AES-GCM/CTR, chacha20), no zlib
# compression (the agent never asks for it), no examples/tests/docs.
LIBSSH2_CMAKE_FLAGS=(
  -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DBUILD_STATIC_LIBS=ON -DCRYPTO_BACKEND=OpenSSL
  -DENABLE_ZLIB_COMPRESSION=OFF -DBUILD_EXAMPLES=OFF -DBUILD_TESTING=OFF -DLINT=OFF
  -DCMAKE_POSITION_INDEPENDENT_CODE=ON
)

# libcurl: HTTPS over OpenSSL, HTTP/1.1 and HTTP/2 (nghttp2; ALPN picks what the server offers), proxies
# from the environment as kubectl honours them. Everything else is off. No CA bundle or path is baked in:
# the agent always names its CA (the service account's ca.crt, the kubeconfig's), and a path of this build
# machine would be wrong on other distributions. OpenSSL's config file is not auto-loaded either (another
# distribution's openssl.cnf may name providers this OpenSSL does not have).
CURL_CONFIGURE_FLAGS=(
  --disable-shared --enable-static --with-pic
  --with-openssl --with-nghttp2 --without-zlib --without-brotli --without-zstd
  --without-libpsl --without-libidn2 --without-librtmp --without-libssh2 --without-libssh --without-wolfssh
  --without-gssapi --without-nghttp3 --without-ngtcp2 --without-quiche --without-msh3 --without-libuv
  --without-ca-bundle --without-ca-path --without-ca-embed --without-ca-fallback
  --disable-openssl-auto-load-config
  --disable-ldap --disable-ldaps --disable-rtsp --disable-dict --disable-telnet --disable-tftp --disable-pop3
  --disable-imap --disable-smb --disable-smtp --disable-gopher --disable-mqtt --disable-ftp --disable-file
  --disable-ipfs --disable-websockets --disable-ntlm --disable-kerberos-auth --disable-negotiate-auth
  --disable-aws --disable-alt-svc --disable-hsts --disable-cookies --disable-netrc --disable-mime
  --disable-form-api --disable-bindlocal --disable-tls-srp --disable-unix-sockets --disable-ares
  --disable-manual --disable-docs --disable-libcurl-option --enable-threaded-resolver --enable-ipv6
  --without-fish-functions-dir --without-zsh-functions-dir
)

log() { printf '[third-party %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
# shellcheck source=scripts/lib/cache.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cache.sh"
# shellcheck source=scripts/lib/apt_source.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/apt_source.sh"

# What the build depends on beyond this file: the compiler and the exact -dev packages compiled against.
recipe_inputs() {
  printf '%s\n' "steps=$TP_STEPS_VERSION libssh2=$LIBSSH2_VERSION curl=$CURL_VERSION" "cflags=$TP_CFLAGS" \
    "libssh2: ${LIBSSH2_CMAKE_FLAGS[*]}" "curl: ${CURL_CONFIGURE_FLAGS[*]}"
  gcc --version 2>/dev/null | head -n1
  # shellcheck disable=SC2086
  dpkg-query -W -f='${Package}=${Version}\n' $TP_DEV_PACKAGES 2>/dev/null
}
TP_KEY="$(recipe_inputs | sha256sum | cut -c1-12)"
TP_PREFIX="$K8S_AGENT_CACHE/third-party-$TP_KEY"
TP_STAMP=".k8s-agent-third-party-stamp"
TP_RECIPE="libssh2=$LIBSSH2_VERSION curl=$CURL_VERSION key=$TP_KEY"

tp_check() {
  local p="$1" f
  [[ "$(cat "$p/$TP_STAMP" 2>/dev/null)" == "$TP_RECIPE" ]] || return 1
  for f in lib/libssh2.a lib/libcurl.a include/libssh2.h include/curl/curl.h; do
    [[ -s "$p/$f" ]] || return 1
  done
}

# Every -dev package present, else the install line to run.
check_dev_packages() {
  local p missing=()
  for p in $TP_DEV_PACKAGES dpkg-dev cmake make gcc; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    log "missing build packages: apt-get install ${missing[*]} (or run scripts/deps.sh)"
    return 1
  fi
}

# fetch_sources TMP MIRROR: the two pinned source packages, unpacked into TMP/src (scripts/lib/apt_source.sh).
fetch_sources() {
  apt_source_fetch "$1/apt" "$1/src" "$2" trixie "libssh2=$LIBSSH2_VERSION" "curl=$CURL_VERSION"
}

build_libssh2() {
  local t="$1" s
  s="$(find "$t/src" -maxdepth 1 -type d -name 'libssh2-*' | head -n1)"
  CFLAGS="$TP_CFLAGS" cmake -S "$s" -B "$t/build-libssh2" "${LIBSSH2_CMAKE_FLAGS[@]}" \
    -DCMAKE_INSTALL_PREFIX="$t/prefix" -DCMAKE_INSTALL_LIBDIR=lib &&
    cmake --build "$t/build-libssh2" -j2 &&
    cmake --install "$t/build-libssh2"
}

build_curl() {
  local t="$1" s
  s="$(find "$t/src" -maxdepth 1 -type d -name 'curl-*' | head -n1)"
  (cd "$s" && CFLAGS="$TP_CFLAGS" ./configure --prefix="$t/prefix" --libdir="$t/prefix/lib" \
    "${CURL_CONFIGURE_FLAGS[@]}" && make -j2 -C lib libcurl.la && make -C lib install-libLTLIBRARIES && make -C include install)
}

tp_ensure() {
  local t rc mirror
  if tp_check "$TP_PREFIX"; then
    printf '%s\n' "$TP_PREFIX"
    return 0
  fi
  if ! mkdir -p "$K8S_AGENT_CACHE" 2>/dev/null || [[ ! -w "$K8S_AGENT_CACHE" ]]; then
    log "cannot write $K8S_AGENT_CACHE to build libssh2 and libcurl once: run 'sudo $0 ensure'," \
      "or set K8S_AGENT_CACHE to a writable directory"
    return 1
  fi
  cache_lock "$K8S_AGENT_CACHE" third-party 1800 || return 1
  if tp_check "$TP_PREFIX"; then
    printf '%s\n' "$TP_PREFIX"
    return 0
  fi
  check_dev_packages || return 1
  mirror="$(apt_mirror)" || return 1
  cache_sweep "$K8S_AGENT_CACHE" third-party
  t="$(cache_mktemp "$K8S_AGENT_CACHE" third-party)" || return 1
  mkdir -p "$t/src" "$t/prefix"
  log "building libssh2 $LIBSSH2_VERSION and curl $CURL_VERSION into $TP_PREFIX (a few minutes; log $t.log)"
  local t0=$SECONDS
  {
    fetch_sources "$t" "$mirror" && build_libssh2 "$t" && build_curl "$t"
  } >"$t.log" 2>&1
  rc=$?
  if ((rc != 0)) || ! printf '%s' "$TP_RECIPE" >"$t/prefix/$TP_STAMP" || ! tp_check "$t/prefix"; then
    tail -n 30 "$t.log" >&2
    log "building the third-party libraries failed (exit $rc); log kept in $t.log"
    rm -rf --one-file-system "$t"
    return 1
  fi
  mv "$t.log" "$t/prefix/.build.log"
  # The source packages stay for the licence texts and for anyone auditing the build.
  mkdir -p "$t/prefix/share/sources"
  find "$t/src" -maxdepth 1 -type f -exec mv {} "$t/prefix/share/sources/" \;
  cache_install "$t/prefix" "$TP_PREFIX" third-party || return 1
  rm -rf --one-file-system "$t"
  log "built $TP_PREFIX in $((SECONDS - t0)) s"
  printf '%s\n' "$TP_PREFIX"
}

case "${1:-}" in
ensure) tp_ensure ;;
path) printf '%s\n' "$TP_PREFIX" ;;
check) tp_check "$TP_PREFIX" ;;
*)
  sed -n '5,8p' "$0" >&2
  exit 2
  ;;
esac
