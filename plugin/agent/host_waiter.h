// SPDX-License-Identifier: Apache-2.0
// The per-host wait: resolve HOST to a pod, follow it until it is Running
// with an IP, then prove SSH works on that IP. Lazy, level-driven, bounded.

#ifndef K8S_AGENT_PLUGIN_AGENT_HOST_WAITER_H_
#define K8S_AGENT_PLUGIN_AGENT_HOST_WAITER_H_

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "plugin/agent/host_name.h"
#include "plugin/agent/pod_status_trace.h"
#include "plugin/agent/pod_target.h"
#include "plugin/agent/ssh_probe.h"
#include "plugin/agent/trace.h"
#include "plugin/agent/wait_narrator.h"
#include "plugin/agent/wait_policy.h"
#include "plugin/base/backoff.h"
#include "plugin/base/event_loop.h"
#include "plugin/kube/api_health.h"
#include "plugin/kube/api_retry.h"
#include "plugin/kube/kube_client.h"
#include "plugin/kube/pod_watcher.h"
#include "plugin/ssh/ssh_client.h"

namespace k8s_agent {

/// One host's wait, driven by the event loop.
///
///   kResolving --LIST name=HOST finds it-----------+
///       | none, HOST is <job>-<index>: WATCH the   |
///       |   pods labelled for it (_find.cc)        |
///       | none, any other HOST: LIST the namespace,|
///       |   match spec.hostname                    |
///       v                                          v
///   kWaitingForPod <--pod not usable-- (evaluate every snapshot)
///       | Running + IP (+ Ready)                   |
///       v                                          |
///   kProbing --refused/reset/timeout--> kBackoff --+ (SshProbe's rules)
///       | connected, host key ok, authenticated
///       v
///   kReady (the connection is handed over: one handshake per host)
///
///   Any state --> kFailed: Failed/Succeeded phase, a fatal container
///   reason, a bare pod being deleted (at once: no controller recreates
///   it), a controlled pod deleted and not replaced within
///   replacement_grace (a pod found by spec.hostname is looked up again
///   meanwhile: a Job's replacement has a new name), RBAC/TLS errors, host
///   key mismatch, auth rejected, or the overall timeout (the message names
///   the last state seen).
///
///   A Job's hostname found by its labels needs none of that: the Failed
///   attempt, a deletion and the retry all show on the one labelled watch.
///
///   Several pods with HOST's hostname or IP: live ones win (PickTarget).
///   A controlled pod found by spec.hostname that turns Failed/Succeeded,
///   or only such ended pods matching, is handled as a deletion: HOST is
///   looked up again within replacement_grace (an Indexed Job keeps the
///   Failed attempt and retries the index in a new pod).
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
  const std::string& pod_name() const { return pod_name_; }
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
  void Lookup(TimePoint now);
  void List(TimePoint now);
  /// Notes that a lookup call came back; false (and a retry scheduled)
  /// when it failed.
  bool Answered(const Status& status, TimePoint now);
  void OnLookupDone(StatusOr<kube::PodList> list);
  void OnListDone(StatusOr<kube::PodList> list);
  // HOST is no pod name (yet) and fits a Job's hostname grammar: watch the
  // pods labelled for it from the watch cache's current state (rv 0: what
  // it holds arrives as ADDED, so lookup and watch are one request).
  void StartFinder(std::string selector, const std::string& name_rv,
                   TimePoint now);
  // Evaluate's step while the finder is the source: the live pod it holds
  // is the target; only ended ones, or none, wait for the Job.
  void EvaluateFound(TimePoint now);
  void FollowFound(const kube::Pod& pod,
                   const std::vector<const kube::Pod*>& passed_over,
                   TimePoint now);
  void WaitForFound(const kube::Pod* ended, TimePoint now);
  // The finder saw nothing for not_found_grace: one namespace-wide LIST
  // for spec.hostname (Kubernetes before 1.28 labels no completion index).
  void ListAsLastResort(TimePoint now);
  // When the name watch / the last-resort LIST are due: counted from when
  // the finder's watch was first answered, so a request still queued or
  // refused by API priority and fairness brings no second one.
  TimePoint NameWatchDue() const;
  TimePoint LastResortDue() const;
  void OnLastResortListed(const TargetPick& pick, const std::string& rv,
                          TimePoint now);
  // The listed pod HOST resolved to (`passed_over`: the ended or deleting
  // ones that matched too, logged): follow it from the list's version.
  void FollowListed(const kube::Pod& target,
                    const std::vector<const kube::Pod*>& passed_over,
                    const std::string& rv, TimePoint now);
  // Only `ended` (a terminal pod) has HOST's hostname: fails for a bare
  // pod, else starts waiting for its controller's replacement.
  void AwaitReplacementOf(const kube::Pod& ended, TimePoint now);
  // "host "w-0" matches 2 pods in namespace ns: a, b (...)".
  Status SeveralPodsMatch(const std::vector<const kube::Pod*>& live) const;
  // "no pod in namespace ns has IP X (...)".
  Status NoPodHasIp() const;
  // "no live pod in namespace ns has IP X: pod a is Succeeded, ...".
  Status NoLivePodHasIp(const std::vector<const kube::Pod*>& ended) const;
  // HOST's pod went (deleted, or ended as ended_how_ says): look HOST up
  // again for its controller's replacement, skipping the old pod's uid.
  void Reresolve(TimePoint now);
  // replacement_grace passed without a replacement.
  Status NotReplaced() const;
  void RetryApi(const Status& why, TimePoint now);
  void BeginWaiting(std::optional<kube::Pod> pod, const std::string& rv,
                    TimePoint now);
  void StartWatcher(std::optional<kube::Pod> pod, const std::string& rv,
                    TimePoint now);
  void Evaluate(TimePoint now);
  // Evaluate's step for the pod that is the target now.
  void EvaluatePod(const kube::Pod& pod, TimePoint now);
  // Evaluate's step for no pod: deleted (fail, look for a replacement or
  // wait for one) or not created yet.
  void OnPodAbsent(TimePoint now);
  // Evaluate's step for a fatal pod state: true when it ended this
  // evaluation (the host failed, or a replacement is being looked for).
  bool EndedByFatal(const kube::Pod& pod, TimePoint now);
  Status CheckFatal(const kube::Pod& pod) const;
  // CheckFatal's verdict may be outvoted by SSH answering: true while the
  // grace for that runs (see fatal_probe_grace).
  bool ProbeDespite(const kube::Pod& pod, TimePoint now);
  // "pod ns/w is being deleted and no controller owns it ...".
  Status BarePodGone(const std::string& what) const;
  bool Usable(const kube::Pod& pod) const;
  // Probes SSH on a usable pod: a new target (replaced, new IP) restarts
  // the probe; a due one starts its next attempt.
  void Probe(const kube::Pod& pod, TimePoint now);
  void AbortAttempt();
  // Reacts to the probe having settled (ready, backing off, failed).
  void OnProbeSettled(TimePoint now);
  void NoteState(const std::string& summary, TimePoint now);
  void Fail(const Status& why);
  // Stops and destroys the name watcher and the finder.
  void DropWatchers();
  // What the narrator is told.
  WaitFacts Facts() const;
  // The API tracker (ours or the watcher's) with failures, or nullptr.
  const kube::ApiHealth* TroubledApi() const;
  std::string PodRef() const;

  HostName host_;
  WaitPolicy policy_;
  kube::KubeClient* client_;
  ssh::SshConnector* connector_;
  Clock* clock_;
  Tracer* tracer_;
  uint64_t seed_;

  State state_ = State::kResolving;
  Status status_;
  std::string pod_name_;
  TimePoint started_{};
  Deadline overall_ = Deadline::Infinite();

  // Resolution (LIST by name, then LIST for hostnames if none).
  kube::ApiCall call_;
  kube::ApiRetryPolicy api_retry_;
  kube::ApiHealth api_health_;  // Lookups; the watcher keeps its own.
  TimePoint api_retry_at_ = TimePoint::max();
  bool listing_ = false;
  kube::PodList listed_;  // Pages accumulated so far.
  // A lookup was answered: before that, "no answer yet", not pod state.
  bool lookup_answered_ = false;
  // The namespace-wide lookup found no pod at all: the namespace (or the
  // selector) may be wrong, not just the name.
  bool namespace_empty_ = false;

  // Finding a Job's pod by its labels (StartFinder).
  std::unique_ptr<kube::PodWatcher> finder_;
  std::string finder_selector_;
  std::string found_name_;                  // The finder's live pod used last.
  std::set<std::string> passed_over_said_;  // Ended pods named at -v.
  std::string name_rv_;          // The name lookup's version, for a late watch.
  bool finder_matched_ = false;  // It showed a pod with HOST's hostname.
  bool last_resort_ = false;     // The LIST in flight is that.
  bool last_resort_listed_ = false;  // Once per host.

  // Following the pod.
  std::unique_ptr<kube::PodWatcher> watcher_;
  std::optional<kube::Pod> direct_pod_;       // Snapshot when not watching.
  std::string watch_from_rv_;                 // The lookup list's version.
  TimePoint watch_after_ = TimePoint::max();  // See probe_watch_after.
  bool running_traced_ = false;
  PodStatusTrace pod_status_trace_;
  bool said_unschedulable_ = false;
  // When the followed pod went (deleted, or ended in a terminal phase; set
  // while its controller may still replace it): replacement_grace runs
  // from here.
  TimePoint gone_at_ = TimePoint::max();
  std::string ended_how_;  // "Failed: Error; container ...", "" if deleted.
  std::string last_controller_;  // Of the latest snapshot seen.
  std::string last_uid_;
  // HOST named a spec.hostname: after a deletion or a terminal phase,
  // resolve it again (a Job's replacement pod has a new name), skipping the
  // old uid.
  bool by_hostname_ = false;
  bool reresolving_ = false;
  std::string gone_uid_;
  Backoff reresolve_backoff_;

  // Probing SSH.
  SshProbe probe_;
  bool probed_ = false;  // A target was set: a later change is news.
  // Since when a container's fatal wait waits on the probe's answer.
  TimePoint fatal_since_ = TimePoint::max();
  std::string fatal_note_;  // "container sidecar is waiting: ...".

  WaitNarrator narrator_;
};

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_AGENT_HOST_WAITER_H_
