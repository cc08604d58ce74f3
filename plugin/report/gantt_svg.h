// SPDX-License-Identifier: Apache-2.0
// The launch as a self-contained SVG Gantt chart.

#ifndef K8S_AGENT_PLUGIN_REPORT_GANTT_SVG_H_
#define K8S_AGENT_PLUGIN_REPORT_GANTT_SVG_H_

#include <string>

#include "plugin/report/launch_model.h"

namespace k8s_agent::report {

/// Up to this many hosts get a row each; beyond it the chart aggregates.
inline constexpr size_t kMaxSvgHostRows = 60;
/// Aggregated rows (groups of hosts in start order) beyond kMaxSvgHostRows.
inline constexpr size_t kSvgGroupRows = 40;

/// One row per host (in start order), a coloured bar per phase, a time
/// axis, a legend. With more than kMaxSvgHostRows hosts the hosts are cut
/// into kSvgGroupRows groups of neighbours in start order, each drawn as
/// the median phase bars of its members with a whisker from the earliest
/// start to the latest end, and the slowest and failed hosts keep rows of
/// their own: the chart's height stays bounded and every label readable.
/// No scripts, fonts or external references: any browser shows it.
std::string FormatGanttSvg(const JobLaunch& job);

}  // namespace k8s_agent::report

#endif  // K8S_AGENT_PLUGIN_REPORT_GANTT_SVG_H_
