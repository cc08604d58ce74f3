// SPDX-License-Identifier: Apache-2.0
// Which pod HOST is, now and after that pod went: the lookup and list
// calls, the Job-label finder, the hostname/IP match and the one policy for
// waiting on a replacement. It decides; the waiter follows the pod.

#ifndef K8S_AGENT_PLUGIN_AGENT_POD_RESOLVER_H_
#define K8S_AGENT_PLUGIN_AGENT_POD_RESOLVER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "plugin/agent/host_name.h"
#include "plugin/agent/pod_replacement.h"
#include "plugin/agent/pod_target.h"
#include "plugin/agent/trace.h"
#include "plugin/agent/wait_policy.h"
#include "plugin/base/backoff.h"
#include "plugin/base/clock.h"
#include "plugin/kube/api_health.h"
#include "plugin/kube/api_retry.h"
#include "plugin/kube/kube_client.h"
#include "plugin/kube/pod_watcher.h"

namespace k8s_agent {

/// Resolves HOST to the pod to follow.
///
///   Start --LIST name=HOST (watch cache) finds it--> kNamed
///     | none, HOST fits a Job's hostname grammar: WATCH the pods labelled
///     |   for it (rv 0) --> kFinding; once that watch has answered
///     |   without a match for name_watch_after: the owner watches the name
///     |   too (TakeNameWatch, a StatefulSet's late pod) and one namespace
///     |   LIST looks for spec.hostname (a pod without the labels:
///     |   hand-written, a Job before 1.28) --found--> kNamed
///     | none, any other HOST (or an IP): LIST the namespace (paged),
///     |   match spec.hostname / IP (PickTarget) --> kNamed (the match, or
///     |   nullopt: wait for a pod of that name); only a terminating pod
///     |   has the hostname: list again after a backoff (a Job's
///     |   replacement comes beside it) until a live one shows
///   any lookup error: ApiRetryPolicy (retry, reload the token, fail)
///
/// kNamed hands the owner a Target once (TakeTarget): the owner follows
/// that pod by name. kFinding: the labelled watch is the source; Pick()
/// says which of its pods to follow, if any.
///
/// A pod that went is judged by one policy for every source
/// (PodReplacement: fail at once without a controller, else wait
/// replacement_grace, then kFailed). Where the replacement is looked for
/// is the resolver's: a pod found by spec.hostname is looked up again
/// meanwhile (kLooking: a Job's replacement has a new name); one found by
/// name or on the labelled watch is awaited on the owner's name watch or
/// on the labelled watch.
///
/// It never calls the owner's methods: it changes state, and an answer
/// from the API server (a lookup, the labelled watch) runs `on_change` as
/// its last act, after which the owner reads state() (as PodWatcher's
/// consumers do). The owner's own calls (Departed, Pick, ...) only leave
/// the state to read; OnTimer may run `on_change` only through the
/// labelled watch's timers, as the loop would.
class PodResolver {
 public:
  enum class State { kLooking, kNamed, kFinding, kFailed };

  /// Where to follow pod_name() from: its snapshot (nullopt: not created
  /// yet) and the list's resourceVersion.
  struct Target {
    std::optional<kube::Pod> pod;
    std::string rv;
  };

  PodResolver(HostName host, const WaitPolicy& policy, kube::KubeClient* client,
              Clock* clock, Tracer* tracer, std::function<void()> on_change,
              uint64_t seed);
  ~PodResolver();

  void Start(TimePoint now);
  /// Cancels the calls and the labelled watch: the host is ready or failed.
  void Stop();

  State state() const { return state_; }
  /// kFailed: why, with the stage and what to do.
  const Status& status() const { return status_; }
  /// The pod HOST resolved to (HOST's name until known; empty for an IP).
  const std::string& pod_name() const { return pod_name_; }
  /// "pod ns/name".
  std::string PodRef() const;

  /// kNamed: once per resolution, the pod to follow by name.
  std::optional<Target> TakeTarget();
  /// kFinding: the live pod of the labelled watch to follow, or nullopt
  /// (then note() says what is awaited, or state() is kFailed).
  std::optional<kube::Pod> Pick(TimePoint now);
  /// kFinding: once, when HOST should be watched by name too: the
  /// resourceVersion to watch from (the name lookup's).
  std::optional<std::string> TakeNameWatch(TimePoint now);
  /// A pod named HOST (`named`) appeared on the owner's name watch: the
  /// owner follows that by name; the labelled watch ends.
  void StopFinding(const kube::Pod& named);

  /// The followed pod's latest snapshot: its controller and uid are what
  /// the replacement policy decides by; a replacement ends the wait.
  void Saw(const kube::Pod& pod);
  /// Whether a terminal `pod` (followed by name) is a departure to wait
  /// out rather than the end: a controlled pod found by spec.hostname (an
  /// Indexed Job keeps the Failed pod and retries the index in a new one).
  bool ReplacesEnded(const kube::Pod& pod) const;
  /// Whether a `pod` being deleted (followed by name) is a departure now,
  /// not once it is gone: a controlled pod found by spec.hostname, whose
  /// replacement (a Job's) may come while it still terminates. A pod
  /// being deleted is never launched on; its replacement is looked for.
  bool ReplacedWhileTerminating(const kube::Pod& pod) const;
  /// The followed pod went: `last` its final snapshot (terminal, or being
  /// deleted), nullptr when it was deleted. Decides by the replacement
  /// policy: kFailed, kLooking (looking again), or waiting (note()).
  void Departed(const kube::Pod* last, TimePoint now);
  /// While no pod is followed: what is awaited ("not created yet",
  /// "deleted; waiting for StatefulSet/w to replace it").
  const std::string& note() const { return note_; }
  /// kFinding: no pod of HOST's has shown on the labelled watch.
  bool missing() const { return missing_; }

  /// A lookup came back (before that nothing is known of the pod).
  bool answered() const { return answered_; }
  /// The namespace-wide lookup found no pod at all.
  bool namespace_empty() const { return namespace_empty_; }
  /// The labels watched for HOST while kFinding, else "".
  std::string finder_selector() const;
  /// The tracker with failures among the lookup's, the labelled watch's
  /// and `also` (the owner's watch), the longest troubled; or nullptr.
  const kube::ApiHealth* TroubledApi(const kube::ApiHealth* also) const;

  TimePoint NextWake() const;
  /// Runs what is due: a retried or re-resolving lookup, the labelled
  /// watch's timers, the namespace LIST, the end of replacement_grace.
  /// True when it acted (a call started, or the state changed).
  bool OnTimer(TimePoint now);

 private:
  void Lookup();
  void List();
  bool Answered(const Status& status, TimePoint now);
  void RetryApi(const Status& why, TimePoint now);
  void OnLookupDone(StatusOr<kube::PodList> list);
  void OnListDone(StatusOr<kube::PodList> list);
  // The listed pods' verdict (kNamed, kFailed, or waiting to look again).
  void Decide(const TargetPick& pick, const std::string& rv, TimePoint now);
  void OnLastResortListed(const TargetPick& pick, const std::string& rv);
  // kNamed: follow `target` (found by spec.hostname or IP) from `rv`.
  void Name(const kube::Pod& target,
            const std::vector<const kube::Pod*>& passed_over,
            const std::string& rv);
  void StartFinder(std::string selector, const std::string& name_rv,
                   TimePoint now);
  // When the name watch and the namespace LIST are due (the same time):
  // counted from when the labelled watch was first answered.
  TimePoint NameWatchDue() const;
  TimePoint LastResortDue() const;
  // No labelled pod showed: one namespace-wide LIST for spec.hostname.
  void ListAsLastResort(TimePoint now);
  // The followed pod went (PodReplacement decides): false when the host
  // failed.
  bool AwaitReplacement(const kube::Pod* last, TimePoint now);
  // Look HOST up again for the replacement: at once (the followed pod
  // went; its uid is skipped from then on) or after a backoff (a list just
  // found none).
  void Reresolve(bool at_once, TimePoint now);
  void Fail(const Status& why);
  void Notify();
  Status SeveralPodsMatch(const std::vector<const kube::Pod*>& live) const;
  Status NoPodHasIp() const;
  Status NoLivePodHasIp(const std::vector<const kube::Pod*>& ended) const;

  HostName host_;
  WaitPolicy policy_;
  kube::KubeClient* client_;
  Clock* clock_;
  Tracer* tracer_;
  std::function<void()> on_change_;
  uint64_t seed_;

  State state_ = State::kLooking;
  Status status_;
  std::string pod_name_;
  std::optional<Target> target_;
  std::string note_;

  // The lookup and list calls.
  kube::ApiCall call_;
  kube::ApiRetryPolicy api_retry_;
  kube::ApiHealth api_health_;  // The labelled watch keeps its own.
  TimePoint api_retry_at_ = TimePoint::max();
  bool listing_ = false;  // The call (or its retry) is the namespace LIST.
  kube::PodList listed_;  // Pages accumulated so far.
  bool answered_ = false;
  bool namespace_empty_ = false;
  bool by_hostname_ = false;  // kNamed by spec.hostname: look again if gone.

  // The labelled watch for a Job's hostname.
  std::unique_ptr<kube::PodWatcher> finder_;
  std::string finder_selector_;
  std::string found_name_;                  // Its live pod used last.
  std::set<std::string> passed_over_said_;  // Ended pods named at -v.
  std::string name_rv_;   // The name lookup's version, for the name watch.
  bool matched_ = false;  // The labelled watch showed a pod of HOST's.
  bool missing_ = false;
  bool name_watch_taken_ = false;
  bool last_resort_ = false;         // The LIST in flight is that one.
  bool last_resort_listed_ = false;  // Once per host.

  // After the followed pod went.
  PodReplacement replacement_;
  bool relisting_ = false;  // Looking HOST up again for the replacement.
  std::string gone_uid_;
  Backoff reresolve_backoff_;
};

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_AGENT_POD_RESOLVER_H_
