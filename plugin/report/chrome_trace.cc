// SPDX-License-Identifier: Apache-2.0
// FormatChromeTrace.

#include "plugin/report/chrome_trace.h"

#include <nlohmann/json.hpp>

namespace k8s_agent::report {

std::string FormatChromeTrace(const JobLaunch& job) {
  using nlohmann::json;
  constexpr int kPid = 1;
  json events = json::array();
  events.push_back({{"ph", "M"},
                    {"pid", kPid},
                    {"name", "process_name"},
                    {"args", {{"name", "k8s-agent launch"}}}});
  for (size_t i = 0; i < job.hosts.size(); ++i) {
    const HostLaunch& h = job.hosts[i];
    const int tid = static_cast<int>(i) + 1;
    events.push_back({{"ph", "M"},
                      {"pid", kPid},
                      {"tid", tid},
                      {"name", "thread_name"},
                      {"args", {{"name", h.host}}}});
    events.push_back({{"ph", "M"},
                      {"pid", kPid},
                      {"tid", tid},
                      {"name", "thread_sort_index"},
                      {"args", {{"sort_index", tid}}}});
    for (const Span& s : h.spans) {
      events.push_back({{"ph", "X"},
                        {"pid", kPid},
                        {"tid", tid},
                        {"cat", "launch"},
                        {"name", InfoFor(s.phase).key},
                        {"ts", s.start_us - job.t0_us},
                        {"dur", s.duration_us()},
                        {"args",
                         {{"host", h.host},
                          {"pod", h.pod},
                          {"node", h.node},
                          {"failed", s.failed}}}});
    }
    for (const auto& [t, reason] : h.waiting) {
      events.push_back({{"ph", "i"},
                        {"s", "t"},
                        {"pid", kPid},
                        {"tid", tid},
                        {"cat", "pod"},
                        {"name", "waiting: " + reason},
                        {"ts", t - job.t0_us}});
    }
    if (h.failed()) {
      events.push_back({{"ph", "i"},
                        {"s", "t"},
                        {"pid", kPid},
                        {"tid", tid},
                        {"cat", "launch"},
                        {"name", "failed"},
                        {"ts", *h.failed_at - job.t0_us},
                        {"args", {{"reason", h.failure}}}});
    }
  }
  json out = {{"traceEvents", events},
              {"displayTimeUnit", "ms"},
              {"otherData", {{"job_start_wall_us", job.t0_us}}}};
  return out.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace k8s_agent::report
