#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's test command: install what is missing, build, run every test
# (unit, integration against a real sshd and a TLS fake API server, and the
# end-to-end bed with real mpirun in network namespaces).
#
#   sudo ./scripts/test.sh            # everything (RelWithDebInfo, -Werror)
#   sudo ./scripts/test.sh --asan     # the same under ASan + UBSan
#   sudo ./scripts/test.sh -L unit    # extra args go to ctest
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
# MPICH and a Debian 13 root (Open MPI 5) serve the e2e scenarios 11 and 13, python3-mpi4py s22;
# podman (with runc, see tests/images/podman_conf.sh) the image tests.
k8s_agent_install_deps mpich libmpich-dev debootstrap podman runc python3-mpi4py
# The cluster tier (tests/cluster): a real kubelet's runtime (containerd, runc,
# the CNI bridge), kube-proxy's iptables and conntrack, the pause image's sleep.
k8s_agent_install_deps containerd containernetworking-plugins iptables conntrack busybox-static
# Headless Chromium renders --report's SVG (tests/integration/report); the
# test skips with its reason if it cannot be installed.
k8s_agent_install_deps chromium ||
  echo "test.sh: chromium not installed: report.svg-chromium-* will skip" >&2
# The cross toolchain and qemu-user of the linux-aarch64 binary: its tests
# (label arm64; the first, arm64.build, builds it into build-aarch64 when
# stale) skip with their reason without them.
k8s_agent_install_aarch64_deps ||
  echo "test.sh: the aarch64 cross toolchain or qemu-user not installed: arm64.* will skip" >&2

preset=default
if [ "${1:-}" = "--asan" ]; then preset=asan; shift; fi

# The real-server tiers and the portable sshd need caches a fresh machine
# lacks (/var/cache/k8s-agent, built once from Debian's sources): they are
# built here unless K8S_REALAPI_BUILD=0 / K8S_SSHD_BUILD=0, and said first,
# so a long first run is no surprise.
export K8S_REALAPI_BUILD="${K8S_REALAPI_BUILD:-1}"
export K8S_SSHD_BUILD="${K8S_SSHD_BUILD:-1}"
if [ "$K8S_REALAPI_BUILD" = 1 ] && ! tests/realapi/apiserver_build.sh check 2>/dev/null; then
  echo "test.sh: $(date +%H:%M): Kubernetes v1.20.2 is not cached; realapi_build builds it first" \
    "(~13 min on 2 cores, once per machine; K8S_REALAPI_BUILD=0 skips the realapi and cluster tiers)"
fi
if [ "$K8S_SSHD_BUILD" = 1 ] && ! scripts/sshd_build.sh check 2>/dev/null; then
  echo "test.sh: $(date +%H:%M): the portable sshd is not cached; portable.sshd builds it" \
    "(~5 min, once per machine; K8S_SSHD_BUILD=0 skips it and the arm64 image)"
fi

cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset"
# Root is needed by the e2e bed (network namespaces) and by the agent
# integration tests (sshd in a mount namespace): as another user those
# exit 77 and ctest lists them as skipped, with the reason in their output.
# Two tests at a time (the test presets' jobs): the tests that share bridge
# names, network namespaces, a kube-apiserver or podman are RUN_SERIAL. ctest
# prints the summary line CI reads.
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
set +e
ctest --preset "$preset" --timeout 600 "$@" | tee "$log"
rc=${PIPESTATUS[0]}
set -e
# A green run that skipped a tier checked less than it seems: the last lines
# say which tiers skipped and the command that shows why (each skipped test
# prints its reason) and runs them.
mapfile -t skipped < <(sed -nE 's/^[[:space:]]*[0-9]+ - ([^ ]+) \(Skipped\)$/\1/p' "$log")
if [ "${#skipped[@]}" -gt 0 ]; then
  echo "test.sh: ${#skipped[@]} tests skipped, by tier:"
  printf '%s\n' "${skipped[@]}" | sed -E 's/[._].*//' | sort | uniq -c |
    while read -r count tier; do
      printf "  %-10s %3d skipped; why, and run them: ctest --preset %s -R '%s' --output-on-failure\n" \
        "$tier" "$count" "$preset" "^${tier}[._]"
    done
fi
exit "$rc"
