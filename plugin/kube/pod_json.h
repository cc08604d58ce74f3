// SPDX-License-Identifier: Apache-2.0
// Pod decoding from an already parsed JSON value (shared by list and watch).

#ifndef K8S_AGENT_PLUGIN_KUBE_POD_JSON_H_
#define K8S_AGENT_PLUGIN_KUBE_POD_JSON_H_

#include <nlohmann/json.hpp>

#include "plugin/base/status.h"
#include "plugin/kube/pod.h"

namespace k8s_agent::kube {

/// Decodes a Pod object; `where` prefixes field names in errors
/// ("items[3]", "watch event object").
StatusOr<Pod> PodFromJsonValue(const nlohmann::json& object,
                               const std::string& where);

}  // namespace k8s_agent::kube

#endif  // K8S_AGENT_PLUGIN_KUBE_POD_JSON_H_
