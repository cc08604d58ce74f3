#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Builds the static libraries the one shipped k8s-agent binary links: libssh2 and a minimal libcurl from
# Debian 13's own source packages (fetched and verified by apt-get source), pinned, built once, cached.
#
# usage: third_party.sh ensure [ARCH]   print the install prefix, building it first if it is missing or broken
#        third_party.sh path [ARCH]     print the prefix it would use (no build)
#        third_party.sh check [ARCH]    exit 0 if the cached prefix is complete
#   ARCH x86_64 (the default: the host's compiler and -dev packages) or aarch64 (cross-built, below)
# Exit: 0 ok, 1 failure (a message says why and what to do).
#
# Why build at all: Debian 12's libssh2 1.10 has no rsa-sha2 (OpenSSH >= 8.8 refuses RSA keys signed with
# SHA-1), no strict KEX and no channel "signal" request; its libcurl drags in Kerberos, LDAP, RTMP, GnuTLS,
# libpsl... (37 shared libraries). OpenSSL, nghttp2 and yaml-cpp come static from Debian 12's -dev packages
# (they ship .a files), so only these two are built.
#
# OpenSSL is pinned, fetched and unpacked, never the host's: the host's libssl-dev is whatever its last
# upgrade left (3.0.19 on one machine, 3.0.22 on another), so two machines would ship one commit with two
# OpenSSLs, and the arm64 build (which cannot use the host's) another again. scripts/lib/bookworm_debs.sh
# holds the one pin (LIBSSL_DEV_PIN) the x86_64 and aarch64 agents and portable sshds all link; the
# prefix holds its lib/libssl.a, lib/libcrypto.a, include/openssl/, its copyright file under share/doc/,
# and share/debs.txt naming the package, its version and source (the SBOM reads it).
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
#
# aarch64: the same two builds with Debian's cross toolchain (aarch64-linux-gnu-gcc, cmake/aarch64-linux-gnu.cmake)
# into third-party-aarch64-<hash>, whose key adds the arch, the cross compiler and the pinned arm64 -dev
# packages (the x86_64 key is computed as before). Those packages (OpenSSL, nghttp2, yaml-cpp: the same Debian
# 12 -dev packages, built for arm64) are not installed: a multiarch :arm64 package must have its amd64
# twin's exact version, so installing one upgrades the host's libssl-dev whenever the mirror has moved on
# (which changes the x86_64 build and its key). They are fetched as OpenSSL is (above) and unpacked into
# the prefix the same way.
set -uo pipefail

: "${K8S_AGENT_CACHE:=/var/cache/k8s-agent}"

# Bump when the build steps below change in a way that changes the result.
TP_STEPS_VERSION=2

# Pins: exact Debian source versions. When Debian supersedes one (a security update), apt-get source fails
# and names nothing: `ensure` then prints the version the mirror has; update the pin here (that changes the
# hash, so the new build lands beside the old one).
LIBSSH2_VERSION=1.11.1-1+deb13u2
CURL_VERSION=8.14.1-2+deb13u5

# Debian 12 packages whose static libraries and headers the x86_64 build takes from the host (scripts/deps.sh
# installs them); OpenSSL is the pinned one (above).
TP_DEV_PACKAGES="libnghttp2-dev libyaml-cpp-dev"

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

TP_CROSS=aarch64-linux-gnu
# Bump when the aarch64-only steps change.
TP_AARCH64_STEPS_VERSION=1

TP_ARCH="${2:-x86_64}"
case "$TP_ARCH" in
x86_64 | aarch64) ;;
*)
  echo "third_party.sh: unknown arch '$TP_ARCH' (x86_64 or aarch64)" >&2
  exit 2
  ;;
esac
TP_REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

log() { printf '[third-party %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
# shellcheck source=scripts/lib/cache.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cache.sh"
# shellcheck source=scripts/lib/apt_source.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/apt_source.sh"
# shellcheck source=scripts/lib/bookworm_debs.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/bookworm_debs.sh"
# The pinned Debian 12 binary packages unpacked into the prefix, and the static libraries taken from them:
# OpenSSL on both arches (its pin is the sshd's too: scripts/lib/bookworm_debs.sh); for aarch64 also the
# arm64 builds of the host -dev packages above.
if [[ "$TP_ARCH" == x86_64 ]]; then
  TP_DEB_ARCH=amd64 TP_TRIPLET=x86_64-linux-gnu
  TP_DEBS=("$LIBSSL_DEV_PIN")
  TP_DEB_LIBS=(libssl libcrypto)
else
  TP_DEB_ARCH=arm64 TP_TRIPLET=$TP_CROSS
  TP_DEBS=("$LIBSSL_DEV_PIN" libnghttp2-dev=1.52.0-1+deb12u3 libyaml-cpp-dev=0.7.0+dfsg-8+b1)
  TP_DEB_LIBS=(libssl libcrypto libnghttp2 libyaml-cpp)
fi

# What the build depends on beyond this file: the compiler and the exact -dev packages compiled against.
recipe_inputs() {
  printf '%s\n' "steps=$TP_STEPS_VERSION libssh2=$LIBSSH2_VERSION curl=$CURL_VERSION $LIBSSL_DEV_PIN" \
    "cflags=$TP_CFLAGS" \
    "libssh2: ${LIBSSH2_CMAKE_FLAGS[*]}" "curl: ${CURL_CONFIGURE_FLAGS[*]}"
  gcc --version 2>/dev/null | head -n1
  # shellcheck disable=SC2086
  dpkg-query -W -f='${Package}=${Version}\n' $TP_DEV_PACKAGES 2>/dev/null
}
# aarch64: the shared recipe, then what only the cross build depends on. The shared part's host gcc and
# amd64 -dev lines are not inputs of the cross build: an upgrade of those rebuilds it needlessly (once).
recipe_inputs_aarch64() {
  recipe_inputs
  printf '%s\n' "arch=aarch64 steps=$TP_AARCH64_STEPS_VERSION debs=${TP_DEBS[*]}"
  "$TP_CROSS-gcc" --version 2>/dev/null | head -n1
  dpkg-query -W -f='${Package}=${Version}\n' libc6-dev-arm64-cross libstdc++-12-dev-arm64-cross 2>/dev/null
  sha256sum <"$TP_REPO/cmake/aarch64-linux-gnu.cmake"
}
if [[ "$TP_ARCH" == x86_64 ]]; then
  TP_NAME=third-party
  TP_KEY="$(recipe_inputs | sha256sum | cut -c1-12)"
else
  TP_NAME=third-party-aarch64
  TP_KEY="$(recipe_inputs_aarch64 | sha256sum | cut -c1-12)"
fi
TP_PREFIX="$K8S_AGENT_CACHE/$TP_NAME-$TP_KEY"
TP_STAMP=".k8s-agent-third-party-stamp"
TP_RECIPE="libssh2=$LIBSSH2_VERSION curl=$CURL_VERSION key=$TP_KEY"

tp_check() {
  local p="$1" f
  [[ "$(cat "$p/$TP_STAMP" 2>/dev/null)" == "$TP_RECIPE" ]] || return 1
  for f in lib/libssh2.a lib/libcurl.a include/libssh2.h include/curl/curl.h \
    include/openssl/opensslconf.h share/debs.txt share/doc/libssl-dev/copyright; do
    [[ -s "$p/$f" ]] || return 1
  done
  for f in "${TP_DEB_LIBS[@]}"; do
    [[ -s "$p/lib/$f.a" ]] || return 1
  done
  [[ "$TP_ARCH" == x86_64 || -s "$p/include/yaml-cpp/yaml.h" ]]
}

# Every -dev package present, else the install line to run.
check_dev_packages() {
  local p missing=() need="$TP_DEV_PACKAGES dpkg-dev cmake make gcc"
  [[ "$TP_ARCH" == aarch64 ]] && need="dpkg-dev cmake make gcc-$TP_CROSS g++-$TP_CROSS"
  for p in $need; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    log "missing build packages: apt-get install ${missing[*]} (or run scripts/deps.sh$([[ "$TP_ARCH" == aarch64 ]] && echo " --aarch64"))"
    return 1
  fi
}

# fetch_sources TMP MIRROR: the two pinned source packages, unpacked into TMP/src (scripts/lib/apt_source.sh).
fetch_sources() {
  apt_source_fetch "$1/apt" "$1/src" "$2" trixie "libssh2=$LIBSSH2_VERSION" "curl=$CURL_VERSION"
}

# fetch_debs TMP MIRROR: the pinned -dev packages (scripts/lib/bookworm_debs.sh), their static libraries,
# headers (the arch's include/TRIPLET/ merged in) and copyright files copied into TMP/prefix (see the header).
fetch_debs() {
  local t="$1" r="$1/debs/root" lib
  bookworm_debs_fetch "$t/debs" "$2" "$TP_DEB_ARCH" "${TP_DEBS[@]}" || return 1
  mkdir -p "$t/prefix/lib" "$t/prefix/include" "$t/prefix/share/doc" "$t/prefix/share/debs"
  cp "$t/debs/debs.txt" "$t/prefix/share/debs.txt" &&
    cp "$t/debs/debs"/*.deb "$t/prefix/share/debs/" &&
    cp -a "$r/usr/include/." "$t/prefix/include/" &&
    cp -a "$r/usr/include/$TP_TRIPLET/." "$t/prefix/include/" &&
    rm -rf "$t/prefix/include/$TP_TRIPLET" &&
    cp -a "$r/usr/share/doc/." "$t/prefix/share/doc/" || return 1
  for lib in "${TP_DEB_LIBS[@]}"; do
    cp "$r/usr/lib/$TP_TRIPLET/$lib.a" "$t/prefix/lib/" || return 1
  done
  cat "$t/prefix/share/debs.txt"
}

# The settings of both builds: the unpacked OpenSSL, and for aarch64 the cross toolchain.
openssl_cmake_flags() {
  local p="$1/prefix"
  [[ "$TP_ARCH" == x86_64 ]] || printf '%s\n' "-DCMAKE_TOOLCHAIN_FILE=$TP_REPO/cmake/aarch64-linux-gnu.cmake"
  printf '%s\n' "-DOPENSSL_ROOT_DIR=$p" "-DOPENSSL_INCLUDE_DIR=$p/include" "-DOPENSSL_USE_STATIC_LIBS=ON" \
    "-DOPENSSL_CRYPTO_LIBRARY=$p/lib/libcrypto.a" "-DOPENSSL_SSL_LIBRARY=$p/lib/libssl.a"
}

build_libssh2() {
  local t="$1" s cross
  s="$(find "$t/src" -maxdepth 1 -type d -name 'libssh2-*' | head -n1)"
  mapfile -t cross < <(openssl_cmake_flags "$t")
  CFLAGS="$TP_CFLAGS" cmake -S "$s" -B "$t/build-libssh2" "${LIBSSH2_CMAKE_FLAGS[@]}" "${cross[@]}" \
    -DCMAKE_INSTALL_PREFIX="$t/prefix" -DCMAKE_INSTALL_LIBDIR=lib &&
    cmake --build "$t/build-libssh2" -j2 &&
    cmake --install "$t/build-libssh2"
}

build_curl() {
  local t="$1" s extra
  s="$(find "$t/src" -maxdepth 1 -type d -name 'curl-*' | head -n1)"
  # The unpacked OpenSSL (its directory: no openssl.pc there, so configure takes include/ and lib/), with
  # libdl and libpthread for the static libcrypto in configure's link tests.
  extra=(--with-openssl="$t/prefix" CPPFLAGS="-I$t/prefix/include" LIBS="-ldl -lpthread")
  if [[ "$TP_ARCH" == aarch64 ]]; then
    # The unpacked static nghttp2 too: no pkg-config (the host's .pc files are amd64's).
    mkdir -p "$t/no-pkgconfig"
    extra+=(--host="$TP_CROSS" --build="$(gcc -dumpmachine)" CC="$TP_CROSS-gcc" AR="$TP_CROSS-ar"
      RANLIB="$TP_CROSS-ranlib" PKG_CONFIG_LIBDIR="$t/no-pkgconfig" LDFLAGS="-L$t/prefix/lib")
  fi
  (cd "$s" && CFLAGS="$TP_CFLAGS" ./configure --prefix="$t/prefix" --libdir="$t/prefix/lib" \
    "${CURL_CONFIGURE_FLAGS[@]}" "${extra[@]}" && make -j2 -C lib libcurl.la && make -C lib install-libLTLIBRARIES && make -C include install)
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
  cache_lock "$K8S_AGENT_CACHE" "$TP_NAME" 1800 || return 1
  if tp_check "$TP_PREFIX"; then
    printf '%s\n' "$TP_PREFIX"
    return 0
  fi
  check_dev_packages || return 1
  mirror="$(apt_mirror)" || return 1
  cache_sweep "$K8S_AGENT_CACHE" "$TP_NAME"
  t="$(cache_mktemp "$K8S_AGENT_CACHE" "$TP_NAME")" || return 1
  mkdir -p "$t/src" "$t/prefix"
  log "building libssh2 $LIBSSH2_VERSION and curl $CURL_VERSION ($TP_ARCH) into $TP_PREFIX (a few minutes; log $t.log)"
  local t0=$SECONDS
  {
    fetch_sources "$t" "$mirror" &&
      fetch_debs "$t" "$mirror" &&
      build_libssh2 "$t" && build_curl "$t"
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
  cache_install "$t/prefix" "$TP_PREFIX" "$TP_NAME" || return 1
  rm -rf --one-file-system "$t"
  log "built $TP_PREFIX in $((SECONDS - t0)) s"
  printf '%s\n' "$TP_PREFIX"
}

case "${1:-}" in
ensure) tp_ensure ;;
path) printf '%s\n' "$TP_PREFIX" ;;
check) tp_check "$TP_PREFIX" ;;
*)
  sed -n '5,9p' "$0" >&2
  exit 2
  ;;
esac
