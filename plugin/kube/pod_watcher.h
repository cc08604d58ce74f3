// SPDX-License-Identifier: Apache-2.0
// Follows one pod by name, or every pod matching a label selector: watch
// from a resourceVersion with client-go's reflector rules (resume, relist
// on 410, back off on errors).

#ifndef K8S_AGENT_PLUGIN_KUBE_POD_WATCHER_H_
#define K8S_AGENT_PLUGIN_KUBE_POD_WATCHER_H_

#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "plugin/base/event_loop.h"
#include "plugin/kube/api_health.h"
#include "plugin/kube/api_retry.h"
#include "plugin/kube/kube_client.h"

namespace k8s_agent::kube {

/// Keeps the latest snapshot of one named pod (or of the set of pods
/// matching a label selector) current.
///
///   Start(rv) --> kWatching --stream ends ok--> kWatching (same rv)
///                   |  410/Expired --> kListing --> kWatching (list rv)
///                   |  429/5xx/refused/short empty watch --> kBackingOff
///                   |  403 (for a few seconds) --> kBackingOff
///                   |  401 (after one token reload), 403, TLS --> kFailed
///   kBackingOff --delay passes--> kWatching (same rv; no relist)
///                             or kListing after kRelistAfterFailedWatches
///                             broken watches in a row (refused, reset,
///                             5xx, idle; not 403/429), or an in-stream
///                             ERROR that is not 410 (the reflector relists
///                             after any watch error: the pod may have
///                             changed in events the broken watches lost)
///   kWatching with no event (not even a BOOKMARK) for watch_idle_timeout:
///                             the server is presumed stopped; a failed
///                             watch (close, back off, re-watch)
///
/// The decisions are ApiRetryPolicy's (api_retry.h). Name-mode lists ask
/// for resourceVersion=0 (the watch cache), so a 410 costs the server no
/// quorum read; only a 410 right after such a list lists from etcd.
///
/// The consumer reads state (pod()), never individual events: after any
/// change `on_change` runs, outside libcurl callbacks.
class PodWatcher : public Pollable {
 public:
  enum class State { kIdle, kListing, kWatching, kBackingOff, kFailed };

  /// Selector mode: follow every pod matching `label_selector` (empty:
  /// every pod in the namespace); read them from pods().
  struct Selector {
    std::string label_selector;
  };

  /// Name mode: follow the pod called `name`; read it from pod().
  PodWatcher(KubeClient* client, Clock* clock, std::string ns, std::string name,
             std::function<void()> on_change, uint64_t seed);
  PodWatcher(KubeClient* client, Clock* clock, std::string ns,
             Selector selector, std::function<void()> on_change, uint64_t seed);

  /// Begins watching from `resource_version` with `initial` as the current
  /// snapshot (nullopt: the pod does not exist yet). An empty rv lists first.
  /// Selector mode takes no snapshot: pass nullopt and an empty rv.
  void Start(std::optional<Pod> initial, const std::string& resource_version,
             TimePoint now);
  /// Stop after the first complete list instead of watching (state() goes
  /// kIdle, synced() true): a one-shot read with the same error handling.
  /// Call before Start().
  void set_list_only(bool list_only) { list_only_ = list_only; }
  /// Cancels any call in flight; the watcher goes idle.
  void Stop();

  State state() const { return state_; }
  /// The latest snapshot; nullopt while the pod does not exist (or after
  /// DELETED until a new pod of that name is ADDED).
  const std::optional<Pod>& pod() const { return pod_; }
  /// Selector mode: the matching pods by name. Empty until synced().
  const std::map<std::string, Pod>& pods() const { return pods_; }
  /// A complete list has been received (or a watch from a given rv began):
  /// the snapshot reflects the server. Selector mode calls `on_change` on
  /// the first sync even when the snapshot is empty.
  bool synced() const { return synced_; }
  /// Set when the pod was seen and then deleted.
  bool deleted() const { return deleted_; }
  /// kFailed only: why watching cannot continue.
  const Status& error() const { return error_; }
  /// Failed lists/watches since the last good answer: while troubled,
  /// pod() may be stale and the API server, not the pod, is to blame.
  const ApiHealth& api_health() const { return api_health_; }
  /// Counts for progress messages and tests.
  int watches_started() const { return watches_started_; }
  /// When the server first answered a watch of this Start() with 200
  /// (max until then): from here silence means no matching pod, not a
  /// request still queued or refused by API priority and fairness.
  TimePoint first_open_at() const { return first_open_at_; }
  int lists_started() const { return lists_started_; }

  // Pollable: only timers (backoff); I/O belongs to the transport.
  void CollectFds(std::vector<pollfd>*) override {}
  TimePoint NextWake() const override;
  void OnFdReady(int, short, TimePoint) override {}
  void OnTimer(TimePoint now) override;

  /// The server-side watch timeout is drawn from [T, 2T) so that many
  /// agents do not reconnect in lockstep (client-go's minWatchTimeout).
  /// Tests shorten it.
  void set_min_watch_timeout(Duration t) { min_watch_timeout_ = t; }

  /// A real kube-apiserver sends a BOOKMARK about once a minute on every
  /// watch that asked for them, so 90 s without any event means a stopped
  /// server or a dead path: not the minutes of timeoutSeconds plus slack.
  /// Tests shorten it (--watch-idle-timeout).
  static constexpr Duration kDefaultWatchIdleTimeout = std::chrono::seconds(90);
  void set_watch_idle_timeout(Duration t) { watch_idle_timeout_ = t; }

  /// Broken watches in a row after which the next attempt lists instead.
  static constexpr int kRelistAfterFailedWatches = 3;

 private:
  void StartList(TimePoint now);
  void StartWatch(TimePoint now);
  // Lists when the resourceVersion is gone, else watches from it.
  void Resume(TimePoint now);
  void OnList(StatusOr<PodList> list);
  void OnWatchEvent(const WatchEvent& event);
  void OnWatchEnd(const Status& status);
  // No event for watch_idle_timeout_: close the watch as failed.
  void OnWatchIdle(TimePoint now);
  // After a failed watch: whether the retry must list (see the diagram).
  // `in_stream`: the failure arrived as an in-stream ERROR event.
  bool ShouldRelistAfterWatchFailure(bool in_stream);
  // The single decision point after any failed list or watch. It may end
  // in on_change_, which may destroy this watcher: callers return at once.
  void HandleError(const Status& why, TimePoint now, bool in_stream = false);
  void BackOff(const Status& why, Duration delay, TimePoint now);
  void Fail(const Status& why);
  // Runs on_change_ as the caller's last act (the callback may destroy us).
  void Notify();
  // Replaces the snapshot; returns true when it changed.
  bool SetPod(std::optional<Pod> pod);
  // Selector mode: the list-result and watch-event counterparts of SetPod.
  bool SetPods(std::vector<Pod> items);
  bool ApplyToSet(const WatchEvent& event);
  bool selector_mode() const { return selector_.has_value(); }
  // "pod ns/name" or "pods in ns matching role=worker", for messages.
  std::string Describe() const;

  KubeClient* client_;
  Clock* clock_;
  std::string ns_;
  std::string name_;                  // Name mode.
  std::optional<Selector> selector_;  // Selector mode.
  std::function<void()> on_change_;
  uint64_t seed_;
  ApiRetryPolicy retry_;
  std::mt19937_64 rng_;
  Duration min_watch_timeout_ = std::chrono::minutes(5);
  Duration watch_idle_timeout_ = kDefaultWatchIdleTimeout;
  State state_ = State::kIdle;
  std::optional<Pod> pod_;
  std::map<std::string, Pod> pods_;
  std::vector<Pod> list_pages_;  // Selector mode: pages of a list so far.
  std::string list_continue_;    // The next page's continue token.
  bool list_only_ = false;
  bool synced_ = false;
  bool deleted_ = false;
  Status error_;
  ApiHealth api_health_;
  std::string resource_version_;
  TimePoint watch_started_{};
  TimePoint last_event_at_{};  // Of the open watch: for the idle limit.
  int events_in_watch_ = 0;
  // Watches that failed since the last list or clean watch end.
  int failed_watches_ = 0;
  // Set by a successful list, cleared by any watch event: a 410 on a watch
  // from a fresh list RV must not relist at once (that could loop).
  bool fresh_from_list_ = false;
  // The next list must be a quorum read: a cached list's RV was refused.
  bool consistent_list_ = false;
  TimePoint retry_at_ = TimePoint::max();
  TimePoint first_open_at_ = TimePoint::max();
  int watches_started_ = 0;
  int lists_started_ = 0;
  ApiCall call_;
};

}  // namespace k8s_agent::kube

#endif  // K8S_AGENT_PLUGIN_KUBE_POD_WATCHER_H_
