#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages k8s-agent needs to build and test, only the
# missing ones (a second run costs a dpkg query). Sourced or run:
#   scripts/deps.sh [PACKAGE...]   the build and test packages (and PACKAGEs)
#   scripts/deps.sh --aarch64      the linux-aarch64 cross build's and its tests'
set -euo pipefail

K8S_AGENT_PACKAGES=(
  cmake g++ make binutils
  # The agent's linker: it orders the idle path's code (launcher/CMakeLists.txt).
  lld
  # scripts/third_party.sh: apt-get source (dpkg-source, xz) of libssh2 and
  # curl, verified with the archive keyring; the static OpenSSL, nghttp2 and
  # yaml-cpp they and the agent link.
  dpkg-dev xz-utils debian-archive-keyring
  libssl-dev libnghttp2-dev libyaml-cpp-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev
  # scripts/sshd_build.sh: the portable sshd from Debian 13's openssh source
  # (autoreconf after Debian's patches; libcrypto, zlib, libcrypt linked
  # static); its test and tests/bed/minbase_root.sh need debootstrap.
  autoconf automake zlib1g-dev libcrypt-dev debootstrap
  openssh-server openssh-client openmpi-bin libopenmpi-dev
  iproute2 openssl curl python3 util-linux procps psmisc
  # tests that read manifests (tests/cluster/mpijob_controller.py,
  # tests/deploy/pod_security_test.py).
  python3-yaml
  # tests: nghttpd, an h2-only server (portable.http2), and nghttpx, an
  # HTTP/2 front for the fake API server (agent.api-liveness.api-stopped-h2).
  nghttp2-server
  nghttp2-proxy
  # scripts/lint.sh, run by .ci/run: the style gates.
  clang-format clang-tidy shellcheck
)

# The linux-aarch64 release binary (the "aarch64" preset) and its tests
# (label arm64): installed only by those that build or run it
# (k8s_agent_install_aarch64_deps), as they are ~300 MB. All amd64 packages:
# the arm64 builds of OpenSSL, nghttp2 and yaml-cpp are unpacked into
# scripts/third_party.sh's arm64 cache instead of installed as :arm64
# packages, which would pin (and so upgrade) their amd64 twins and change the
# x86_64 build; so no foreign dpkg architecture is added either. No
# binfmt-support: the tests name qemu-aarch64-static, and binfmt-support's
# postinst would register every qemu format machine-wide.
K8S_AGENT_AARCH64_PACKAGES=(
  # GCC 12 and binutils for aarch64, glibc 2.36 and libstdc++ under
  # /usr/aarch64-linux-gnu (the agent links with lld, as on x86_64).
  gcc-aarch64-linux-gnu g++-aarch64-linux-gnu binutils-aarch64-linux-gnu
  libc6-dev-arm64-cross
  # Runs the aarch64 binary in the tests, and the build's try_run.
  qemu-user-static
)

k8s_agent_install_aarch64_deps() {
  k8s_agent_install_deps "${K8S_AGENT_AARCH64_PACKAGES[@]}"
}

k8s_agent_install_deps() {
  local missing=()
  for p in "${K8S_AGENT_PACKAGES[@]}" "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
      missing+=("$p")
    fi
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "k8s-agent: need root to install: ${missing[*]} (run with sudo)" >&2
    return 1
  fi
  echo "k8s-agent: installing ${missing[*]}" >&2
  # Another apt may hold the lock briefly (unattended upgrades): wait, don't kill.
  local i=0
  while fuser /var/lib/dpkg/lock-frontend >/dev/null 2>&1 && [ $i -lt 60 ]; do
    sleep 2; i=$((i + 1))
  done
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    "${missing[@]}" >/dev/null
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  if [ "${1:-}" = --aarch64 ]; then
    shift
    k8s_agent_install_aarch64_deps "$@"
  else
    k8s_agent_install_deps "$@"
  fi
fi
