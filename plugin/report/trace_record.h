// SPDX-License-Identifier: Apache-2.0
// One k8s-agent --trace line, parsed and type-checked.

#ifndef K8S_AGENT_PLUGIN_REPORT_TRACE_RECORD_H_
#define K8S_AGENT_PLUGIN_REPORT_TRACE_RECORD_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plugin/base/status.h"

namespace k8s_agent::report {

/// A "pod_status" record's data: the pod's own timestamps (microseconds
/// since the epoch, on the clock of whoever wrote them) and its state.
struct PodStatusData {
  std::string uid;
  std::string phase;
  std::string node;
  std::optional<int64_t> created;            ///< metadata.creationTimestamp
  std::optional<int64_t> scheduled;          ///< PodScheduled
  std::optional<int64_t> initialized;        ///< Initialized
  std::optional<int64_t> containers_ready;   ///< ContainersReady
  std::optional<int64_t> ready;              ///< Ready
  std::optional<int64_t> container_started;  ///< latest startedAt
  int restarts = 0;
  std::vector<std::string> waiting;  ///< Container waiting reasons.
  std::string unschedulable;         ///< PodScheduled=False reason.
};

struct TraceRecord {
  std::string file;  ///< Where it came from, for messages.
  int line = 0;
  std::string host;   ///< The name the agent was given.
  std::string pod;    ///< The pod it resolved to (may be empty).
  std::string event;  ///< begin, resolved, pod_status, pod_running, ...
  std::string detail;
  int64_t t_wall_us = 0;  ///< The agent's wall clock.
  int64_t t_mono_us = 0;  ///< The agent's monotonic clock (0 if absent).
  int pid = 0;
  std::string on;  ///< begin: the agent's host (its pod, in a cluster).
  /// ssh_ready: when the attempt that succeeded began (monotonic).
  std::optional<int64_t> attempt_t_mono_us;
  std::optional<PodStatusData> pod_status;  ///< event == "pod_status".
};

/// Parses one line. A line that is not a JSON object with string "host"
/// and "event" and an integer "t_wall_us" is kInvalidArgument saying
/// what is wrong ("not JSON (truncated?)", "no \"host\" string"...).
/// Unknown events and unknown keys are accepted: newer agents may add
/// them.
StatusOr<TraceRecord> ParseTraceLine(std::string_view line);

}  // namespace k8s_agent::report

#endif  // K8S_AGENT_PLUGIN_REPORT_TRACE_RECORD_H_
