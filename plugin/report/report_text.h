// SPDX-License-Identifier: Apache-2.0
// The launch report as aligned plain text (terminals, CI logs).

#ifndef K8S_AGENT_PLUGIN_REPORT_REPORT_TEXT_H_
#define K8S_AGENT_PLUGIN_REPORT_REPORT_TEXT_H_

#include <string>
#include <vector>

#include "plugin/report/launch_model.h"

namespace k8s_agent::report {

/// Summary, per-host table (one row per host, in start order), phase
/// statistics, slowest hosts, critical path, failures and notes.
std::string FormatTextReport(const JobLaunch& job,
                             const std::vector<std::string>& files);

/// "+12.3s" relative to the job start.
std::string Offset(const JobLaunch& job, int64_t t_us);

/// One line on why the last host was last.
std::string DescribeCritical(const JobLaunch& job);

}  // namespace k8s_agent::report

#endif  // K8S_AGENT_PLUGIN_REPORT_REPORT_TEXT_H_
