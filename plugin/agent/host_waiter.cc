// SPDX-License-Identifier: Apache-2.0
// HostWaiter: follow the pod, loop plumbing; see the diagram in
// host_waiter.h. Resolving HOST to a pod is in host_waiter_resolve.cc (and
// host_waiter_find.cc for a Job's hostname), the SSH probe's part in
// host_waiter_probe.cc; what a person is told is WaitNarrator's.

#include "plugin/agent/host_waiter.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "plugin/agent/pod_target.h"
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

}  // namespace

HostWaiter::HostWaiter(HostName host, WaitPolicy policy,
                       kube::KubeClient* client, ssh::SshConnector* connector,
                       Clock* clock, Tracer* tracer, uint64_t seed)
    : host_(std::move(host)),
      policy_(std::move(policy)),
      client_(client),
      connector_(connector),
      clock_(clock),
      tracer_(tracer),
      seed_(seed),
      api_retry_(seed),
      reresolve_backoff_(ReresolveBackoff(), seed + 3),
      probe_(connector, host_.original, seed + 1),
      narrator_(host_, policy_) {
  if (host_.kind == HostName::Kind::kPodName) pod_name_ = host_.pod_name;
}

HostWaiter::~HostWaiter() = default;

void HostWaiter::Start(TimePoint now) {
  started_ = now;
  overall_ = Deadline::After(now, policy_.timeout);
  narrator_.Start(now);
  tracer_->RecordFields(host_.original, pod_name_, "begin",
                        {{trace_field::kOn, tracer_->local_host()}});
  NoteState("looking up the pod", now);
  if (host_.kind == HostName::Kind::kIp) {
    List(now);
  } else {
    Lookup(now);
  }
}

// ---- Following the pod ------------------------------------------------------

void HostWaiter::BeginWaiting(std::optional<kube::Pod> pod,
                              const std::string& rv, TimePoint now) {
  state_ = State::kWaitingForPod;
  direct_pod_ = pod;
  watch_from_rv_ = rv;
  // A usable pod needs no watch at all: one API call for a ready host,
  // unless the probe is slow (see probe_watch_after).
  if (pod && Usable(*pod) && CheckFatal(*pod).ok()) {
    watch_after_ = now + policy_.probe_watch_after;
    Evaluate(now);
    return;
  }
  StartWatcher(std::move(pod), rv, now);
  Evaluate(now);
}

void HostWaiter::StartWatcher(std::optional<kube::Pod> pod,
                              const std::string& rv, TimePoint now) {
  watch_after_ = TimePoint::max();
  watcher_ = std::make_unique<kube::PodWatcher>(
      client_, clock_, policy_.ns, pod_name_,
      [this] {
        if (!done()) Evaluate(clock_->Now());
      },
      seed_ + 2);
  watcher_->set_watch_idle_timeout(policy_.watch_idle_timeout);
  watcher_->Start(std::move(pod), rv, now);
}

bool HostWaiter::Usable(const kube::Pod& pod) const {
  return pod.phase == "Running" && !pod.pod_ip.empty() && !pod.deleting &&
         (!policy_.require_ready || pod.ready);
}

Status HostWaiter::CheckFatal(const kube::Pod& pod) const {
  return FatalPodState(pod, PodRef(), policy_.ns, policy_.fatal_reasons);
}

void HostWaiter::Evaluate(TimePoint now) {
  // Before the lookup's answer nothing is known about the pod: absence is
  // not "not created yet".
  if (done() || reresolving_ || state_ == State::kResolving) return;
  if (watcher_ && watcher_->state() == kube::PodWatcher::State::kFailed) {
    Fail(watcher_->error().WithContext("watching " + PodRef()));
    return;
  }
  if (finder_) {
    if (!watcher_ || !watcher_->pod()) {
      EvaluateFound(now);
      return;
    }
    // A pod named HOST came after all (a StatefulSet's, created late).
    LogDebug(host_.original + ": pod " + pod_name_ +
             " appeared; no longer watching pods labelled " + finder_selector_);
    finder_.reset();
  }
  // A copy: evaluating may drop the watcher that holds the pod.
  std::optional<kube::Pod> pod = watcher_ ? watcher_->pod() : direct_pod_;
  if (!pod) {
    OnPodAbsent(now);
    return;
  }
  EvaluatePod(*pod, now);
}

void HostWaiter::EvaluatePod(const kube::Pod& pod, TimePoint now) {
  gone_at_ = TimePoint::max();
  ended_how_.clear();
  narrator_.SetMissing(false, now);
  pod_status_trace_.Observe(pod, host_.original, pod_name_, tracer_);
  last_controller_ = pod.controller;
  last_uid_ = pod.uid;
  // The API server marks a deletion (deletionTimestamp) before the pod
  // goes; without a controller nothing brings a pod of that name back.
  if (pod.deleting && pod.controller.empty()) {
    Fail(BarePodGone("is being deleted"));
    return;
  }

  if (EndedByFatal(pod, now)) return;
  if (!pod.unschedulable_reason.empty() && !said_unschedulable_) {
    said_unschedulable_ = true;
    LogWarning(host_.original + ": " + PodRef() + " is " +
               pod.unschedulable_reason + ": " +
               Printable(pod.unschedulable_message) +
               "; still waiting (an autoscaler may add nodes)");
  }
  if (!Usable(pod)) {
    AbortAttempt();
    state_ = State::kWaitingForPod;
    NoteState(PodSummary(pod), now);
    return;
  }
  if (!running_traced_) {
    running_traced_ = true;
    tracer_->Record(host_.original, pod_name_, "pod_running", pod.pod_ip);
    LogInfo(host_.original + ": " + PodRef() + " is Running at " + pod.pod_ip +
            " after " + FormatDuration(now - started_));
  }
  Probe(pod, now);
}

void HostWaiter::OnPodAbsent(TimePoint now) {
  AbortAttempt();
  state_ = State::kWaitingForPod;
  if (watcher_ && watcher_->deleted()) {
    if (last_controller_.empty()) {
      Fail(BarePodGone("was deleted"));
      return;
    }
    if (gone_at_ == TimePoint::max()) gone_at_ = now;
    if (by_hostname_) {
      // A Job's replacement gets a new name and the same spec.hostname:
      // resolve HOST again rather than wait for the old name.
      Reresolve(now);
      return;
    }
    NoteState("deleted, waiting for " + last_controller_ + " to replace it",
              now);
  } else {
    narrator_.SetMissing(true, now);
    NoteState("not created yet", now);
  }
}

bool HostWaiter::EndedByFatal(const kube::Pod& pod, TimePoint now) {
  Status fatal = CheckFatal(pod);
  if (!fatal.ok() && by_hostname_ && IsTerminal(pod) &&
      !pod.controller.empty()) {
    // An Indexed Job keeps the Failed pod and retries the index in a new
    // one: as after a deletion, look for it. (A pod found by its own name
    // still fails fast: a new pod of that name comes only from a
    // StatefulSet, which deletes the old one first; the deletion path in
    // OnPodAbsent waits for that when the deletion is seen before the
    // phase.)
    ended_how_ = pod.phase + TerminalDetail(pod);
    gone_at_ = now;
    Reresolve(now);
    return true;
  }
  if (!fatal.ok() && !ProbeDespite(pod, now)) {
    if (fatal_since_ == TimePoint::max()) {
      Fail(fatal);
    } else {
      Fail(Status(fatal.code(),
                  fatal.message() + "; ssh did not answer within " +
                      FormatDuration(policy_.fatal_probe_grace) +
                      " either (last: " + probe_.last_error() + ")"));
    }
    return true;
  }
  if (fatal.ok()) fatal_since_ = TimePoint::max();
  return false;
}

// ---- What the narrator is told ---------------------------------------------

void HostWaiter::NoteState(const std::string& summary, TimePoint now) {
  narrator_.Note(summary, PodRef(), now);
}

WaitFacts HostWaiter::Facts() const {
  WaitFacts f;
  f.pod_ref = PodRef();
  f.resolving = state_ == State::kResolving;
  f.answered = lookup_answered_;
  f.api = TroubledApi();
  f.ssh_failures = probe_.failures();
  f.ssh_last_error = probe_.last_error();
  if (finder_) f.finder_selector = finder_selector_;
  f.namespace_empty = namespace_empty_;
  return f;
}

std::string HostWaiter::PodRef() const {
  std::string name = pod_name_.empty() ? host_.original : pod_name_;
  return "pod " + policy_.ns + "/" + name;
}

Status HostWaiter::BarePodGone(const std::string& what) const {
  return FailedPreconditionError(
      PodRef() + " " + what +
      " and no controller owns it (no ownerReference with controller=true),"
      " so nothing will recreate it (recreate the pod, or run the workers "
      "as a StatefulSet or Job)");
}

const kube::ApiHealth* HostWaiter::TroubledApi() const {
  const kube::ApiHealth* worst = kube::ApiHealth::Worst(
      &api_health_, watcher_ ? &watcher_->api_health() : nullptr);
  return kube::ApiHealth::Worst(worst,
                                finder_ ? &finder_->api_health() : nullptr);
}

// ---- Loop plumbing ----------------------------------------------------------

void HostWaiter::CollectFds(std::vector<pollfd>* fds) {
  if (!done()) probe_.CollectFds(fds);
}

TimePoint HostWaiter::NextWake() const {
  if (done()) return TimePoint::max();
  TimePoint t = std::min({overall_.at(), narrator_.NextWake(), api_retry_at_});
  if (!client_->answered()) {
    t = std::min(t, started_ + policy_.api_first_answer_timeout);
  }
  if (watcher_) t = std::min(t, watcher_->NextWake());
  if (finder_) {
    t = std::min(t, finder_->NextWake());
    t = std::min(t, NameWatchDue());
    t = std::min(t, LastResortDue());
  }
  // Only while probing: a probe abandoned with a retry time in the past
  // (the pod stopped running) would otherwise wake the loop forever.
  if (state_ == State::kProbing || state_ == State::kBackoff) {
    t = std::min(t, probe_.NextWake());
  }
  if (!watcher_) t = std::min(t, watch_after_);
  if (gone_at_ != TimePoint::max()) {
    t = std::min(t, gone_at_ + policy_.replacement_grace);
  }
  if (fatal_since_ != TimePoint::max()) {
    t = std::min(t, fatal_since_ + policy_.fatal_probe_grace);
  }
  return t;
}

void HostWaiter::OnFdReady(int fd, short revents, TimePoint now) {
  if (done()) return;
  if (probe_.OnFdReady(fd, revents, now)) OnProbeSettled(now);
}

void HostWaiter::OnTimer(TimePoint now) {
  if (done()) return;
  if (overall_.Expired(now)) {
    Fail(narrator_.TimedOut(Facts(), client_->config().server,
                            pod_name_.empty() ? host_.original : pod_name_,
                            now));
    return;
  }
  if (Status s = kube::CheckFirstAnswer(
          client_->answered(), started_, policy_.api_first_answer_timeout, now,
          client_->config().server, TroubledApi());
      !s.ok()) {
    Fail(s.WithContext("looking up " + PodRef()));
    return;
  }
  if (api_retry_at_ <= now) {
    api_retry_at_ = TimePoint::max();
    if (listing_) {
      List(now);
    } else {
      Lookup(now);
    }
    return;
  }
  if (!watcher_ && direct_pod_ && now >= watch_after_) {
    // The probe outlasted a handshake: follow the pod while it runs, from
    // the lookup's version, so changes since then arrive at once.
    LogDebug(host_.original + ": ssh probe still running after " +
             FormatDuration(policy_.probe_watch_after) + "; watching " +
             PodRef());
    StartWatcher(direct_pod_, watch_from_rv_, now);
  }
  if (watcher_ && watcher_->NextWake() <= now) watcher_->OnTimer(now);
  if (finder_ && finder_->NextWake() <= now) finder_->OnTimer(now);
  if (finder_ && now >= NameWatchDue()) {
    // No pod is labelled for HOST yet: it may be a pod name still to come.
    // From the name lookup's version, so no event since then is lost.
    StartWatcher(std::nullopt, name_rv_, now);
  }
  if (finder_ && now >= LastResortDue()) {
    ListAsLastResort(now);
    return;
  }
  if (probe_.OnTimer(now)) {
    OnProbeSettled(now);
    if (done()) return;
  }
  if (gone_at_ != TimePoint::max() &&
      now - gone_at_ >= policy_.replacement_grace) {
    Fail(NotReplaced());
    return;
  }
  narrator_.OnTimer(Facts(), now);
  Evaluate(now);
}

void HostWaiter::DropWatchers() {
  // Also from inside either watcher's own callback (kube_client.h's rule).
  watcher_.reset();
  finder_.reset();
}

void HostWaiter::Fail(const Status& why) {
  if (done()) return;
  state_ = State::kFailed;
  status_ = why;
  probe_.Abort();
  DropWatchers();
  call_.reset();
  tracer_->Record(host_.original, pod_name_, "failed", why.message());
}

}  // namespace k8s_agent
