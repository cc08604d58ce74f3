// SPDX-License-Identifier: Apache-2.0
// The launch model: trace records -> per-host phases, per-job summary.
//
// A host's start-up is a chain of marks, each starting a phase:
//
//   created --scheduling--> scheduled --container--> container started
//     --sshd--> SSH attempt that succeeded --handshake--> ssh ready
//     --command--> command started
//
// created/scheduled/container started come from the pod (pod_status
// records: API server, scheduler and kubelet clocks, whole seconds); the
// rest from the agent's own clock. When the container was up before the
// agent began waiting for the host, a "launcher" phase (not asked yet)
// sits between container started and the agent's begin. Pod timestamps
// are placed no later than the moment the agent first saw them: a later
// one means the writer's clock is ahead (reported as skew).

#ifndef K8S_AGENT_PLUGIN_REPORT_LAUNCH_MODEL_H_
#define K8S_AGENT_PLUGIN_REPORT_LAUNCH_MODEL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "plugin/base/status.h"
#include "plugin/report/trace_record.h"

namespace k8s_agent::report {

enum class Phase : int {
  kScheduling = 0,
  kContainer,
  kLauncher,
  kSshd,
  kHandshake,
  kCommand,
};
inline constexpr int kPhaseCount = 6;

struct PhaseInfo {
  const char* key;      ///< JSON / Chrome name: "scheduling".
  const char* title;    ///< Column title: "scheduling".
  const char* colour;   ///< SVG fill.
  const char* meaning;  ///< One line for legends and --help.
};
const PhaseInfo& InfoFor(Phase phase);
inline Phase PhaseAt(int i) { return static_cast<Phase>(i); }

struct Span {
  Phase phase = Phase::kScheduling;
  int64_t start_us = 0;  ///< Wall clock, microseconds since the epoch.
  int64_t end_us = 0;
  bool failed = false;  ///< The host failed during this phase.
  int64_t duration_us() const { return end_us - start_us; }
};

/// A pod timestamp later than the agent's first sight of it.
struct Skew {
  std::string field;  ///< "created", "scheduled", "container_started".
  int64_t ahead_us = 0;
};

struct HostLaunch {
  std::string host;
  std::string pod;
  std::string node;
  std::string file;  ///< The trace the host's records came from.
  int pid = 0;       ///< The agent that launched it.
  int launches = 1;  ///< Agent runs seen for this host; the last is used.
  /// Where its agent ran ("begin" records' host name): under tree spawn,
  /// the worker whose orted launched this host.
  std::string launched_from;

  // Agent clock.
  std::optional<int64_t> begin, running_seen, attempt_start, ssh_ready, started,
      exited, failed_at;
  // Pod clocks, placed (see the file comment).
  std::optional<int64_t> created, scheduled, container_started;
  // The pod's other conditions (placed the same way): for --format json;
  // they bound no phase the agent waits for.
  std::optional<int64_t> initialized, containers_ready, ready;

  std::vector<Span> spans;  ///< In time order, back to back.
  /// Each container waiting reason, when the agent first saw it.
  std::vector<std::pair<int64_t, std::string>> waiting;
  int restarts = 0;
  std::optional<Skew> skew;      ///< The largest one, if any.
  bool already_running = false;  ///< Up before the first agent began.
  std::string failure;           ///< The failed record's message.
  std::string exit_detail;

  bool failed() const { return failed_at.has_value(); }
  /// Start of the first span (else begin): the row's sort key.
  int64_t first_us = 0;
  /// Command started, else ssh ready, else failed, else last record.
  int64_t end_us = 0;
  /// True when the command (or, under --wait-only, SSH) was reached.
  bool reached = false;
  /// Summed duration of `phase` on this host (0 if absent).
  int64_t PhaseUs(Phase phase) const;
  bool HasPhase(Phase phase) const;
};

struct PhaseSummary {
  Phase phase = Phase::kScheduling;
  int hosts = 0;
  int64_t median_us = 0;
  int64_t p90_us = 0;
  int64_t max_us = 0;
  std::string max_host;
};

/// Why the last host was last.
struct CriticalPath {
  size_t host = 0;  ///< Index into JobLaunch::hosts.
  /// The phase that exceeded its median by most, or kCreatedLate when the
  /// pod itself was created late (e.g. OrderedReady StatefulSets).
  bool created_late = false;
  Phase phase = Phase::kScheduling;
  int64_t took_us = 0;    ///< That phase on the host (or its creation offset).
  int64_t median_us = 0;  ///< The same across hosts.
  /// The hosts whose agents launched it, nearest first (tree spawn): the
  /// critical host waited on these.
  std::vector<size_t> launched_by;
};

struct JobLaunch {
  int64_t t0_us = 0;                 ///< The earliest mark of the job.
  int64_t end_us = 0;                ///< The last host's end (command started).
  std::vector<HostLaunch> hosts;     ///< By first_us, then name (w-2 < w-10).
  std::vector<PhaseSummary> phases;  ///< Phases some host went through.
  std::optional<CriticalPath> critical;
  std::vector<size_t> slowest;     ///< Up to 5 reached hosts, last first.
  std::vector<size_t> failed;      ///< Indexes of failed hosts.
  std::vector<std::string> notes;  ///< Skew, repeated launches...
  int reached = 0;
};

/// Builds the model. kInvalidArgument when no record names a host.
StatusOr<JobLaunch> BuildJobLaunch(const std::vector<TraceRecord>& records);

}  // namespace k8s_agent::report

#endif  // K8S_AGENT_PLUGIN_REPORT_LAUNCH_MODEL_H_
