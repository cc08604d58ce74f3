// SPDX-License-Identifier: Apache-2.0
// The launch report as JSON (--report --format json), for tools.

#ifndef K8S_AGENT_PLUGIN_REPORT_REPORT_JSON_H_
#define K8S_AGENT_PLUGIN_REPORT_REPORT_JSON_H_

#include <string>
#include <vector>

#include "plugin/report/launch_model.h"

namespace k8s_agent::report {

/// {"job":{start_wall_us, start, all_started_ms, hosts, reached, failed,
///         traces},
///  "phases":[{phase, meaning, hosts, median_ms, p90_ms, max_ms,
///             max_host}],
///  "hosts":[{host, pod, node, trace, pid, launches, launched_from,
///            first_ms, end_ms, reached, already_running,
///            marks_ms:{created, scheduled, initialized, container_started,
///                      containers_ready, ready, begin,
///                      pod_running_seen, ssh_attempt, ssh_ready, started,
///                      exited, failed},   // null when unknown
///            spans:[{phase, start_ms, duration_ms, failed}],
///            phases_ms:{PHASE: ms}, waiting:[{reason, seen_ms}],
///            restarts, skew:{field, ahead_ms}?, failure?, exit?}],
///  "critical":{host, end_ms, phase|"created_late", took_ms, median_ms,
///              summary, launched_by:[host]} or null,
///  "slowest":[host], "failed":[{host, reason, at_ms}],
///  "notes":[...], "warnings":[...]}
/// Times are milliseconds since the job start, except job.start_wall_us.
std::string FormatJsonReport(const JobLaunch& job,
                             const std::vector<std::string>& files,
                             const std::vector<std::string>& warnings);

}  // namespace k8s_agent::report

#endif  // K8S_AGENT_PLUGIN_REPORT_REPORT_JSON_H_
