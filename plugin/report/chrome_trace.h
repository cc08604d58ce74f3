// SPDX-License-Identifier: Apache-2.0
// The launch as Chrome trace-event JSON (Perfetto, chrome://tracing).

#ifndef K8S_AGENT_PLUGIN_REPORT_CHROME_TRACE_H_
#define K8S_AGENT_PLUGIN_REPORT_CHROME_TRACE_H_

#include <string>

#include "plugin/report/launch_model.h"

namespace k8s_agent::report {

/// {"traceEvents":[...], "displayTimeUnit":"ms"}: one process ("launch"),
/// one thread (track) per host, named after it and ordered by start; one
/// complete ("X") event per phase, instant ("i") events for each waiting
/// reason first seen and for a failure. ts/dur are microseconds since the
/// job start.
std::string FormatChromeTrace(const JobLaunch& job);

}  // namespace k8s_agent::report

#endif  // K8S_AGENT_PLUGIN_REPORT_CHROME_TRACE_H_
