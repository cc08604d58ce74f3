// SPDX-License-Identifier: Apache-2.0
// --trace "pod_status" records: the pod's own timeline, as the API server,
// scheduler and kubelet wrote it in the objects the agent already receives.

#ifndef K8S_AGENT_PLUGIN_AGENT_POD_STATUS_TRACE_H_
#define K8S_AGENT_PLUGIN_AGENT_POD_STATUS_TRACE_H_

#include <nlohmann/json.hpp>
#include <string>

#include "plugin/agent/trace.h"
#include "plugin/kube/pod.h"

namespace k8s_agent {

/// The fields of a "pod_status" record for `pod`:
///   {"uid":..., "phase":"Pending", "node":"n-3",
///    "created":"2026-12-01T09:00:00Z",
///    "true_since":{"PodScheduled":"...","Initialized":"...",
///                  "ContainersReady":"...","Ready":"..."},
///    "container_started":"...",   // latest state.running.startedAt
///    "restarts":0,                // sum of restartCount
///    "waiting":["ContainerCreating"], "unschedulable":"Unschedulable"}
/// Timestamps are copied as the API wrote them (RFC 3339, whole seconds on
/// a real API server) and are on the clocks of whoever set them: the API
/// server (created), the scheduler (PodScheduled), the node's kubelet (the
/// rest). Absent values are left out.
nlohmann::json PodStatusFields(const kube::Pod& pod);

/// Writes a "pod_status" record whenever those fields change, so a pod
/// that waits in ContainerCreating for minutes costs a line per change,
/// not one per watch event. The record's t_wall_us is when the agent first
/// saw that state: a pod timestamp later than it means the writer's clock
/// is ahead of the agent's (see --report).
class PodStatusTrace {
 public:
  void Observe(const kube::Pod& pod, const std::string& host,
               const std::string& pod_name, Tracer* tracer);

 private:
  std::string last_;  // The previous record's fields, serialised.
};

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_AGENT_POD_STATUS_TRACE_H_
