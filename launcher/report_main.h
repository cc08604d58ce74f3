// SPDX-License-Identifier: Apache-2.0
// k8s-agent --report: the thin CLI over plugin/report.

#ifndef K8S_AGENT_LAUNCHER_REPORT_MAIN_H_
#define K8S_AGENT_LAUNCHER_REPORT_MAIN_H_

#include "launcher/options.h"

namespace k8s_agent {

/// Reads options.hosts as trace files, prints the report on stdout (warnings
/// on stderr), writes --chrome / --svg. Returns the exit status: 0, or 255
/// when a trace is unreadable or unusable or an output cannot be written.
int ReportMain(const Options& options);

}  // namespace k8s_agent

#endif  // K8S_AGENT_LAUNCHER_REPORT_MAIN_H_
