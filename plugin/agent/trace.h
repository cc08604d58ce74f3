// SPDX-License-Identifier: Apache-2.0
// --trace: one JSON line per phase per host, appended atomically.

#ifndef K8S_AGENT_PLUGIN_AGENT_TRACE_H_
#define K8S_AGENT_PLUGIN_AGENT_TRACE_H_

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "plugin/base/clock.h"
#include "plugin/base/status.h"
#include "plugin/base/trace_fields.h"
#include "plugin/base/unique_fd.h"

namespace k8s_agent {

/// Appends trace records such as
///   {"host":"w-1","pod":"w-1","event":"ssh_ready","t_mono_us":...,
///    "t_wall_us":...,"pid":123,"detail":"10.233.0.11:22 after 3 attempts",
///    "attempt_t_mono_us":...}
/// Events: begin (with "on": this host), resolved, pod_status (the pod's
/// own timestamps, see pod_status_trace.h), pod_running, ssh_ready,
/// started, exited, failed. `k8s-agent --report` reads them. The field
/// names are the trace_field constants (plugin/base/trace_fields.h,
/// included here for RecordFields() callers), which the reader uses too.
/// Each record is one write(2) on an O_APPEND fd, so the many agents of
/// one mpirun can share a file without tearing lines. A disabled tracer
/// (no file) costs nothing.
class Tracer {
 public:
  Tracer() = default;
  /// Opens (creating) `path` for appending; empty path = disabled.
  static StatusOr<Tracer> Open(const std::string& path, Clock* clock);

  /// A record that cannot be written (disk full, /dev/full, EIO) is said
  /// once on stderr and tracing stops; the launch itself goes on.
  void Record(const std::string& host, const std::string& pod,
              const std::string& event, const std::string& detail = "");
  /// Record() plus the members of the JSON object `fields` (which never
  /// replace the common keys above): for records that carry data a
  /// report reads, such as the pod's own timestamps. Keys are
  /// trace_field constants.
  void RecordFields(const std::string& host, const std::string& pod,
                    const std::string& event, const nlohmann::json& fields,
                    const std::string& detail = "");

  bool enabled() const { return fd_.valid(); }
  /// This machine's host name (the pod's, in a pod): in "begin" records,
  /// so a report can tell which worker launched a host under tree spawn.
  const std::string& local_host() const { return local_host_; }

 private:
  UniqueFd fd_;
  std::string local_host_;
  std::string path_;
  Clock* clock_ = nullptr;
};

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_AGENT_TRACE_H_
