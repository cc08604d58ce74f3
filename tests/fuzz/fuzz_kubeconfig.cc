// SPDX-License-Identifier: Apache-2.0
// Fuzz target: kubeconfig YAML, read from a file as in production.

#include <cstddef>
#include <cstdint>
#include <string>

#include "plugin/kube/cluster_config.h"
#include "tests/fuzz/input_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string path = k8s_agent::fuzz::InputAsFile(data, size);
  if (path.empty()) return 0;
  k8s_agent::kube::ClusterOverrides overrides;
  overrides.kubeconfig = path;
  k8s_agent::kube::InClusterSource in_cluster;
  in_cluster.sa_dir = "/nonexistent-fuzz-sa";
  (void)k8s_agent::kube::LoadClusterConfig(overrides, in_cluster);
  return 0;
}
