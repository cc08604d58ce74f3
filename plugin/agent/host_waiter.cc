// SPDX-License-Identifier: Apache-2.0
// HostWaiter: follow the pod PodResolver names, check it is not doomed,
// probe SSH, keep the deadline; see the diagram in host_waiter.h.

#include "plugin/agent/host_waiter.h"

#include <algorithm>
#include <utility>

#include "plugin/agent/pod_target.h"
#include "plugin/base/log.h"
#include "plugin/base/strings.h"
#include "plugin/ssh/tcp_connect.h"

namespace k8s_agent {
namespace {

// The same scale as a trace record's t_mono_us.
int64_t MonoMicros(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             t.time_since_epoch())
      .count();
}

}  // namespace

HostWaiter::HostWaiter(HostName host, WaitPolicy policy,
                       kube::KubeClient* client, ssh::SshConnector* connector,
                       Clock* clock, Tracer* tracer, uint64_t seed)
    : host_(std::move(host)),
      policy_(std::move(policy)),
      client_(client),
      clock_(clock),
      tracer_(tracer),
      seed_(seed),
      resolver_(
          host_, policy_, client, clock, tracer, [this] { OnResolverChange(); },
          seed),
      narrator_(host_, policy_),
      probe_(connector, host_.original, seed + 1) {}

HostWaiter::~HostWaiter() = default;

void HostWaiter::Start(TimePoint now) {
  overall_ = Deadline::After(now, policy_.timeout);
  narrator_.Start(now);
  tracer_->RecordFields(host_.original, pod_name(), "begin",
                        {{trace_field::kOn, tracer_->local_host()}});
  NoteState("looking up the pod", now);
  resolver_.Start(now);
}

// ---- Following the pod ------------------------------------------------------

void HostWaiter::OnResolverChange() {
  if (done()) return;
  TimePoint now = clock_->Now();
  if (std::optional<PodResolver::Target> target = resolver_.TakeTarget()) {
    BeginWaiting(std::move(target->pod), target->rv, now);
    return;
  }
  Evaluate(now);
}

void HostWaiter::BeginWaiting(std::optional<kube::Pod> pod,
                              const std::string& rv, TimePoint now) {
  state_ = State::kWaitingForPod;
  watcher_.reset();  // A name watch from the labelled watch's time.
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
      client_, clock_, policy_.ns, pod_name(),
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
  return FatalPodState(pod, resolver_.PodRef(), policy_.ns,
                       policy_.fatal_reasons);
}

void HostWaiter::Evaluate(TimePoint now) {
  if (done()) return;
  switch (resolver_.state()) {
    case PodResolver::State::kFailed:
      Fail(resolver_.status());
      return;
    case PodResolver::State::kLooking:
      // Before the lookup's answer nothing is known about the pod: absence
      // is not "not created yet". Looking again for a replacement says so.
      state_ = State::kResolving;
      if (!resolver_.note().empty()) NoteState(resolver_.note(), now);
      return;
    case PodResolver::State::kNamed:
    case PodResolver::State::kFinding:
      break;
  }
  if (watcher_ && watcher_->state() == kube::PodWatcher::State::kFailed) {
    Fail(watcher_->error().WithContext("watching " + resolver_.PodRef()));
    return;
  }
  if (resolver_.state() == PodResolver::State::kFinding) {
    if (!watcher_ || !watcher_->pod()) {
      EvaluateFound(now);
      return;
    }
    // A pod named HOST came after all (a StatefulSet's, created late).
    LogDebug(host_.original + ": pod " + watcher_->pod()->name +
             " appeared; no longer watching pods labelled " +
             resolver_.finder_selector());
    resolver_.StopFinding(*watcher_->pod());
  }
  // A copy: evaluating may drop the watcher that holds the pod.
  std::optional<kube::Pod> pod = watcher_ ? watcher_->pod() : direct_pod_;
  if (!pod) {
    OnPodAbsent(now);
    return;
  }
  EvaluatePod(*pod, now);
}

void HostWaiter::EvaluateFound(TimePoint now) {
  if (std::optional<kube::Pod> pod = resolver_.Pick(now)) {
    watcher_.reset();  // The name watch is not needed any more.
    EvaluatePod(*pod, now);
    return;
  }
  AbortAttempt();
  if (resolver_.state() == PodResolver::State::kFailed) {
    Fail(resolver_.status());
    return;
  }
  state_ = State::kWaitingForPod;
  narrator_.SetMissing(resolver_.missing(), now);
  NoteState(resolver_.note(), now);
}

void HostWaiter::EvaluatePod(const kube::Pod& pod, TimePoint now) {
  narrator_.SetMissing(false, now);
  resolver_.Saw(pod);
  pod_status_trace_.Observe(pod, host_.original, pod_name(), tracer_);
  // The API server marks a deletion (deletionTimestamp) before the pod
  // goes; without a controller nothing brings a pod of that name back.
  // A Job's replacement may come while the old pod terminates: that is
  // looked for at once, and the dying pod is never launched on.
  if (pod.deleting &&
      (pod.controller.empty() || resolver_.ReplacedWhileTerminating(pod))) {
    resolver_.Departed(&pod, now);
    FollowDeparture(now);
    return;
  }
  if (EndedByFatal(pod, now)) return;
  if (!pod.unschedulable_reason.empty() && !said_unschedulable_) {
    said_unschedulable_ = true;
    LogWarning(host_.original + ": " + resolver_.PodRef() + " is " +
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
    tracer_->Record(host_.original, pod_name(), "pod_running", pod.pod_ip);
    LogInfo(host_.original + ": " + resolver_.PodRef() + " is Running at " +
            pod.pod_ip + " after " + FormatDuration(now - narrator_.started()));
  }
  Probe(pod, now);
}

void HostWaiter::OnPodAbsent(TimePoint now) {
  AbortAttempt();
  state_ = State::kWaitingForPod;
  if (watcher_ && watcher_->deleted()) {
    resolver_.Departed(nullptr, now);
    FollowDeparture(now);
    return;
  }
  narrator_.SetMissing(true, now);
  NoteState("not created yet", now);
}

void HostWaiter::FollowDeparture(TimePoint now) {
  switch (resolver_.state()) {
    case PodResolver::State::kFailed:
      Fail(resolver_.status());
      return;
    case PodResolver::State::kLooking:
      // HOST is looked up again: a watch of the old name would never see
      // the replacement.
      AbortAttempt();
      direct_pod_.reset();
      watcher_.reset();
      state_ = State::kResolving;
      break;
    case PodResolver::State::kNamed:
    case PodResolver::State::kFinding:
      break;
  }
  NoteState(resolver_.note(), now);
}

bool HostWaiter::EndedByFatal(const kube::Pod& pod, TimePoint now) {
  Status fatal = CheckFatal(pod);
  if (!fatal.ok() && IsTerminal(pod) && resolver_.ReplacesEnded(pod)) {
    // An Indexed Job keeps the Failed pod and retries the index in a new
    // one: as after a deletion, the resolver looks for it.
    resolver_.Departed(&pod, now);
    FollowDeparture(now);
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

// ---- Probing SSH ------------------------------------------------------------

void HostWaiter::Probe(const kube::Pod& pod, TimePoint now) {
  // A replacement pod (new UID) or a new IP invalidates the probe in
  // flight and any backoff earned against the old target.
  if (probe_.SetTarget(pod.uid, PodAddresses(pod)) && probed_) {
    LogInfo(host_.original + ": " + resolver_.PodRef() +
            " changed (replaced or new IP); probing " + pod.pod_ip);
  }
  probed_ = true;
  if (probe_.state() == SshProbe::State::kConnecting) return;
  if (!probe_.due(now)) {
    state_ = State::kBackoff;
    return;
  }
  state_ = State::kProbing;
  if (probe_.failures() == 0) NoteState(PodSummary(pod) + ", connecting", now);
  probe_.Start(policy_.ssh, now);
  OnProbeSettled(now);
}

void HostWaiter::AbortAttempt() {
  // Destroying the connection closes its socket: an attempt against an
  // old IP or a pod that stopped running is simply abandoned.
  probe_.Abort();
}

void HostWaiter::OnProbeSettled(TimePoint now) {
  switch (probe_.state()) {
    case SshProbe::State::kReady: {
      state_ = State::kReady;
      std::string where = ssh::HostPort(probe_.ip(), policy_.ssh.port);
      std::string attempts = std::to_string(probe_.attempts()) + " attempt(s)";
      tracer_->RecordFields(host_.original, pod_name(), "ssh_ready",
                            {{trace_field::kAttemptTMonoUs,
                              MonoMicros(probe_.attempt_started())}},
                            where + " after " + attempts);
      LogInfo(host_.original + ": ssh to " + where + " ready after " +
              FormatDuration(now - narrator_.started()) + " (" + attempts +
              ")");
      if (fatal_since_ != TimePoint::max()) {
        LogInfo(host_.original + ": launching although " + fatal_note_ +
                ": ssh answers");
      }
      // No more API traffic for this host once it is ready.
      DropWatchers();
      return;
    }
    case SshProbe::State::kFailed:
      Fail(probe_.status().WithContext("ssh to " + resolver_.PodRef() + " at " +
                                       probe_.ip()));
      return;
    case SshProbe::State::kBackoff:
      if (!watcher_ && direct_pod_) {
        // The snapshot that looked ready may be stale (pod deleted, new
        // IP): from now on follow the pod, from the lookup's version.
        StartWatcher(direct_pod_, watch_from_rv_, now);
      }
      NoteState("Running at " + probe_.ip() + " but ssh is not ready", now);
      state_ = State::kBackoff;
      return;
    case SshProbe::State::kIdle:
    case SshProbe::State::kConnecting:
      return;
  }
}

std::unique_ptr<ssh::SshConnection> HostWaiter::TakeConnection() {
  return probe_.TakeConnection();
}

bool HostWaiter::ProbeDespite(const kube::Pod& pod, TimePoint now) {
  std::string note = FatalUnlessSshAnswers(pod, policy_.fatal_reasons);
  if (note.empty()) return false;
  if (fatal_since_ == TimePoint::max()) {
    fatal_since_ = now;
    LogInfo(host_.original + ": " + resolver_.PodRef() + ": " + note +
            "; probing ssh anyway for up to " +
            FormatDuration(policy_.fatal_probe_grace) +
            " (sshd may run in another container)");
  }
  fatal_note_ = note;
  return now - fatal_since_ < policy_.fatal_probe_grace;
}

// ---- What the narrator is told ---------------------------------------------

void HostWaiter::NoteState(const std::string& summary, TimePoint now) {
  narrator_.Note(summary, resolver_.PodRef(), now);
}

WaitFacts HostWaiter::Facts() const {
  WaitFacts f;
  f.pod_ref = resolver_.PodRef();
  f.resolving = state_ == State::kResolving;
  f.answered = resolver_.answered();
  f.api = TroubledApi();
  f.ssh_failures = probe_.failures();
  f.ssh_last_error = probe_.last_error();
  f.finder_selector = resolver_.finder_selector();
  f.namespace_empty = resolver_.namespace_empty();
  return f;
}

const kube::ApiHealth* HostWaiter::TroubledApi() const {
  return resolver_.TroubledApi(watcher_ ? &watcher_->api_health() : nullptr);
}

// ---- Loop plumbing ----------------------------------------------------------

void HostWaiter::CollectFds(std::vector<pollfd>* fds) {
  if (!done()) probe_.CollectFds(fds);
}

TimePoint HostWaiter::NextWake() const {
  if (done()) return TimePoint::max();
  TimePoint t =
      std::min({overall_.at(), narrator_.NextWake(), resolver_.NextWake()});
  if (!client_->answered()) {
    t = std::min(t, narrator_.started() + policy_.api_first_answer_timeout);
  }
  if (watcher_) t = std::min(t, watcher_->NextWake());
  // Only while probing: a probe abandoned with a retry time in the past
  // (the pod stopped running) would otherwise wake the loop forever.
  if (state_ == State::kProbing || state_ == State::kBackoff) {
    t = std::min(t, probe_.NextWake());
  }
  if (!watcher_) t = std::min(t, watch_after_);
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
                            pod_name().empty() ? host_.original : pod_name(),
                            now));
    return;
  }
  if (Status s =
          kube::CheckFirstAnswer(client_->answered(), narrator_.started(),
                                 policy_.api_first_answer_timeout, now,
                                 client_->config().server, TroubledApi());
      !s.ok()) {
    Fail(s.WithContext("looking up " + resolver_.PodRef()));
    return;
  }
  if (std::optional<std::string> rv = resolver_.TakeNameWatch(now)) {
    // No pod is labelled for HOST yet: it may be a pod name still to come.
    // From the name lookup's version, so no event since then is lost.
    StartWatcher(std::nullopt, *rv, now);
  }
  if (resolver_.OnTimer(now)) {
    if (resolver_.state() == PodResolver::State::kFailed) {
      Fail(resolver_.status());
    }
    return;
  }
  if (done()) return;  // The labelled watch's timers may have told.
  if (!watcher_ && direct_pod_ && now >= watch_after_) {
    // The probe outlasted a handshake: follow the pod while it runs, from
    // the lookup's version, so changes since then arrive at once.
    LogDebug(host_.original + ": ssh probe still running after " +
             FormatDuration(policy_.probe_watch_after) + "; watching " +
             resolver_.PodRef());
    StartWatcher(direct_pod_, watch_from_rv_, now);
  }
  if (watcher_ && watcher_->NextWake() <= now) watcher_->OnTimer(now);
  if (probe_.OnTimer(now)) {
    OnProbeSettled(now);
    if (done()) return;
  }
  narrator_.OnTimer(Facts(), now);
  Evaluate(now);
}

void HostWaiter::DropWatchers() {
  // Also from inside either watcher's own callback (kube_client.h's rule).
  watcher_.reset();
  resolver_.Stop();
}

void HostWaiter::Fail(const Status& why) {
  if (done()) return;
  state_ = State::kFailed;
  status_ = why;
  probe_.Abort();
  DropWatchers();
  tracer_->Record(host_.original, pod_name(), "failed", why.message());
}

}  // namespace k8s_agent
