// SPDX-License-Identifier: Apache-2.0
// Fuzz target: kubeconfig YAML, read from a file as in production.

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "plugin/kube/cluster_config.h"

namespace {

// One memfd for the whole run, rewritten per input: no temp files left
// behind, and /proc/self/fd/N is a path LoadClusterConfig can open.
int Memfd() {
  static int fd = ::memfd_create("fuzz-kubeconfig", 0);
  return fd;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  int fd = Memfd();
  if (fd < 0) return 0;
  if (::ftruncate(fd, 0) != 0) return 0;
  size_t off = 0;
  while (off < size) {
    ssize_t n = ::pwrite(fd, data + off, size - off, static_cast<off_t>(off));
    if (n <= 0) return 0;
    off += static_cast<size_t>(n);
  }
  k8s_agent::kube::ClusterOverrides overrides;
  overrides.kubeconfig = "/proc/self/fd/" + std::to_string(fd);
  k8s_agent::kube::InClusterSource in_cluster;
  in_cluster.sa_dir = "/nonexistent-fuzz-sa";
  (void)k8s_agent::kube::LoadClusterConfig(overrides, in_cluster);
  return 0;
}
