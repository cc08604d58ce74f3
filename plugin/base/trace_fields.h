// SPDX-License-Identifier: Apache-2.0
// The field names of a --trace record, for the writer (plugin/agent) and
// the reader (plugin/report): spelt once, so the two cannot drift apart.

#ifndef K8S_AGENT_PLUGIN_BASE_TRACE_FIELDS_H_
#define K8S_AGENT_PLUGIN_BASE_TRACE_FIELDS_H_

// The values are the file format: traces written by older agents must
// still read, so a value never changes; a new field gets a new name. The
// tests spell the names out as literals on purpose, to pin the format.
namespace k8s_agent::trace_field {

// Every record.
inline constexpr char kHost[] = "host";    ///< The name the agent was given.
inline constexpr char kPod[] = "pod";      ///< The pod it resolved to.
inline constexpr char kEvent[] = "event";  ///< begin, resolved, ...
inline constexpr char kTMonoUs[] = "t_mono_us";  ///< Monotonic clock.
inline constexpr char kTWallUs[] = "t_wall_us";  ///< Wall clock.
inline constexpr char kPid[] = "pid";
inline constexpr char kDetail[] = "detail";  ///< Optional free text.

// "begin": the agent's own host (its pod, in a cluster).
inline constexpr char kOn[] = "on";
// "ssh_ready": when the attempt that succeeded began (monotonic).
inline constexpr char kAttemptTMonoUs[] = "attempt_t_mono_us";

// "pod_status": the pod's own timeline (plugin/agent/pod_status_trace.h).
inline constexpr char kUid[] = "uid";
inline constexpr char kPhase[] = "phase";
inline constexpr char kNode[] = "node";
inline constexpr char kCreated[] = "created";
inline constexpr char kTrueSince[] = "true_since";  ///< Object, keys below.
inline constexpr char kContainerStarted[] = "container_started";
inline constexpr char kRestarts[] = "restarts";
inline constexpr char kWaiting[] = "waiting";  ///< Array of reasons.
inline constexpr char kUnschedulable[] = "unschedulable";

// The keys of "true_since": Kubernetes pod condition types, as the API
// spells them, each mapped to when the condition became True.
inline constexpr char kPodScheduled[] = "PodScheduled";
inline constexpr char kInitialized[] = "Initialized";
inline constexpr char kContainersReady[] = "ContainersReady";
inline constexpr char kReady[] = "Ready";
inline constexpr const char* kTrueSinceTypes[] = {kPodScheduled, kInitialized,
                                                  kContainersReady, kReady};

}  // namespace k8s_agent::trace_field

#endif  // K8S_AGENT_PLUGIN_BASE_TRACE_FIELDS_H_
