// SPDX-License-Identifier: Apache-2.0
// Fuzz target: Pod and PodList JSON, API Status bodies, the depth guard.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "plugin/kube/api_status.h"
#include "plugin/kube/json_depth.h"
#include "plugin/kube/pod.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto pod = k8s_agent::kube::Pod::FromJson(in);
  if (pod.ok()) (void)k8s_agent::kube::PhaseSummary(*pod);
  (void)k8s_agent::kube::PodList::FromJson(in);
  (void)k8s_agent::kube::StatusFromApiResponse(503, in);
  (void)k8s_agent::kube::CheckJsonDepth(in, 8);
  return 0;
}
