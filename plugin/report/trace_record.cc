// SPDX-License-Identifier: Apache-2.0
// ParseTraceLine: JSON line -> TraceRecord, never throws.

#include "plugin/report/trace_record.h"

#include <nlohmann/json.hpp>

#include "plugin/base/rfc3339.h"
#include "plugin/base/trace_fields.h"

namespace k8s_agent::report {
namespace {

using nlohmann::json;

Status Bad(const std::string& why) { return InvalidArgumentError(why); }

// `"host"`, for messages that name a field.
std::string Quoted(const char* field) {
  return std::string("\"") + field + "\"";
}

constexpr char kNotARecordNo[] = "not a k8s-agent trace record: no ";

// Microsecond times past this (the year 5138) are corrupt, and would make
// differences overflow.
constexpr int64_t kMaxMicros = int64_t{100000000000000000};

bool SaneMicros(const json& v) {
  if (!v.is_number_integer()) return false;
  int64_t t = v.get<int64_t>();
  return t >= 0 && t < kMaxMicros;
}

// A timestamp field of a pod_status record; absent is fine, garbage is not.
Status Timestamp(const json& object, const char* key,
                 std::optional<int64_t>* out) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return OkStatus();
  if (!it->is_string()) {
    return Bad("pod_status " + Quoted(key) + " is not a string");
  }
  *out = ParseRfc3339Micros(it->get_ref<const std::string&>());
  if (!*out) {
    return Bad("pod_status " + Quoted(key) + " is not an RFC 3339 time: \"" +
               it->get_ref<const std::string&>() + "\"");
  }
  return OkStatus();
}

std::string StringOr(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

StatusOr<PodStatusData> ParsePodStatus(const json& j) {
  PodStatusData d;
  d.uid = StringOr(j, trace_field::kUid);
  d.phase = StringOr(j, trace_field::kPhase);
  d.node = StringOr(j, trace_field::kNode);
  d.unschedulable = StringOr(j, trace_field::kUnschedulable);
  K8S_RETURN_IF_ERROR(Timestamp(j, trace_field::kCreated, &d.created));
  K8S_RETURN_IF_ERROR(
      Timestamp(j, trace_field::kContainerStarted, &d.container_started));
  auto since = j.find(trace_field::kTrueSince);
  if (since != j.end() && since->is_object()) {
    K8S_RETURN_IF_ERROR(
        Timestamp(*since, trace_field::kPodScheduled, &d.scheduled));
    K8S_RETURN_IF_ERROR(
        Timestamp(*since, trace_field::kInitialized, &d.initialized));
    K8S_RETURN_IF_ERROR(
        Timestamp(*since, trace_field::kContainersReady, &d.containers_ready));
    K8S_RETURN_IF_ERROR(Timestamp(*since, trace_field::kReady, &d.ready));
  }
  auto restarts = j.find(trace_field::kRestarts);
  if (restarts != j.end() && restarts->is_number_integer()) {
    d.restarts = static_cast<int>(restarts->get<int64_t>());
  }
  auto waiting = j.find(trace_field::kWaiting);
  if (waiting != j.end() && waiting->is_array()) {
    for (const json& w : *waiting) {
      if (w.is_string()) d.waiting.push_back(w.get<std::string>());
    }
  }
  return d;
}

}  // namespace

StatusOr<TraceRecord> ParseTraceLine(std::string_view line) {
  json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Bad("not JSON (truncated or foreign line)");
  if (!j.is_object()) return Bad("not a JSON object");
  TraceRecord r;
  auto host = j.find(trace_field::kHost);
  if (host == j.end() || !host->is_string() ||
      host->get_ref<const std::string&>().empty()) {
    return Bad(kNotARecordNo + Quoted(trace_field::kHost) + " string");
  }
  r.host = host->get<std::string>();
  auto event = j.find(trace_field::kEvent);
  if (event == j.end() || !event->is_string() ||
      event->get_ref<const std::string&>().empty()) {
    return Bad(kNotARecordNo + Quoted(trace_field::kEvent) + " string");
  }
  r.event = event->get<std::string>();
  auto wall = j.find(trace_field::kTWallUs);
  if (wall == j.end() || !wall->is_number_integer()) {
    return Bad(kNotARecordNo + std::string("integer ") +
               Quoted(trace_field::kTWallUs));
  }
  if (!SaneMicros(*wall)) {
    return Bad(Quoted(trace_field::kTWallUs) + " out of range");
  }
  r.t_wall_us = wall->get<int64_t>();
  auto mono = j.find(trace_field::kTMonoUs);
  if (mono != j.end() && SaneMicros(*mono)) {
    r.t_mono_us = mono->get<int64_t>();
  }
  auto pid = j.find(trace_field::kPid);
  if (pid != j.end() && pid->is_number_integer()) {
    r.pid = static_cast<int>(pid->get<int64_t>());
  }
  r.pod = StringOr(j, trace_field::kPod);
  r.detail = StringOr(j, trace_field::kDetail);
  r.on = StringOr(j, trace_field::kOn);
  auto attempt = j.find(trace_field::kAttemptTMonoUs);
  if (attempt != j.end() && SaneMicros(*attempt)) {
    r.attempt_t_mono_us = attempt->get<int64_t>();
  }
  if (r.event == "pod_status") {
    K8S_ASSIGN_OR_RETURN(r.pod_status, ParsePodStatus(j));
  }
  return r;
}

}  // namespace k8s_agent::report
