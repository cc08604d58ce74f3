// SPDX-License-Identifier: Apache-2.0
// FormatJsonReport.

#include "plugin/report/report_json.h"

#include <nlohmann/json.hpp>

#include "plugin/base/strings.h"
#include "plugin/report/report_text.h"

namespace k8s_agent::report {
namespace {

using nlohmann::json;

double Ms(int64_t us) { return static_cast<double>(us) / 1000.0; }

json Mark(const JobLaunch& job, const std::optional<int64_t>& t) {
  return t ? json(Ms(*t - job.t0_us)) : json(nullptr);
}

json HostJson(const JobLaunch& job, const HostLaunch& h) {
  json j;
  j["host"] = h.host;
  j["pod"] = h.pod;
  j["node"] = h.node;
  j["trace"] = h.file;
  j["pid"] = h.pid;
  j["launches"] = h.launches;
  j["launched_from"] = h.launched_from;
  j["first_ms"] = Ms(h.first_us - job.t0_us);
  j["end_ms"] = Ms(h.end_us - job.t0_us);
  j["reached"] = h.reached;
  j["already_running"] = h.already_running;
  j["marks_ms"] = {{"created", Mark(job, h.created)},
                   {"scheduled", Mark(job, h.scheduled)},
                   {"initialized", Mark(job, h.initialized)},
                   {"container_started", Mark(job, h.container_started)},
                   {"containers_ready", Mark(job, h.containers_ready)},
                   {"ready", Mark(job, h.ready)},
                   {"begin", Mark(job, h.begin)},
                   {"pod_running_seen", Mark(job, h.running_seen)},
                   {"ssh_attempt", Mark(job, h.attempt_start)},
                   {"ssh_ready", Mark(job, h.ssh_ready)},
                   {"started", Mark(job, h.started)},
                   {"exited", Mark(job, h.exited)},
                   {"failed", Mark(job, h.failed_at)}};
  json spans = json::array();
  for (const Span& s : h.spans) {
    spans.push_back({{"phase", InfoFor(s.phase).key},
                     {"start_ms", Ms(s.start_us - job.t0_us)},
                     {"duration_ms", Ms(s.duration_us())},
                     {"failed", s.failed}});
  }
  j["spans"] = spans;
  json phases = json::object();
  for (int p = 0; p < kPhaseCount; ++p) {
    if (h.HasPhase(PhaseAt(p))) {
      phases[InfoFor(PhaseAt(p)).key] = Ms(h.PhaseUs(PhaseAt(p)));
    }
  }
  j["phases_ms"] = phases;
  json waiting = json::array();
  for (const auto& [t, reason] : h.waiting) {
    waiting.push_back({{"reason", reason}, {"seen_ms", Ms(t - job.t0_us)}});
  }
  j["waiting"] = waiting;
  j["restarts"] = h.restarts;
  if (h.skew) {
    j["skew"] = {{"field", h.skew->field}, {"ahead_ms", Ms(h.skew->ahead_us)}};
  }
  if (h.failed()) j["failure"] = h.failure;
  if (!h.exit_detail.empty()) j["exit"] = h.exit_detail;
  return j;
}

}  // namespace

std::string FormatJsonReport(const JobLaunch& job,
                             const std::vector<std::string>& files,
                             const std::vector<std::string>& warnings) {
  json j;
  j["job"] = {{"start_wall_us", job.t0_us},
              {"start", FormatWallMicros(job.t0_us)},
              {"all_started_ms", Ms(job.end_us - job.t0_us)},
              {"hosts", job.hosts.size()},
              {"reached", job.reached},
              {"failed", job.failed.size()},
              {"traces", files}};
  json phases = json::array();
  for (const PhaseSummary& s : job.phases) {
    phases.push_back({{"phase", InfoFor(s.phase).key},
                      {"meaning", InfoFor(s.phase).meaning},
                      {"hosts", s.hosts},
                      {"median_ms", Ms(s.median_us)},
                      {"p90_ms", Ms(s.p90_us)},
                      {"max_ms", Ms(s.max_us)},
                      {"max_host", s.max_host}});
  }
  j["phases"] = phases;
  json hosts = json::array();
  for (const HostLaunch& h : job.hosts) hosts.push_back(HostJson(job, h));
  j["hosts"] = hosts;
  if (job.critical) {
    const CriticalPath& c = *job.critical;
    j["critical"] = {
        {"host", job.hosts[c.host].host},
        {"end_ms", Ms(job.hosts[c.host].end_us - job.t0_us)},
        {"phase", c.created_late ? "created_late" : InfoFor(c.phase).key},
        {"took_ms", Ms(c.took_us)},
        {"median_ms", Ms(c.median_us)},
        {"summary", DescribeCritical(job)}};
    json chain = json::array();
    for (size_t i : c.launched_by) chain.push_back(job.hosts[i].host);
    j["critical"]["launched_by"] = chain;
  } else {
    j["critical"] = nullptr;
  }
  json slowest = json::array();
  for (size_t i : job.slowest) slowest.push_back(job.hosts[i].host);
  j["slowest"] = slowest;
  json failed = json::array();
  for (size_t i : job.failed) {
    failed.push_back({{"host", job.hosts[i].host},
                      {"reason", job.hosts[i].failure},
                      {"at_ms", Ms(*job.hosts[i].failed_at - job.t0_us)}});
  }
  j["failed"] = failed;
  j["notes"] = job.notes;
  j["warnings"] = warnings;
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace k8s_agent::report
