// SPDX-License-Identifier: Apache-2.0
// Kubernetes resource quantities ("2", "500m", "4Ki") and the per-pod sums
// a hostfile's slots come from.

#ifndef K8S_AGENT_PLUGIN_KUBE_QUANTITY_H_
#define K8S_AGENT_PLUGIN_KUBE_QUANTITY_H_

#include <cstdint>
#include <string>

#include "plugin/base/status.h"
#include "plugin/kube/pod.h"

namespace k8s_agent::kube {

/// A resource quantity ("2", "500m", "1.5", "4Ki", "1e3") in thousandths,
/// rounded down: sums of milli-units keep two 500m containers at one whole
/// slot. kInvalidArgument when it is not a non-negative quantity or does
/// not fit in int64 milli-units.
StatusOr<int64_t> QuantityMilli(const std::string& quantity);

/// The sum over the pod's containers of resources.limits[resource], else
/// resources.requests[resource], rounded down to an integer; 0 when no
/// container names it.
StatusOr<int64_t> PodResourceSlots(const Pod& pod, const std::string& resource);

}  // namespace k8s_agent::kube

#endif  // K8S_AGENT_PLUGIN_KUBE_QUANTITY_H_
