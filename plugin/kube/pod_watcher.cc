// SPDX-License-Identifier: Apache-2.0
// PodWatcher: client-go's reflector rules for one pod or a selected set,
// driven by timers.

#include "plugin/kube/pod_watcher.h"

#include <algorithm>
#include <utility>

#include "plugin/base/log.h"
#include "plugin/base/strings.h"

namespace k8s_agent::kube {
namespace {

// client-go's VeryShortWatchError: a watch that closes this fast without
// a single event means a broken proxy or server; reconnecting at once
// would become a tight loop.
constexpr Duration kVeryShortWatch = seconds(1);

bool SamePod(const Pod& a, const Pod& b) {
  return a.uid == b.uid && a.resource_version == b.resource_version;
}

}  // namespace

PodWatcher::PodWatcher(KubeClient* client, Clock* clock, std::string ns,
                       std::string name, std::function<void()> on_change,
                       uint64_t seed)
    : client_(client),
      clock_(clock),
      ns_(std::move(ns)),
      name_(std::move(name)),
      on_change_(std::move(on_change)),
      seed_(seed),
      retry_(seed),
      rng_(seed ^ 0x9e3779b97f4a7c15ULL) {}

PodWatcher::PodWatcher(KubeClient* client, Clock* clock, std::string ns,
                       Selector selector, std::function<void()> on_change,
                       uint64_t seed)
    : PodWatcher(client, clock, std::move(ns), std::string(),
                 std::move(on_change), seed) {
  selector_ = std::move(selector);
}

std::string PodWatcher::Describe() const {
  if (!selector_mode()) return "pod " + ns_ + "/" + name_;
  if (selector_->label_selector.empty()) return "pods in " + ns_;
  return "pods in " + ns_ + " matching " + selector_->label_selector;
}

void PodWatcher::Start(std::optional<Pod> initial,
                       const std::string& resource_version, TimePoint now) {
  Stop();
  pod_ = std::move(initial);
  pods_.clear();
  list_pages_.clear();
  list_continue_.clear();
  synced_ = !resource_version.empty();
  deleted_ = false;
  error_ = OkStatus();
  retry_ = ApiRetryPolicy(seed_);
  fresh_from_list_ = false;
  consistent_list_ = false;
  failed_watches_ = 0;
  first_open_at_ = TimePoint::max();
  resource_version_ = resource_version;
  if (resource_version_.empty()) {
    StartList(now);
  } else {
    StartWatch(now);
  }
}

void PodWatcher::Stop() {
  call_.reset();
  state_ = State::kIdle;
  retry_at_ = TimePoint::max();
}

TimePoint PodWatcher::NextWake() const {
  if (state_ == State::kWatching && watch_idle_timeout_ > Duration::zero()) {
    return last_event_at_ + watch_idle_timeout_;
  }
  return state_ == State::kBackingOff ? retry_at_ : TimePoint::max();
}

void PodWatcher::OnTimer(TimePoint now) {
  if (state_ == State::kWatching && watch_idle_timeout_ > Duration::zero() &&
      now >= last_event_at_ + watch_idle_timeout_) {
    OnWatchIdle(now);
    return;
  }
  if (state_ != State::kBackingOff || now < retry_at_) return;
  retry_at_ = TimePoint::max();
  Resume(now);
}

void PodWatcher::Resume(TimePoint now) {
  // Same resourceVersion as before the error unless HandleError dropped it
  // (410, or repeated watch failures).
  if (resource_version_.empty()) {
    StartList(now);
  } else {
    StartWatch(now);
  }
}

void PodWatcher::StartList(TimePoint) {
  state_ = State::kListing;
  ++lists_started_;
  ListOptions options;
  if (selector_mode()) {
    options.label_selector = selector_->label_selector;
    options.limit = kListPageSize;
    options.continue_token = list_continue_;
  } else {
    options.field_selector = "metadata.name=" + name_;
    // One pod, many agents: resourceVersion=0 lets the watch cache answer
    // (with the cache's current version, which a watch then accepts)
    // instead of a quorum read that makes etcd scan the namespace per
    // host. If a watch from such a list still gets 410, the next list is
    // a quorum read, as client-go's reflector falls back.
    if (!consistent_list_) options.resource_version = "0";
  }
  call_ = client_->ListPods(ns_, options, [this](StatusOr<PodList> list) {
    OnList(std::move(list));
  });
}

void PodWatcher::StartWatch(TimePoint now) {
  state_ = State::kWatching;
  ++watches_started_;
  events_in_watch_ = 0;
  watch_started_ = now;
  last_event_at_ = now;
  auto min_s = std::max<int64_t>(
      1, std::chrono::duration_cast<seconds>(min_watch_timeout_).count());
  std::uniform_int_distribution<int64_t> dist(min_s, 2 * min_s - 1);
  WatchOptions options;
  if (selector_mode()) {
    options.label_selector = selector_->label_selector;
  } else {
    options.field_selector = "metadata.name=" + name_;
  }
  options.resource_version = resource_version_;
  options.allow_bookmarks = true;
  options.timeout_seconds = static_cast<int>(dist(rng_));
  // Bookmarks come about once a minute, so silence is trusted only after
  // the idle limit; on HTTP/2 a PING at a third of it, answered within a
  // sixth, finds a stopped server in half the time (the default 90 s gives
  // client-go's 30 s and 15 s) at no cost to the API server.
  options.ping_after = watch_idle_timeout_ / 3;
  options.ping_timeout = watch_idle_timeout_ / 6;
  options.on_open = [this] {
    if (first_open_at_ == TimePoint::max()) first_open_at_ = clock_->Now();
  };
  call_ = client_->WatchPods(
      ns_, options, [this](const WatchEvent& event) { OnWatchEvent(event); },
      [this](const Status& status) { OnWatchEnd(status); });
}

bool PodWatcher::SetPod(std::optional<Pod> pod) {
  bool changed = pod.has_value() != pod_.has_value() ||
                 (pod && (pod->uid != pod_->uid ||
                          pod->resource_version != pod_->resource_version));
  pod_ = std::move(pod);
  return changed;
}

bool PodWatcher::SetPods(std::vector<Pod> items) {
  std::map<std::string, Pod> pods;
  for (Pod& pod : items) {
    std::string name = pod.name;
    pods[name] = std::move(pod);
  }
  bool changed = pods.size() != pods_.size();
  for (auto it = pods.begin(); !changed && it != pods.end(); ++it) {
    auto old = pods_.find(it->first);
    changed = old == pods_.end() || !SamePod(old->second, it->second);
  }
  pods_ = std::move(pods);
  return changed;
}

bool PodWatcher::ApplyToSet(const WatchEvent& event) {
  if (event.pod.name.empty()) return false;
  auto it = pods_.find(event.pod.name);
  if (event.type == WatchEvent::Type::kDeleted) {
    if (it == pods_.end()) return false;
    pods_.erase(it);
    return true;
  }
  if (it != pods_.end() && SamePod(it->second, event.pod)) return false;
  pods_[event.pod.name] = event.pod;
  return true;
}

void PodWatcher::OnList(StatusOr<PodList> list) {
  call_.reset();
  TimePoint now = clock_->Now();
  if (!list.ok()) {
    list_pages_.clear();  // A retry starts over: continue tokens expire.
    list_continue_.clear();
    HandleError(list.status(), now);
    return;
  }
  retry_.OnSuccess();
  api_health_.Answered();
  failed_watches_ = 0;
  if (selector_mode()) {
    for (Pod& pod : list->items) list_pages_.push_back(std::move(pod));
    list_continue_ = list->continue_token;
    if (!list_continue_.empty()) {
      StartList(now);  // Next page of the same consistent snapshot.
      return;
    }
  }
  fresh_from_list_ = true;
  consistent_list_ = false;
  resource_version_ = list->resource_version;
  bool first_sync = !synced_;
  synced_ = true;
  if (selector_mode()) {
    bool changed = SetPods(std::move(list_pages_));
    list_pages_.clear();
    if (list_only_) {
      state_ = State::kIdle;
    } else {
      StartWatch(now);
    }
    if (changed || first_sync || list_only_) Notify();
    return;
  }
  std::optional<Pod> found;
  for (Pod& pod : list->items) {
    if (pod.name == name_) found = std::move(pod);
  }
  if (!found && pod_) deleted_ = true;  // Deleted while we could not watch.
  if (found) deleted_ = false;
  bool changed = SetPod(std::move(found));
  if (list_only_) {
    state_ = State::kIdle;
  } else {
    StartWatch(now);
  }
  if (changed || list_only_) Notify();
}

void PodWatcher::OnWatchEvent(const WatchEvent& event) {
  last_event_at_ = clock_->Now();
  // A bookmark that repeats the resourceVersion we hold is no progress: a
  // server (or proxy) answering every watch with one and closing must hit
  // the very-short-watch backoff, not a tight re-watch loop.
  if (event.type != WatchEvent::Type::kBookmark ||
      event.pod.resource_version != resource_version_) {
    ++events_in_watch_;
  }
  if (event.type == WatchEvent::Type::kError) {
    // Same classification as an HTTP status (rule 4): 410 relists.
    call_.reset();
    HandleError(event.error, clock_->Now(), /*in_stream=*/true);
    return;
  }
  retry_.OnSuccess();  // The credentials and RBAC work.
  fresh_from_list_ = false;
  api_health_.Answered();
  bool changed = false;
  switch (event.type) {
    case WatchEvent::Type::kError:
      return;  // Handled above.
    case WatchEvent::Type::kBookmark:
      // Bookmarks only move the resourceVersion; the snapshot is unchanged.
      if (!event.pod.resource_version.empty()) {
        resource_version_ = event.pod.resource_version;
      }
      return;
    case WatchEvent::Type::kAdded:
    case WatchEvent::Type::kModified:
      if (!event.pod.resource_version.empty()) {
        resource_version_ = event.pod.resource_version;
      }
      if (selector_mode()) {
        changed = ApplyToSet(event);
        break;
      }
      if (!event.pod.name.empty() && event.pod.name != name_) return;
      deleted_ = false;  // Also a replacement pod with a new uid.
      changed = SetPod(event.pod);
      break;
    case WatchEvent::Type::kDeleted:
      if (!event.pod.resource_version.empty()) {
        resource_version_ = event.pod.resource_version;
      }
      if (selector_mode()) {
        changed = ApplyToSet(event);
        break;
      }
      if (!event.pod.name.empty() && event.pod.name != name_) return;
      deleted_ = true;
      changed = SetPod(std::nullopt);
      break;
  }
  if (changed) Notify();
}

void PodWatcher::OnWatchEnd(const Status& status) {
  call_.reset();
  TimePoint now = clock_->Now();
  if (!status.ok()) {
    HandleError(status, now);
    return;
  }
  Duration lasted = now - watch_started_;
  if (events_in_watch_ == 0 && lasted < kVeryShortWatch) {
    HandleError(UnavailableError("watch of " + Describe() + " ended after " +
                                 FormatDuration(lasted) + " with no events"),
                now);
    return;
  }
  // The server's timeoutSeconds passed: resume where we were (rule 1).
  api_health_.Answered();
  failed_watches_ = 0;
  StartWatch(now);
}

void PodWatcher::OnWatchIdle(TimePoint now) {
  // A SIGSTOPped server (or a silently dead path) keeps the connection
  // open and sends nothing: TCP keepalive never fires while the kernel
  // still answers. Bookmarks make silence itself the signal.
  std::string idle = FormatDuration(now - last_event_at_);
  LogInfo(Describe() + ": watch idle for " + idle + ": reconnecting");
  call_.reset();
  HandleError(UnavailableError("watch of " + Describe() + " idle for " + idle +
                               " (no event or bookmark; the API server may "
                               "be stopped or unreachable)"),
              now);
}

bool PodWatcher::ShouldRelistAfterWatchFailure(bool in_stream) {
  ++failed_watches_;
  if (!in_stream && failed_watches_ < kRelistAfterFailedWatches) {
    return false;
  }
  failed_watches_ = 0;
  return true;
}

void PodWatcher::HandleError(const Status& why, TimePoint now, bool in_stream) {
  ApiDecision d =
      retry_.Decide(why, now, state_ == State::kListing || fresh_from_list_);
  switch (d.action) {
    case ApiAction::kRelist:
      resource_version_.clear();
      consistent_list_ = d.consistent_list;
      if (d.delay > Duration::zero()) {
        // Expired right after a list: relisting at once could loop against
        // a confused server, so wait; the retry lists (the RV is empty).
        BackOff(d.status, d.delay, now);
        return;
      }
      LogDebug(Describe() + ": " + why.message() + "; relisting");
      StartList(now);
      return;
    case ApiAction::kReloadToken:
      client_->InvalidateToken();
      Resume(now);
      return;
    case ApiAction::kRetry:
      // Only a broken watch counts: 403 (RBAC warming up) and 429 (load
      // shedding, where a LIST costs the server more) re-watch.
      if (state_ == State::kWatching && why.code() == Code::kUnavailable &&
          ShouldRelistAfterWatchFailure(in_stream)) {
        // Events the failed watches lost are gone for good: a fresh list
        // gives the current state and a version to watch from.
        LogDebug(Describe() + ": watch failed again (" + why.message() +
                 "); relisting after the backoff");
        resource_version_.clear();
      }
      BackOff(d.status, d.delay, now);
      return;
    case ApiAction::kFail:
      Fail(d.status);
      return;
  }
}

void PodWatcher::BackOff(const Status& why, Duration delay, TimePoint now) {
  // A 403 retried while RBAC catches up is unusual enough to say at -v;
  // routine reconnects only at -vv. (A malformed answer never gets here:
  // the policy fails it at once.)
  bool news = why.code() == Code::kPermissionDenied;
  Log(news ? LogLevel::kInfo : LogLevel::kDebug,
      Describe() + ": " + why.ToString() + "; retrying in " +
          FormatDuration(delay));
  api_health_.Failed(why, now);
  state_ = State::kBackingOff;
  retry_at_ = now + delay;
}

void PodWatcher::Fail(const Status& why) {
  call_.reset();
  state_ = State::kFailed;
  error_ = why;
  retry_at_ = TimePoint::max();
  Notify();
}

void PodWatcher::Notify() {
  // The owner may destroy this watcher from on_change_ (kube_client.h's
  // rule): run it from a copy, and touch nothing after.
  std::function<void()> on_change = on_change_;
  if (on_change) on_change();
}

}  // namespace k8s_agent::kube
