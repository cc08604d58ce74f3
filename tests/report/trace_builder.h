// SPDX-License-Identifier: Apache-2.0
// Synthetic --trace lines for report tests: what an agent would write for
// one host, from a handful of times.

#ifndef K8S_AGENT_TESTS_REPORT_TRACE_BUILDER_H_
#define K8S_AGENT_TESTS_REPORT_TRACE_BUILDER_H_

#include <cstdint>
#include <ctime>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace k8s_agent::report {

// 2026-12-01T00:00:00Z: a base so that test times read as small offsets.
inline constexpr int64_t kBaseUs = int64_t{1796083200} * 1000000;
inline constexpr int64_t kSec = 1000000;
inline constexpr int64_t kMs = 1000;

inline std::string Rfc3339(int64_t us) {
  time_t secs = static_cast<time_t>(us / kSec);
  struct tm tm {};
  gmtime_r(&secs, &tm);
  char buf[32];
  strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

/// One host's launch; times are offsets from kBaseUs. Pod times (created,
/// scheduled, container_started) should be whole seconds, as on a real
/// API server.
struct HostSpec {
  std::string host = "w-0";
  std::string node = "node-a";
  int pid = 100;
  std::string on = "launcher";  ///< Where the agent ran.
  int64_t begin = 0;
  std::optional<int64_t> created = 0;
  std::optional<int64_t> scheduled = 1 * kSec;
  std::optional<int64_t> container_started = 3 * kSec;
  /// When the agent saw the pod Running (>= container_started normally).
  int64_t running_seen = 3 * kSec + 100 * kMs;
  std::optional<int64_t> attempt = 3 * kSec + 400 * kMs;
  std::optional<int64_t> ssh_ready = 3 * kSec + 450 * kMs;
  std::optional<int64_t> started = 3 * kSec + 460 * kMs;
  std::vector<std::string> waiting = {"ContainerCreating"};
  int restarts = 0;
  /// Whether the agent saw the pod Pending first (default: unless the
  /// container started before begin).
  std::optional<bool> saw_pending;
  std::optional<int64_t> failed;  ///< Replaces the SSH part when set.
  std::string failure =
      "pod default/w-0 is Pending: container main is "
      "waiting: ErrImagePull";
};

inline std::string Line(const HostSpec& h, const std::string& event, int64_t t,
                        nlohmann::json extra = nlohmann::json::object(),
                        const std::string& detail = "") {
  nlohmann::json j = extra;
  j["host"] = h.host;
  j["pod"] = h.host;
  j["event"] = event;
  j["t_wall_us"] = kBaseUs + t;
  j["t_mono_us"] = 5000000000 + t;  // Another origin: only differences matter.
  j["pid"] = h.pid;
  if (!detail.empty()) j["detail"] = detail;
  return j.dump() + "\n";
}

inline std::string HostTrace(const HostSpec& h) {
  std::string out = Line(h, "begin", h.begin, {{"on", h.on}});
  nlohmann::json pending = {
      {"uid", "uid-" + h.host}, {"phase", "Pending"}, {"restarts", 0}};
  if (h.created) pending["created"] = Rfc3339(kBaseUs + *h.created);
  if (!h.waiting.empty()) pending["waiting"] = h.waiting;
  int64_t first_seen = h.begin + 10 * kMs;
  if (h.created) first_seen = std::max(first_seen, *h.created + 10 * kMs);
  // An agent that begins after the container is up never sees it Pending.
  bool saw_pending = h.saw_pending.value_or(
      !(h.container_started && *h.container_started < h.begin));
  if (saw_pending) out += Line(h, "pod_status", first_seen, pending);
  if (h.failed && !h.container_started) {
    out += Line(h, "failed", *h.failed, nlohmann::json::object(), h.failure);
    return out;
  }
  nlohmann::json running = {{"uid", "uid-" + h.host},
                            {"phase", "Running"},
                            {"node", h.node},
                            {"restarts", h.restarts}};
  if (h.created) running["created"] = Rfc3339(kBaseUs + *h.created);
  if (h.scheduled) {
    running["true_since"] = {{"PodScheduled", Rfc3339(kBaseUs + *h.scheduled)},
                             {"Initialized", Rfc3339(kBaseUs + *h.scheduled)}};
  }
  if (h.container_started) {
    running["container_started"] = Rfc3339(kBaseUs + *h.container_started);
  }
  out += Line(h, "pod_status", std::max(h.running_seen, first_seen), running);
  out += Line(h, "pod_running", h.running_seen);
  if (h.failed) {
    out += Line(h, "failed", *h.failed, nlohmann::json::object(), h.failure);
    return out;
  }
  if (h.ssh_ready) {
    nlohmann::json extra = nlohmann::json::object();
    if (h.attempt) extra["attempt_t_mono_us"] = 5000000000 + *h.attempt;
    out += Line(h, "ssh_ready", *h.ssh_ready, extra,
                "10.0.0.1:22 after 3 attempt(s)");
  }
  if (h.started) {
    out += Line(h, "started", *h.started);
    out += Line(h, "exited", *h.started + 5 * kSec, nlohmann::json::object(),
                "status 0");
  }
  return out;
}

}  // namespace k8s_agent::report

#endif  // K8S_AGENT_TESTS_REPORT_TRACE_BUILDER_H_
