// SPDX-License-Identifier: Apache-2.0
// The launch report as JSON (--report --format json), for tools.

#ifndef K8S_AGENT_PLUGIN_REPORT_REPORT_JSON_H_
#define K8S_AGENT_PLUGIN_REPORT_REPORT_JSON_H_

#include <string>
#include <vector>

#include "plugin/report/launch_model.h"

namespace k8s_agent::report {

/// {"job":{...}, "phases":[...], "hosts":[...], "critical":{...},
///  "slowest":[...], "failed":[...], "notes":[...], "warnings":[...]}.
/// Times are milliseconds since the job start ("*_ms") except
/// job.start_wall_us; see the README for the field list.
std::string FormatJsonReport(const JobLaunch& job,
                             const std::vector<std::string>& files,
                             const std::vector<std::string>& warnings);

}  // namespace k8s_agent::report

#endif  // K8S_AGENT_PLUGIN_REPORT_REPORT_JSON_H_
