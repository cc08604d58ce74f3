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

cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset"
# Root is needed by the e2e bed (network namespaces) and by the agent
# integration tests (sshd in a mount namespace): as another user those
# exit 77 and ctest lists them as skipped, with the reason in their output.
# Two tests at a time (the test presets' jobs): the tests that share bridge
# names, network namespaces, a kube-apiserver or podman are RUN_SERIAL. ctest
# prints the summary line CI reads.
ctest --preset "$preset" --timeout 600 "$@"
