// SPDX-License-Identifier: Apache-2.0
// PodStatusTrace: change-only "pod_status" trace records.

#include "plugin/agent/pod_status_trace.h"

#include <algorithm>
#include <vector>

#include "plugin/base/trace_fields.h"

namespace k8s_agent {

nlohmann::json PodStatusFields(const kube::Pod& pod) {
  nlohmann::json f = nlohmann::json::object();
  if (!pod.uid.empty()) f[trace_field::kUid] = pod.uid;
  if (!pod.phase.empty()) f[trace_field::kPhase] = pod.phase;
  if (!pod.node_name.empty()) f[trace_field::kNode] = pod.node_name;
  if (!pod.creation_timestamp.empty()) {
    f[trace_field::kCreated] = pod.creation_timestamp;
  }
  nlohmann::json since = nlohmann::json::object();
  for (const char* type : trace_field::kTrueSinceTypes) {
    auto it = pod.true_since.find(type);
    if (it != pod.true_since.end()) since[type] = it->second;
  }
  if (!since.empty()) f[trace_field::kTrueSince] = since;
  std::string started;
  int restarts = 0;
  std::vector<std::string> waiting;
  for (const kube::ContainerStatus& c : pod.containers) {
    restarts += c.restart_count;
    // RFC 3339 UTC strings of one format order as the times they name.
    if (!c.init && c.started_at > started) started = c.started_at;
    if (!c.waiting_reason.empty() &&
        std::find(waiting.begin(), waiting.end(), c.waiting_reason) ==
            waiting.end()) {
      waiting.push_back(c.waiting_reason);
    }
  }
  if (!started.empty()) f[trace_field::kContainerStarted] = started;
  f[trace_field::kRestarts] = restarts;
  if (!waiting.empty()) f[trace_field::kWaiting] = waiting;
  if (!pod.unschedulable_reason.empty()) {
    f[trace_field::kUnschedulable] = pod.unschedulable_reason;
  }
  return f;
}

void PodStatusTrace::Observe(const kube::Pod& pod, const std::string& host,
                             const std::string& pod_name, Tracer* tracer) {
  if (tracer == nullptr || !tracer->enabled()) return;
  nlohmann::json fields = PodStatusFields(pod);
  std::string key = fields.dump();
  if (key == last_) return;
  last_ = std::move(key);
  tracer->RecordFields(host, pod_name, "pod_status", fields);
}

}  // namespace k8s_agent
