// SPDX-License-Identifier: Apache-2.0
// PodResolver: HOST to a pod by name, by a Job's labels, by spec.hostname
// or IP, and again after that pod went; see the diagram in pod_resolver.h.

#include "plugin/agent/pod_resolver.h"

#include <utility>

#include "plugin/agent/hostname_labels.h"
#include "plugin/base/log.h"
#include "plugin/base/strings.h"

namespace k8s_agent {
namespace {

// Looking for a Job's replacement pod: a Job recreates a pod within
// seconds, so a 5 s cap notices it soon and costs at most ~8 lists within
// the default 30 s replacement_grace.
Backoff::Params ReresolveBackoff() {
  return {std::chrono::milliseconds(500), std::chrono::seconds(5),
          std::chrono::minutes(2)};
}

std::string Quote(const std::string& s) { return "\"" + Printable(s) + "\""; }

}  // namespace

PodResolver::PodResolver(HostName host, const WaitPolicy& policy,
                         kube::KubeClient* client, Clock* clock, Tracer* tracer,
                         std::function<void()> on_change, uint64_t seed)
    : host_(std::move(host)),
      policy_(policy),
      client_(client),
      clock_(clock),
      tracer_(tracer),
      on_change_(std::move(on_change)),
      seed_(seed),
      api_retry_(seed),
      replacement_(host_, policy),
      reresolve_backoff_(ReresolveBackoff(), seed + 3) {
  if (host_.kind == HostName::Kind::kPodName) pod_name_ = host_.pod_name;
}

PodResolver::~PodResolver() = default;

void PodResolver::Start(TimePoint now) {
  (void)now;
  if (host_.kind == HostName::Kind::kIp) {
    List();
  } else {
    Lookup();
  }
}

void PodResolver::Stop() {
  // Also from inside a call's or the finder's own callback (kube_client.h's
  // rule allows destroying it there).
  call_.reset();
  finder_.reset();
  api_retry_at_ = TimePoint::max();
  replacement_.Stop();
}

std::string PodResolver::PodRef() const {
  return "pod " + policy_.ns + "/" +
         (pod_name_.empty() ? host_.original : pod_name_);
}

std::optional<PodResolver::Target> PodResolver::TakeTarget() {
  std::optional<Target> t = std::move(target_);
  target_.reset();
  return t;
}

std::string PodResolver::finder_selector() const {
  return finder_ ? finder_selector_ : "";
}

const kube::ApiHealth* PodResolver::TroubledApi(
    const kube::ApiHealth* also) const {
  return kube::ApiHealth::Worst(kube::ApiHealth::Worst(&api_health_, also),
                                finder_ ? &finder_->api_health() : nullptr);
}

void PodResolver::Fail(const Status& why) {
  if (state_ == State::kFailed) return;
  state_ = State::kFailed;
  status_ = why;
  target_.reset();
  Stop();
}

void PodResolver::Notify() {
  // The owner may stop us from here: nothing runs after it.
  if (on_change_) on_change_();
}

// ---- The lookup and list calls --------------------------------------------

void PodResolver::Lookup() {
  call_.reset();
  // A field-selected LIST from the watch cache (resourceVersion=0) rather
  // than a GET: it answers with the cache's current version, from which a
  // watch is accepted. A GET's version is the pod's own last change, which
  // the cache (about 75 s of history, empty after a restart) has often
  // forgotten: that watch would get 410 and cost a quorum LIST per host.
  kube::ListOptions options;
  options.field_selector = "metadata.name=" + pod_name_;
  options.resource_version = "0";
  call_ = client_->ListPods(
      policy_.ns, options,
      [this](StatusOr<kube::PodList> list) { OnLookupDone(std::move(list)); });
}

void PodResolver::List() {
  listing_ = true;
  kube::ListOptions options;
  options.label_selector = policy_.label_selector;
  options.limit = kube::kListPageSize;
  options.continue_token = listed_.continue_token;
  options.resource_version = "0";  // From the watch cache, as in Lookup().
  call_.reset();
  call_ = client_->ListPods(
      policy_.ns, options,
      [this](StatusOr<kube::PodList> list) { OnListDone(std::move(list)); });
}

void PodResolver::RetryApi(const Status& why, TimePoint now) {
  // Every lookup is a list: a 410 (expired continue token) backs off.
  kube::ApiDecision d = api_retry_.Decide(why, now, /*after_fresh_list=*/true);
  switch (d.action) {
    case kube::ApiAction::kFail:
      Fail(d.status.WithContext("looking up " + PodRef()));
      return;
    case kube::ApiAction::kReloadToken:
      client_->InvalidateToken();
      break;
    case kube::ApiAction::kRelist:
      listed_ = kube::PodList();  // A page's continue token expired.
      break;
    case kube::ApiAction::kRetry:
      break;
  }
  if (d.delay <= Duration::zero()) {
    // From the failed call's own callback: starting the next replaces (and
    // so destroys) it, which kube_client.h's rule allows.
    if (listing_) {
      List();
    } else {
      Lookup();
    }
    return;
  }
  LogInfo(host_.original + ": " + d.status.message() + "; retrying in " +
          FormatDuration(d.delay));
  api_health_.Failed(why, now);
  api_retry_at_ = now + d.delay;
}

bool PodResolver::Answered(const Status& status, TimePoint now) {
  answered_ = true;
  if (!status.ok()) {
    RetryApi(status, now);
    return false;
  }
  api_retry_.OnSuccess();
  api_health_.Answered();
  return true;
}

void PodResolver::OnLookupDone(StatusOr<kube::PodList> list) {
  TimePoint now = clock_->Now();
  if (!Answered(list.status(), now)) {
    Notify();
    return;
  }
  for (kube::Pod& pod : list->items) {
    if (pod.name != pod_name_) continue;
    tracer_->Record(host_.original, pod_name_, "resolved", "by name");
    std::string rv = list->resource_version.empty() ? pod.resource_version
                                                    : list->resource_version;
    state_ = State::kNamed;
    target_ = Target{std::move(pod), rv};
    Notify();
    return;
  }
  // Not created yet, or HOST is a hostname rather than a pod name
  // (Indexed Jobs, JobSet). A Job's hostname is found among the few pods
  // labelled for it; any other hostname costs a namespace-wide LIST.
  std::string selector = HostnameLabelSelector(host_, policy_.label_selector);
  if (!selector.empty()) {
    StartFinder(std::move(selector), list->resource_version, now);
    Notify();
    return;
  }
  LogDebug(host_.original + ": no pod is named " + pod_name_ +
           " and no controller's hostname grammar fits it; listing every "
           "pod in namespace " +
           policy_.ns + " for spec.hostname " + pod_name_);
  listed_ = kube::PodList();
  List();
}

void PodResolver::OnListDone(StatusOr<kube::PodList> list) {
  TimePoint now = clock_->Now();
  if (!Answered(list.status(), now)) {
    Notify();
    return;
  }
  for (kube::Pod& p : list->items) listed_.items.push_back(std::move(p));
  listed_.resource_version = list->resource_version;
  listed_.continue_token = list->continue_token;
  if (!listed_.continue_token.empty()) {
    List();
    return;
  }
  listing_ = false;
  kube::PodList all = std::move(listed_);
  listed_ = kube::PodList();
  namespace_empty_ = all.items.empty();
  TargetPick pick = PickTarget(host_, all.items, gone_uid_);
  if (last_resort_) {
    OnLastResortListed(pick, all.resource_version);
  } else {
    Decide(pick, all.resource_version, now);
  }
  Notify();
}

void PodResolver::Decide(const TargetPick& pick, const std::string& rv,
                         TimePoint now) {
  bool by_ip = host_.kind == HostName::Kind::kIp;
  if (pick.live.size() > 1) {
    Fail(SeveralPodsMatch(pick.live));
    return;
  }
  const kube::Pod* ended =
      pick.passed_over.empty() ? nullptr : pick.passed_over[0];
  const kube::Pod* target = pick.live.empty() ? nullptr : pick.live[0];
  if (!target && by_ip && ended) {
    Fail(NoLivePodHasIp(pick.passed_over));
    return;
  }
  if (!target && ended && !IsTerminal(*ended)) {
    if (by_ip) {
      // An IP is never replaced: follow the pod by name until it goes (its
      // DELETED or terminal phase is a departure, see Departed).
      target = ended;
    } else {
      // Being deleted: never the target. A Job makes the replacement while
      // it lives (podReplacementPolicy TerminatingOrFailed, the 1.34
      // default, as the Job controller always did), a StatefulSet only once
      // it is gone: look again until one shows. No grace runs meanwhile.
      if (!AwaitReplacement(ended, now)) return;
      Reresolve(/*at_once=*/false, now);
      return;
    }
  }
  if (!target && !ended && relisting_ && replacement_.terminating() &&
      !pick.skipped) {
    // The pod that was being deleted is gone now: its replacement gets
    // replacement_grace from here.
    if (!AwaitReplacement(nullptr, now)) return;
  }
  if (target) {
    Name(*target, pick.passed_over, rv);
    return;
  }
  if (by_ip) {
    Fail(NoPodHasIp());
    return;
  }
  if (ended && !relisting_) {
    // Only ended pods have HOST's hostname (a Job's Failed attempt).
    if (!AwaitReplacement(ended, now)) return;
    relisting_ = true;
  }
  if (relisting_) {
    // The controller has not created the replacement yet, and a watch by
    // the old name would never see it: look again after a backoff, within
    // replacement_grace (OnTimer fails the host when that passes).
    Reresolve(/*at_once=*/false, now);
    return;
  }
  // Not there yet: the owner waits for a pod of that name from here.
  state_ = State::kNamed;
  target_ = Target{std::nullopt, rv};
}

void PodResolver::Name(const kube::Pod& target,
                       const std::vector<const kube::Pod*>& passed_over,
                       const std::string& rv) {
  bool by_ip = host_.kind == HostName::Kind::kIp;
  bool old_named = false;
  for (const kube::Pod* p : passed_over) {
    if (p == &target) continue;
    old_named |= p->name == pod_name_;
    LogInfo(host_.original + ": using pod " + target.name +
            "; passing over pod " + p->name + ": " + PodSummary(*p));
  }
  if (relisting_ && !old_named && !pod_name_.empty() &&
      pod_name_ != target.name) {
    LogInfo(host_.original + ": using pod " + target.name +
            ", the replacement of pod " + pod_name_);
  }
  pod_name_ = target.name;
  by_hostname_ = !by_ip;
  relisting_ = false;
  tracer_->Record(host_.original, pod_name_, "resolved",
                  by_ip ? "by pod IP" : "by spec.hostname");
  state_ = State::kNamed;
  target_ = Target{target, rv};
}

// ---- A Job's hostname: the labelled watch ---------------------------------

void PodResolver::StartFinder(std::string selector, const std::string& name_rv,
                              TimePoint now) {
  state_ = State::kFinding;
  finder_selector_ = std::move(selector);
  name_rv_ = name_rv;
  LogDebug(host_.original + ": no pod is named " + host_.pod_name +
           "; watching the pods labelled " + finder_selector_);
  finder_ = std::make_unique<kube::PodWatcher>(
      client_, clock_, policy_.ns, kube::PodWatcher::Selector{finder_selector_},
      [this] { Notify(); }, seed_ + 4);
  finder_->set_watch_idle_timeout(policy_.watch_idle_timeout);
  // From "0": the watch cache first sends the pods it holds as ADDED, so
  // this one request is the lookup and the watch.
  finder_->Start(std::nullopt, "0", now);
}

std::optional<kube::Pod> PodResolver::Pick(TimePoint now) {
  if (state_ != State::kFinding || !finder_) return std::nullopt;
  if (finder_->state() == kube::PodWatcher::State::kFailed) {
    Fail(finder_->error().WithContext("watching the pods labelled " +
                                      finder_selector_));
    return std::nullopt;
  }
  std::vector<kube::Pod> pods;
  pods.reserve(finder_->pods().size());
  for (const auto& [name, pod] : finder_->pods()) pods.push_back(pod);
  TargetPick pick = PickTarget(host_, pods, "");
  if (pick.live.size() > 1) {
    Fail(SeveralPodsMatch(pick.live));
    return std::nullopt;
  }
  if (!pick.live.empty()) {
    const kube::Pod& pod = *pick.live[0];
    for (const kube::Pod* p : pick.passed_over) {
      // The watch cache's ADDED events come in name order, not by age.
      if (!passed_over_said_.insert(p->name).second) continue;
      LogInfo(host_.original + ": using pod " + pod.name +
              "; passing over pod " + p->name + ": " + PodSummary(*p));
    }
    matched_ = true;
    missing_ = false;
    if (pod.name != found_name_) {
      found_name_ = pod.name;
      pod_name_ = pod.name;
      tracer_->Record(host_.original, pod_name_, "resolved",
                      "by controller labels");
    }
    return pod;
  }
  const kube::Pod* ended =
      pick.passed_over.empty() ? nullptr : pick.passed_over[0];
  if (ended || !found_name_.empty()) {
    // HOST is a Job's hostname: no pod of that name is to come. Its retry
    // (or, after a deletion, the replacement) shows on this same watch.
    matched_ = true;
    missing_ = false;
    if (AwaitReplacement(ended, now)) {
      note_ = replacement_.Note(PodReplacement::Where::kLabelledWatch);
    }
    return std::nullopt;
  }
  missing_ = true;
  note_ = "not created yet";
  return std::nullopt;
}

std::optional<std::string> PodResolver::TakeNameWatch(TimePoint now) {
  if (now < NameWatchDue()) return std::nullopt;
  name_watch_taken_ = true;
  return name_rv_;
}

void PodResolver::StopFinding(const kube::Pod& named) {
  finder_.reset();
  pod_name_ = named.name;
  state_ = State::kNamed;
}

TimePoint PodResolver::NameWatchDue() const {
  // Counted from when the labelled watch was first answered, so a request
  // still queued or refused by API priority and fairness brings no second.
  if (state_ != State::kFinding || !finder_ || matched_ || name_watch_taken_ ||
      finder_->first_open_at() == TimePoint::max()) {
    return TimePoint::max();
  }
  return finder_->first_open_at() + policy_.name_watch_after;
}

TimePoint PodResolver::LastResortDue() const {
  // As soon as the labelled watch has answered with no pod: a hostname of
  // a Job's grammar on a pod without the labels (a hand-written pod, a Job
  // before 1.28) is otherwise found only later, or past a short --timeout.
  if (state_ != State::kFinding || !finder_ || matched_ ||
      last_resort_listed_ || finder_->first_open_at() == TimePoint::max()) {
    return TimePoint::max();
  }
  return finder_->first_open_at() + policy_.name_watch_after;
}

void PodResolver::ListAsLastResort(TimePoint now) {
  last_resort_listed_ = true;
  last_resort_ = true;
  LogDebug(host_.original + ": no pod labelled " + finder_selector_ +
           " after " + FormatDuration(now - finder_->first_open_at()) +
           " of watching; listing every pod in namespace " + policy_.ns +
           " for spec.hostname " + host_.pod_name +
           " (a pod without a Job's labels: hand-written, or a Job before "
           "Kubernetes 1.28)");
  listed_ = kube::PodList();
  List();
}

void PodResolver::OnLastResortListed(const TargetPick& pick,
                                     const std::string& rv) {
  last_resort_ = false;
  // The labelled watch found HOST's pod meanwhile: it stays the source.
  if (state_ != State::kFinding || matched_) return;
  if (pick.live.size() > 1) {
    Fail(SeveralPodsMatch(pick.live));
    return;
  }
  if (pick.live.empty()) return;
  LogDebug(host_.original + ": found pod " + pick.live[0]->name +
           " by spec.hostname without the labels; following it by name");
  finder_.reset();
  Name(*pick.live[0], pick.passed_over, rv);
}

// ---- The replacement policy -------------------------------------------------

void PodResolver::Saw(const kube::Pod& pod) { replacement_.Saw(pod); }

bool PodResolver::ReplacesEnded(const kube::Pod& pod) const {
  // A pod found by its own name fails fast: a new pod of that name comes
  // only from a StatefulSet, which deletes the old one first (a deletion
  // seen before the phase is awaited as one).
  return by_hostname_ && !pod.controller.empty();
}

bool PodResolver::ReplacedWhileTerminating(const kube::Pod& pod) const {
  return pod.deleting && ReplacesEnded(pod);
}

void PodResolver::Departed(const kube::Pod* last, TimePoint now) {
  if (!AwaitReplacement(last, now)) return;
  if (by_hostname_) {
    // A Job's replacement gets a new name and the same spec.hostname, and
    // may come while the old pod is still terminating: resolve HOST again
    // (passing that pod over) rather than wait for the old name to go.
    Reresolve(/*at_once=*/true, now);
    return;
  }
  note_ = replacement_.Note(PodReplacement::Where::kNameWatch);
}

bool PodResolver::AwaitReplacement(const kube::Pod* last, TimePoint now) {
  if (last) pod_name_ = last->name;
  Status verdict = replacement_.Went(last, PodRef(), now);
  if (!verdict.ok()) {
    Fail(verdict);
    return false;
  }
  return true;
}

void PodResolver::Reresolve(bool at_once, TimePoint now) {
  relisting_ = true;
  state_ = State::kLooking;
  target_.reset();
  listing_ = true;
  note_ = replacement_.Note(PodReplacement::Where::kListAgain);
  if (!at_once) {
    api_retry_at_ = now + reresolve_backoff_.Next(now);
    return;
  }
  gone_uid_ = replacement_.last_uid();
  listed_ = kube::PodList();
  List();
}

// ---- Timers -----------------------------------------------------------------

TimePoint PodResolver::NextWake() const {
  if (state_ == State::kFailed) return TimePoint::max();
  TimePoint t = std::min(api_retry_at_, NameWatchDue());
  if (finder_) t = std::min({t, finder_->NextWake(), LastResortDue()});
  return std::min(t, replacement_.due());
}

bool PodResolver::OnTimer(TimePoint now) {
  if (state_ == State::kFailed) return false;
  if (api_retry_at_ <= now) {
    api_retry_at_ = TimePoint::max();
    if (listing_) {
      List();
    } else {
      Lookup();
    }
    return true;
  }
  // Its own retries and idle limit; a change it finds runs on_change.
  if (finder_ && finder_->NextWake() <= now) finder_->OnTimer(now);
  if (finder_ && now >= LastResortDue()) {
    ListAsLastResort(now);
    return true;
  }
  if (now >= replacement_.due()) {
    Fail(replacement_.NotReplaced(PodRef()));
    return true;
  }
  return false;
}

// ---- Messages ---------------------------------------------------------------

Status PodResolver::SeveralPodsMatch(
    const std::vector<const kube::Pod*>& live) const {
  std::vector<std::string> names;
  for (const kube::Pod* p : live) names.push_back(p->name);
  return FailedPreconditionError(
      "host " + Quote(host_.original) + " matches " +
      std::to_string(names.size()) + " pods in namespace " + policy_.ns + ": " +
      Join(names, ", ") + " (use the pod name, or narrow with --selector)");
}

Status PodResolver::NoPodHasIp() const {
  return FailedPreconditionError(
      "no pod in namespace " + policy_.ns + " has IP " + host_.ip +
      (policy_.label_selector.empty()
           ? ""
           : " and labels " + policy_.label_selector) +
      " (use pod names in the hostfile, or check --namespace)");
}

Status PodResolver::NoLivePodHasIp(
    const std::vector<const kube::Pod*>& ended) const {
  std::vector<std::string> pods;
  for (const kube::Pod* p : ended) {
    pods.push_back("pod " + p->name + " is " + PodSummary(*p));
  }
  return FailedPreconditionError(
      "no live pod in namespace " + policy_.ns + " has IP " + host_.ip + ": " +
      Join(pods, ", ") +
      " (an ended pod keeps reporting its IP; use pod names in the hostfile)");
}

}  // namespace k8s_agent
