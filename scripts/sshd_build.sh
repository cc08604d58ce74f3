#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Builds a portable OpenSSH server (sshd, sshd-session, sshd-auth, ssh-keygen) from Debian 13's own source
# package openssh, pinned, built once, cached: static but for glibc, so it runs in any worker image that has
# none (the job's sshd is brought into the pod, not expected in it).
#
# usage: sshd_build.sh ensure [ARCH]   print the install dir, building it first if it is missing or broken
#        sshd_build.sh path [ARCH]     print the dir it would use (no build)
#        sshd_build.sh check [ARCH]    exit 0 if the cached build is complete and portable (below)
#   ARCH x86_64 (the default: the host's compiler and -dev packages) or aarch64 (cross-built, below)
# Exit: 0 ok, 1 failure (a message says why and what to do).
#
# Why 10.x (Debian 13's 10.0p1, not Debian 12's 9.2p1): it is the version Debian 13 supports with security
# updates for its lifetime, and what the Open MPI 5 pods already run. 10.x splits the server into sshd
# (listener), sshd-session (per connection) and sshd-auth (pre-auth, as nobody, chrooted into the privsep
# dir); sshd finds the other two through SshdSessionPath / SshdAuthPath, which the job's config must set
# (the binaries live wherever the pod got them; the built-in default, LIBEXECDIR below, is only a path no
# Debian-like image fills with another version's sshd-session).
#
# Portability: libcrypto, zlib and libcrypt are linked static
# (from a dir holding only symlinks to Debian 12's .a files), so `ldd` shows libc and the loader only; the
# arc4random functions are hidden from configure (Debian 12's glibc 2.36 has them; with them the result
# needs GLIBC_2.36), so no symbol is newer than GLIBC_2.34. No PAM, SELinux, Kerberos, libedit,
# tcp-wrappers, audit, wtmpdb, lastlog/utmp/wtmp: none of them exists in an arbitrary image. Privilege
# separation: user nobody (every image has it), dir /var/lib/misc (root-owned, not writable by others in
# every Debian-like image; /var/empty is absent on Debian, /tmp is world-writable). PID file in /tmp.
# `check` verifies the glibc ceiling, the NEEDED list and that `sshd -V` names the pin.
#
# Fetching: scripts/lib/apt_source.sh (a private apt configuration, trixie's deb-src on the mirror of
# scripts/lib/apt_mirror.sh; K8S_AGENT_DEBIAN_MIRROR overrides it), as scripts/third_party.sh does.
# Cache: $K8S_AGENT_CACHE (default /var/cache/k8s-agent)/portable-sshd-<hash of the recipe, the compiler
# and the Debian 12 -dev packages linked>, built under an exclusive flock in a temporary dir beside it and
# renamed into place (scripts/lib/cache.sh). Cold: ~1.5 min on 2 idle cores, ~5 min on a loaded machine
# (fetch 5 s, autoreconf 5 s, configure 186 s, make 89 s); warm: a check, 0.1 s.
#
# aarch64: the same source, flags and pins, cross-built with Debian's aarch64-linux-gnu-gcc into
# portable-sshd-aarch64-<hash> (the key adds the arch, the cross compiler and glibc, the arm64 pins). The
# arm64 libcrypto, zlib and libcrypt are the arm64 builds of the same Debian 12 -dev packages, fetched and
# unpacked, not installed (scripts/lib/bookworm_debs.sh says why). On both arches OpenSSL is fetched so,
# at the one pin the agent links too (LIBSSL_DEV_PIN there), never the host's libssl-dev. The unpacked
# packages are named in the install dir for the SBOM (share/debs.txt, share/doc/PACKAGE/copyright).
# configure cannot run its test programs for another architecture; where that changes the result, the
# native answer is given instead (SSHD_CROSS_FLAGS: config.h then equals an x86_64 build's but for the
# seccomp audit arch). `check` runs `sshd -V` under qemu-aarch64-static.
set -uo pipefail

: "${K8S_AGENT_CACHE:=/var/cache/k8s-agent}"

# Bump when the build steps below change in a way that changes the result.
SSHD_STEPS_VERSION=2

# Pin: the exact Debian source version (with its epoch), in trixie (a point release carries the security
# updates of trixie-security). When Debian supersedes it, apt-get source fails: `ensure` then prints the
# versions the mirror has; update the pin here (that changes the hash: the new build lands beside the old).
OPENSSH_VERSION=1:10.0p1-7+deb13u4
# What `sshd -V` prints for it: upstream's release ("OpenSSH_10.0p2": Debian's 10.0p1 tarball carries 10.0p2's
# version.h) and Debian's revision, as Debian's own build stamps it (SSH_EXTRAVERSION).
OPENSSH_DEBIAN_REVISION="${OPENSSH_VERSION##*-}"
OPENSSH_RELEASE_PREFIX="OpenSSH_10.0p"

# The host's -dev packages linked by the x86_64 build (OpenSSL is the pinned one, SSHD_DEBS below).
SSHD_DEV_PACKAGES="zlib1g-dev libcrypt-dev libc6-dev"
# Static archives linked instead of their shared libraries.
SSHD_STATIC_LIBS="libcrypto.a libz.a libcrypt.a"
# The newest glibc symbol version allowed (what the shipped agent allows: README, "glibc").
SSHD_GLIBC_MAX=2.34
LIBEXECDIR=/opt/k8s-agent/libexec

SSHD_ARCH="${2:-x86_64}"
case "$SSHD_ARCH" in
x86_64 | aarch64) ;;
*)
  echo "sshd_build.sh: unknown arch '$SSHD_ARCH' (x86_64 or aarch64)" >&2
  exit 2
  ;;
esac

# Debian's hardening flags (dpkg-buildflags on Debian 12), without debug info (stripped anyway).
SSHD_CFLAGS="-O2 -fstack-protector-strong -fstack-clash-protection -Wformat -Werror=format-security \
-fcf-protection -D_FORTIFY_SOURCE=2 -DSSH_EXTRAVERSION=\\\"Debian-$OPENSSH_DEBIAN_REVISION\\\""
SSHD_LDFLAGS="-Wl,--as-needed -Wl,-z,relro -Wl,-z,now"

# Debian's debian/rules flags, minus everything that needs a library or service an image may lack.
SSHD_CONFIGURE_FLAGS=(
  --prefix=/usr --sysconfdir=/etc/ssh --libexecdir="$LIBEXECDIR"
  --disable-strip --with-mantype=doc --with-4in6
  --with-privsep-user=nobody --with-privsep-path=/var/lib/misc --with-pid-dir=/tmp
  --without-pam --without-selinux --without-kerberos5 --without-libedit --without-tcp-wrappers
  --without-audit --without-wtmpdb --without-xauth
  --disable-lastlog --disable-utmp --disable-utmpx --disable-wtmp --disable-wtmpx
  --with-default-path=/usr/local/bin:/usr/bin:/bin:/usr/games
  --with-superuser-path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
  PATH_PASSWD_PROG=/usr/bin/passwd
  # Debian's own cache overrides (internal mkdtemp, Debian bug 1001186; the
  # -fzero-call-used-regs probe), and the glibc ceiling.
  ac_cv_func_mkdtemp=no ossh_cv_cflag__fzero_call_used_regs_used=no
  ac_cv_func_arc4random=no ac_cv_func_arc4random_buf=no ac_cv_func_arc4random_uniform=no
)
# ssh-keygen too: ~2 s more, and it lets a pod with no OpenSSH make a host key.
SSHD_BINARIES=(sshd sshd-session sshd-auth ssh-keygen)

# aarch64 only (its pinned arm64 -dev packages, SSHD_DEBS, follow lib/bookworm_debs.sh's sourcing).
SSHD_CROSS=aarch64-linux-gnu
# Bump when the aarch64-only steps change.
SSHD_AARCH64_STEPS_VERSION=1
# What configure would have found by running a test program natively (checked against an x86_64
# configure of the same flags, whose config.h and Makefile flags these make equal): OpenSSL 3 gets the
# 1.1 API it checks for; glibc's maildir (paths.h's _PATH_MAILDIR) and struct dirent's full d_name
# (BROKEN_ONE_BYTE_DIRENT_D_NAME is undefined in config.h after configure, in build_sshd).
SSHD_CROSS_FLAGS=(--with-maildir=/var/mail)
SSHD_CROSS_CPPFLAGS="-DOPENSSL_API_COMPAT=0x10100000L"
# x86's -fcf-protection is aarch64's BTI and PAC (what Debian's arm64 build flags use instead).
SSHD_CROSS_CFLAGS="${SSHD_CFLAGS/-fcf-protection/-mbranch-protection=standard}"

log() { printf '[portable-sshd %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
# shellcheck source=scripts/lib/cache.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cache.sh"
# shellcheck source=scripts/lib/apt_source.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/apt_source.sh"
# shellcheck source=scripts/lib/bookworm_debs.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/bookworm_debs.sh"
# The pinned packages fetched and unpacked: OpenSSL's pin is the agent's (one OpenSSL in every image);
# aarch64 takes zlib and libxcrypt so too.
if [[ "$SSHD_ARCH" == x86_64 ]]; then
  SSHD_DEB_ARCH=amd64 SSHD_TRIPLET=x86_64-linux-gnu
  SSHD_DEBS=("$LIBSSL_DEV_PIN")
else
  SSHD_DEB_ARCH=arm64 SSHD_TRIPLET=$SSHD_CROSS
  SSHD_DEBS=("$LIBSSL_DEV_PIN" zlib1g-dev=1:1.2.13.dfsg-1 libcrypt-dev=1:4.4.33-2)
fi

recipe_shared() {
  printf '%s\n' "steps=$SSHD_STEPS_VERSION openssh=$OPENSSH_VERSION bins=${SSHD_BINARIES[*]} static=$SSHD_STATIC_LIBS" \
    "cflags=$SSHD_CFLAGS" "ldflags=$SSHD_LDFLAGS" "configure: ${SSHD_CONFIGURE_FLAGS[*]}"
}
recipe_inputs() {
  recipe_shared
  printf '%s\n' "debs=${SSHD_DEBS[*]}"
  gcc --version 2>/dev/null | head -n1
  # shellcheck disable=SC2086
  dpkg-query -W -f='${Package}=${Version}\n' $SSHD_DEV_PACKAGES 2>/dev/null
}
# aarch64: the host's gcc and amd64 -dev packages are no inputs of the cross build.
recipe_inputs_aarch64() {
  recipe_shared
  printf '%s\n' "arch=aarch64 steps=$SSHD_AARCH64_STEPS_VERSION debs=${SSHD_DEBS[*]}" \
    "cross: ${SSHD_CROSS_FLAGS[*]} $SSHD_CROSS_CPPFLAGS $SSHD_CROSS_CFLAGS"
  "$SSHD_CROSS-gcc" --version 2>/dev/null | head -n1
  dpkg-query -W -f='${Package}=${Version}\n' libc6-dev-arm64-cross 2>/dev/null
}
if [[ "$SSHD_ARCH" == x86_64 ]]; then
  SSHD_NAME=portable-sshd
  SSHD_KEY="$(recipe_inputs | sha256sum | cut -c1-12)"
  SSHD_LOADER=ld-linux-x86-64.so.2
  SSHD_RUN=()
else
  SSHD_NAME=portable-sshd-aarch64
  SSHD_KEY="$(recipe_inputs_aarch64 | sha256sum | cut -c1-12)"
  SSHD_LOADER=ld-linux-aarch64.so.1
  SSHD_RUN=(qemu-aarch64-static -L "/usr/$SSHD_CROSS")
fi
SSHD_PREFIX="$K8S_AGENT_CACHE/$SSHD_NAME-$SSHD_KEY"
SSHD_STAMP=".k8s-agent-portable-sshd-stamp"
SSHD_RECIPE="openssh=$OPENSSH_VERSION key=$SSHD_KEY"

# newest_glibc BIN: the newest GLIBC_x.y version its dynamic symbols need (readelf reads either arch).
newest_glibc() {
  readelf -W --dyn-syms "$1" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/^GLIBC_//' | sort -uV | tail -n1
}

# sshd_check DIR [quiet]: the stamp, every binary, the glibc ceiling, only libc and the loader NEEDED, and
# `sshd -V` naming the pin. Says what is wrong unless quiet.
sshd_check() {
  local d="$1" quiet="${2:-}" b newest needed v
  say() { [[ -n "$quiet" ]] || log "check $d: $*"; }
  [[ "$(cat "$d/$SSHD_STAMP" 2>/dev/null)" == "$SSHD_RECIPE" ]] || {
    say "no stamp of $SSHD_RECIPE (not built)"
    return 1
  }
  for b in "${SSHD_BINARIES[@]}"; do
    [[ -x "$d/$b" ]] || {
      say "$b missing"
      return 1
    }
    newest="$(newest_glibc "$d/$b")"
    if [[ -z "$newest" || "$(printf '%s\n%s\n' "$newest" "$SSHD_GLIBC_MAX" | sort -V | tail -n1)" != "$SSHD_GLIBC_MAX" ]]; then
      say "$b needs GLIBC_${newest:-?} (> $SSHD_GLIBC_MAX)"
      return 1
    fi
    needed="$(readelf -d "$d/$b" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -Fvx -e libc.so.6 -e "$SSHD_LOADER")"
    [[ -z "$needed" ]] || {
      say "$b needs $(tr '\n' ' ' <<<"$needed")(only libc and the loader allowed)"
      return 1
    }
  done
  grep -q "^libssl-dev ${LIBSSL_DEV_PIN#*=} " "$d/share/debs.txt" 2>/dev/null || {
    say "share/debs.txt names no libssl-dev ${LIBSSL_DEV_PIN#*=} (the pin, scripts/lib/bookworm_debs.sh)"
    return 1
  }
  v="$(${SSHD_RUN[@]+"${SSHD_RUN[@]}"} "$d/sshd" -V 2>&1)"
  [[ "$v" == "$OPENSSH_RELEASE_PREFIX"*" Debian-$OPENSSH_DEBIAN_REVISION"[,\ ]* ]] || {
    say "sshd -V says '$v', not ${OPENSSH_RELEASE_PREFIX}N Debian-$OPENSSH_DEBIAN_REVISION"
    return 1
  }
}

check_build_packages() {
  local p missing=() need="$SSHD_DEV_PACKAGES dpkg-dev autoconf automake make gcc binutils"
  [[ "$SSHD_ARCH" == aarch64 ]] &&
    need="dpkg-dev autoconf automake make gcc-$SSHD_CROSS binutils-$SSHD_CROSS libc6-dev-arm64-cross qemu-user-static"
  for p in $need; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    log "missing build packages: apt-get install ${missing[*]} (or run scripts/deps.sh$([[ "$SSHD_ARCH" == aarch64 ]] && echo " --aarch64"))"
    return 1
  fi
}

# static_lib NAME TMP: the static archive to link, the unpacked pinned one (OpenSSL; every library for
# aarch64) or the host's.
static_lib() {
  local unpacked="$2/debs/root/usr/lib/$SSHD_TRIPLET/$1"
  if [[ -f "$unpacked" ]]; then
    printf '%s\n' "$unpacked"
  else
    gcc -print-file-name="$1"
  fi
}

# build_sshd TMP: TMP/src holds the unpacked source and TMP/debs the unpacked pinned -dev packages;
# installs the stripped binaries into TMP/prefix.
build_sshd() {
  local t="$1" s l f cross=() cflags="$SSHD_CFLAGS" strip=strip r="$1/debs/root/usr/include"
  # The unpacked headers first, so OpenSSL's are the linked library's, not the host's.
  local cppflags="-I$r -I$r/$SSHD_TRIPLET"
  s="$(find "$t/src" -maxdepth 1 -type d -name 'openssh-*' | head -n1)"
  [[ -n "$s" ]] || return 1
  # Only the static archives: the linker takes them, not the shared libraries in the default path.
  mkdir -p "$t/static"
  for l in $SSHD_STATIC_LIBS; do
    f="$(static_lib "$l" "$t")"
    [[ "$f" == /* && -f "$f" ]] || {
      echo "no $l (its -dev package: $SSHD_DEV_PACKAGES)"
      return 1
    }
    ln -s "$f" "$t/static/$l"
  done
  if [[ "$SSHD_ARCH" == aarch64 ]]; then
    cross=(--host="$SSHD_CROSS" --build="$(gcc -dumpmachine)" CC="$SSHD_CROSS-gcc" AR="$SSHD_CROSS-ar"
      RANLIB="$SSHD_CROSS-ranlib" STRIP="$SSHD_CROSS-strip" "${SSHD_CROSS_FLAGS[@]}")
    cppflags+=" $SSHD_CROSS_CPPFLAGS"
    cflags="$SSHD_CROSS_CFLAGS"
    strip="$SSHD_CROSS-strip"
  fi
  local t0=$SECONDS t1 t2
  # Debian's patches change configure.ac.
  (cd "$s" && autoreconf -f -i) || return 1
  t1=$SECONDS
  (cd "$s" && ./configure "${SSHD_CONFIGURE_FLAGS[@]}" ${cross[@]+"${cross[@]}"} --with-cflags="$cflags" \
    --with-cppflags="$cppflags" --with-ldflags="$SSHD_LDFLAGS -L$t/static") || return 1
  if [[ "$SSHD_ARCH" == aarch64 ]]; then
    # configure assumes a one-byte d_name when it cannot run its test; glibc's is 256 bytes.
    sed -i 's|^#define BROKEN_ONE_BYTE_DIRENT_D_NAME 1$|/* #undef BROKEN_ONE_BYTE_DIRENT_D_NAME */|' "$s/config.h" &&
      ! grep -q '^#define BROKEN_ONE_BYTE_DIRENT_D_NAME' "$s/config.h" || return 1
  fi
  t2=$SECONDS
  make -C "$s" -j2 "${SSHD_BINARIES[@]}" || return 1
  echo "phases: autoreconf $((t1 - t0)) s, configure $((t2 - t1)) s, make $((SECONDS - t2)) s" |
    tee "$t/prefix/.build-phases"
  for f in "${SSHD_BINARIES[@]}"; do
    install -m 0755 -s --strip-program="$strip" "$s/$f" "$t/prefix/$f" || return 1
  done
  # The licences travel with the binaries (and those of the pinned packages linked, and what they are).
  cp "$s/debian/copyright" "$t/prefix/copyright" &&
    mkdir -p "$t/prefix/share/doc" &&
    cp "$t/debs/debs.txt" "$t/prefix/share/debs.txt" &&
    cp -a "$t/debs/root/usr/share/doc/." "$t/prefix/share/doc/"
}

sshd_ensure() {
  local t rc mirror t0
  if sshd_check "$SSHD_PREFIX" quiet; then
    printf '%s\n' "$SSHD_PREFIX"
    return 0
  fi
  if ! mkdir -p "$K8S_AGENT_CACHE" 2>/dev/null || [[ ! -w "$K8S_AGENT_CACHE" ]]; then
    log "cannot write $K8S_AGENT_CACHE to build the portable sshd once: run 'sudo $0 ensure $SSHD_ARCH'," \
      "or set K8S_AGENT_CACHE to a writable directory"
    return 1
  fi
  cache_lock "$K8S_AGENT_CACHE" "$SSHD_NAME" 900 || return 1
  if sshd_check "$SSHD_PREFIX" quiet; then
    printf '%s\n' "$SSHD_PREFIX"
    return 0
  fi
  check_build_packages || return 1
  mirror="$(apt_mirror)" || return 1
  cache_sweep "$K8S_AGENT_CACHE" "$SSHD_NAME"
  t="$(cache_mktemp "$K8S_AGENT_CACHE" "$SSHD_NAME")" || return 1
  mkdir -p "$t/src" "$t/prefix"
  log "building OpenSSH $OPENSSH_VERSION's sshd ($SSHD_ARCH) into $SSHD_PREFIX (1.5-5 minutes; log $t.log)"
  t0=$SECONDS
  {
    apt_source_fetch "$t/apt" "$t/src" "$mirror" trixie "openssh=$OPENSSH_VERSION" &&
      bookworm_debs_fetch "$t/debs" "$mirror" "$SSHD_DEB_ARCH" "${SSHD_DEBS[@]}" &&
      build_sshd "$t"
  } >"$t.log" 2>&1
  rc=$?
  if ((rc == 0)); then
    printf '%s' "$SSHD_RECIPE" >"$t/prefix/$SSHD_STAMP" && echo "$((SECONDS - t0))" >"$t/prefix/.build-seconds" ||
      rc=1
  fi
  if ((rc != 0)) || ! sshd_check "$t/prefix"; then
    tail -n 30 "$t.log" >&2
    log "building the portable sshd failed (exit $rc); log kept in $t.log"
    rm -rf --one-file-system "$t"
    return 1
  fi
  mv "$t.log" "$t/prefix/.build.log"
  # The source package stays for the licence texts and for anyone auditing the build.
  mkdir -p "$t/prefix/share/sources"
  find "$t/src" -maxdepth 1 -type f -exec mv {} "$t/prefix/share/sources/" \;
  cache_install "$t/prefix" "$SSHD_PREFIX" "$SSHD_NAME" || return 1
  rm -rf --one-file-system "$t"
  log "built $SSHD_PREFIX in $((SECONDS - t0)) s"
  printf '%s\n' "$SSHD_PREFIX"
}

case "${1:-}" in
ensure) sshd_ensure ;;
path) printf '%s\n' "$SSHD_PREFIX" ;;
check) sshd_check "$SSHD_PREFIX" ;;
*)
  sed -n '7,11p' "$0" >&2
  exit 2
  ;;
esac
