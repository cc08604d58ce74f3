// SPDX-License-Identifier: Apache-2.0
// The per-host wait: resolve HOST to a pod, follow it until it is Running
// with an IP, then prove SSH works on that IP. Lazy, level-driven, bounded.

#ifndef K8S_AGENT_PLUGIN_AGENT_HOST_WAITER_H_
#define K8S_AGENT_PLUGIN_AGENT_HOST_WAITER_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "plugin/agent/host_name.h"
#include "plugin/agent/pod_resolver.h"
#include "plugin/agent/pod_status_trace.h"
#include "plugin/agent/ssh_probe.h"
#include "plugin/agent/trace.h"
#include "plugin/agent/wait_narrator.h"
#include "plugin/agent/wait_policy.h"
#include "plugin/base/event_loop.h"
#include "plugin/kube/kube_client.h"
#include "plugin/kube/pod_watcher.h"
#include "plugin/ssh/ssh_client.h"

namespace k8s_agent {

/// One host's wait, driven by the event loop.
///
///   kResolving --PodResolver names the pod (pod_resolver.h)--+
///       | HOST is a Job's hostname: the resolver's labelled   |
///       |   watch holds its pods (kFinding)                   |
///       v                                                     v
///   kWaitingForPod <--pod not usable-- (evaluate every snapshot)
///       | Running + IP (+ Ready)                              |
///       v                                                     |
///   kProbing --refused/reset/timeout--> kBackoff -------------+
///       | connected, host key ok, authenticated    (SshProbe's rules)
///       v
///   kReady (the connection is handed over: one handshake per host)
///
///   Any state --> kFailed: Failed/Succeeded phase, a fatal container
///   reason, RBAC/TLS errors, host key mismatch, auth rejected, the
///   overall timeout (the message names the last state seen), or the
///   resolver's verdict on a pod that went: a bare pod deleted or being
///   deleted (at once), a controlled one not replaced within
///   replacement_grace. While a replacement is looked for by spec.hostname
///   (a Job's has a new name) the waiter is kResolving again.
///
/// The waiter follows the pod by name (one GET-like LIST for a ready host,
/// a watch once the pod is not usable or the probe is slow) or, for a
/// Job's hostname, on the resolver's labelled watch (PodResolver::Pick).
/// The resolver decides which pod and what a departure means; the
/// narrator says what the wait is stuck on; the waiter checks fatal
/// states, probes SSH, keeps the deadline and hands the connection over.
///
/// Readiness is a level check on the latest snapshot, never an edge: a
/// pod that stops being usable aborts the probe in flight, and a pod
/// replaced under the same name (new UID or IP) restarts it.
class HostWaiter : public Pollable {
 public:
  enum class State {
    kResolving,
    kWaitingForPod,
    kProbing,
    kBackoff,
    kReady,
    kFailed
  };

  HostWaiter(HostName host, WaitPolicy policy, kube::KubeClient* client,
             ssh::SshConnector* connector, Clock* clock, Tracer* tracer,
             uint64_t seed);
  ~HostWaiter() override;

  void Start(TimePoint now);

  State state() const { return state_; }
  bool done() const {
    return state_ == State::kReady || state_ == State::kFailed;
  }
  /// kFailed: what went wrong, with the stage and what to do.
  const Status& status() const { return status_; }
  /// The pod HOST resolved to (empty until known).
  const std::string& pod_name() const { return resolver_.pod_name(); }
  /// The IP probed last; once kReady, the one that answered.
  const std::string& pod_ip() const { return probe_.ip(); }
  int ssh_attempts() const { return probe_.attempts(); }
  /// kReady: the authenticated connection, ready for Exec().
  std::unique_ptr<ssh::SshConnection> TakeConnection();

  void CollectFds(std::vector<pollfd>* fds) override;
  TimePoint NextWake() const override;
  void OnFdReady(int fd, short revents, TimePoint now) override;
  void OnTimer(TimePoint now) override;

 private:
  // The resolver has news (an API answer): a pod to follow, or a verdict.
  void OnResolverChange();
  void BeginWaiting(std::optional<kube::Pod> pod, const std::string& rv,
                    TimePoint now);
  void StartWatcher(std::optional<kube::Pod> pod, const std::string& rv,
                    TimePoint now);
  void Evaluate(TimePoint now);
  // Evaluate's step while the labelled watch is the source.
  void EvaluateFound(TimePoint now);
  // Evaluate's step for the pod that is the target now.
  void EvaluatePod(const kube::Pod& pod, TimePoint now);
  // Evaluate's step for no pod: deleted (the resolver decides) or not
  // created yet.
  void OnPodAbsent(TimePoint now);
  // Acts on the resolver's verdict after a departure: fail, look again,
  // or wait as it says.
  void FollowDeparture(TimePoint now);
  // Evaluate's step for a fatal pod state: true when it ended this
  // evaluation (the host failed, or a replacement is being looked for).
  bool EndedByFatal(const kube::Pod& pod, TimePoint now);
  Status CheckFatal(const kube::Pod& pod) const;
  // CheckFatal's verdict may be outvoted by SSH answering: true while the
  // grace for that runs (see fatal_probe_grace).
  bool ProbeDespite(const kube::Pod& pod, TimePoint now);
  bool Usable(const kube::Pod& pod) const;
  // Probes SSH on a usable pod: a new target (replaced, new IP) restarts
  // the probe; a due one starts its next attempt.
  void Probe(const kube::Pod& pod, TimePoint now);
  void AbortAttempt();
  // Reacts to the probe having settled (ready, backing off, failed).
  void OnProbeSettled(TimePoint now);
  void NoteState(const std::string& summary, TimePoint now);
  // What the narrator is told.
  WaitFacts Facts() const;
  // The API tracker (the resolver's or the watcher's) with failures.
  const kube::ApiHealth* TroubledApi() const;
  void Fail(const Status& why);
  // Stops the watch and the resolver's calls: no more API traffic.
  void DropWatchers();

  HostName host_;
  WaitPolicy policy_;
  kube::KubeClient* client_;
  Clock* clock_;
  Tracer* tracer_;
  uint64_t seed_;

  State state_ = State::kResolving;
  Status status_;
  Deadline overall_ = Deadline::Infinite();
  PodResolver resolver_;
  WaitNarrator narrator_;

  // Following the pod by name.
  std::unique_ptr<kube::PodWatcher> watcher_;
  std::optional<kube::Pod> direct_pod_;       // Snapshot when not watching.
  std::string watch_from_rv_;                 // The lookup list's version.
  TimePoint watch_after_ = TimePoint::max();  // See probe_watch_after.
  bool running_traced_ = false;
  bool said_unschedulable_ = false;
  PodStatusTrace pod_status_trace_;

  // Probing SSH.
  SshProbe probe_;
  bool probed_ = false;  // A target was set: a later change is news.
  // Since when a container's fatal wait waits on the probe's answer.
  TimePoint fatal_since_ = TimePoint::max();
  std::string fatal_note_;  // "container sidecar is waiting: ...".
};

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_AGENT_HOST_WAITER_H_
