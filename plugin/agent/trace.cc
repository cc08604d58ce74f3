// SPDX-License-Identifier: Apache-2.0
// Tracer: JSON lines with monotonic and wall timestamps.

#include "plugin/agent/trace.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "plugin/base/log.h"

namespace k8s_agent {

StatusOr<Tracer> Tracer::Open(const std::string& path, Clock* clock) {
  Tracer t;
  t.clock_ = clock;
  if (path.empty()) return t;
  int fd =
      ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return ErrnoError("--trace " + path, errno)
        .WithContext("cannot open trace file");
  }
  t.fd_.reset(fd);
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) == 0) t.local_host_ = name;
  t.path_ = path;
  return t;
}

void Tracer::Record(const std::string& host, const std::string& pod,
                    const std::string& event, const std::string& detail) {
  if (!fd_.valid()) return;
  RecordFields(host, pod, event, nlohmann::json::object(), detail);
}

void Tracer::RecordFields(const std::string& host, const std::string& pod,
                          const std::string& event,
                          const nlohmann::json& fields,
                          const std::string& detail) {
  if (!fd_.valid()) return;
  nlohmann::json j = fields.is_object() ? fields : nlohmann::json::object();
  j[trace_field::kHost] = host;
  j[trace_field::kPod] = pod;
  j[trace_field::kEvent] = event;
  j[trace_field::kTMonoUs] =
      std::chrono::duration_cast<std::chrono::microseconds>(
          clock_->Now().time_since_epoch())
          .count();
  j[trace_field::kTWallUs] = WallClockMicros();
  j[trace_field::kPid] = static_cast<int>(::getpid());
  if (!detail.empty()) j[trace_field::kDetail] = detail;
  // Replace invalid UTF-8 instead of throwing: details may quote a server.
  std::string line =
      j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  // One write: O_APPEND makes it land whole at the end of the file.
  ssize_t n;
  do {
    n = ::write(fd_.get(), line.data(), line.size());
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(line.size())) return;
  // Best effort: never fail a launch for a trace, but never lose it
  // silently either. A short write is a full disk.
  int err = n < 0 ? errno : ENOSPC;
  LogWarning("--trace " + path_ + ": cannot write: " + std::strerror(err) +
             "; tracing stopped (the launch goes on)");
  fd_.reset();
}

}  // namespace k8s_agent
