// SPDX-License-Identifier: Apache-2.0
// HostWaiter's finder: a HOST that names no pod but fits a Job's hostname
// grammar (Indexed Job, JobSet, Kubeflow Trainer) is found and followed by
// one label-selected watch of the few pods its Job labels for that index;
// the Failed attempt and its retry both show there, so no re-resolution is
// needed. The rest of the class is in host_waiter.cc.

#include <utility>

#include "plugin/agent/host_waiter.h"
#include "plugin/base/log.h"
#include "plugin/base/strings.h"

namespace k8s_agent {

void HostWaiter::StartFinder(std::string selector, const std::string& name_rv,
                             TimePoint now) {
  state_ = State::kWaitingForPod;
  finder_selector_ = std::move(selector);
  name_rv_ = name_rv;
  LogDebug(host_.original + ": no pod is named " + host_.pod_name +
           "; watching the pods labelled " + finder_selector_);
  finder_ = std::make_unique<kube::PodWatcher>(
      client_, clock_, policy_.ns, kube::PodWatcher::Selector{finder_selector_},
      [this] {
        if (!done()) Evaluate(clock_->Now());
      },
      seed_ + 4);
  finder_->set_watch_idle_timeout(policy_.watch_idle_timeout);
  // From "0": the watch cache first sends the pods it holds as ADDED, so
  // this one request is the lookup and the watch.
  finder_->Start(std::nullopt, "0", now);
  Evaluate(now);
}

void HostWaiter::EvaluateFound(TimePoint now) {
  if (finder_->state() == kube::PodWatcher::State::kFailed) {
    Fail(finder_->error().WithContext("watching the pods labelled " +
                                      finder_selector_));
    return;
  }
  std::vector<kube::Pod> pods;
  pods.reserve(finder_->pods().size());
  for (const auto& [name, pod] : finder_->pods()) pods.push_back(pod);
  TargetPick pick = PickTarget(host_, pods, "");
  if (pick.live.size() > 1) {
    Fail(SeveralPodsMatch(pick.live));
    return;
  }
  if (!pick.live.empty()) {
    FollowFound(*pick.live[0], pick.passed_over, now);
    return;
  }
  WaitForFound(pick.passed_over.empty() ? nullptr : pick.passed_over[0], now);
}

void HostWaiter::FollowFound(const kube::Pod& pod,
                             const std::vector<const kube::Pod*>& passed_over,
                             TimePoint now) {
  for (const kube::Pod* p : passed_over) {
    // The watch cache's ADDED events come in name order, not by age.
    if (!passed_over_said_.insert(p->name).second) continue;
    LogInfo(host_.original + ": using pod " + pod.name + "; passing over pod " +
            p->name + ": " + PodSummary(*p));
  }
  if (pod.name != found_name_) {
    // The name watch (a late StatefulSet pod) is not needed any more.
    finder_matched_ = true;
    watcher_.reset();
    found_name_ = pod.name;
    pod_name_ = pod.name;
    tracer_->Record(host_.original, pod_name_, "resolved",
                    "by controller labels");
  }
  EvaluatePod(pod, now);
}

void HostWaiter::WaitForFound(const kube::Pod* ended, TimePoint now) {
  AbortAttempt();
  state_ = State::kWaitingForPod;
  if (ended) {
    // HOST is a Job's hostname: no pod of that name is to come.
    narrator_.SetMissing(false, now);
    finder_matched_ = true;
    pod_name_ = ended->name;
    if (ended->controller.empty()) {
      Fail(IsTerminal(*ended) ? CheckFatal(*ended)
                              : BarePodGone("is being deleted"));
      return;
    }
    last_controller_ = ended->controller;
    if (!IsTerminal(*ended)) {
      // Terminating: its Job makes the retry once it is gone.
      NoteState("terminating; waiting for " + last_controller_ +
                    "'s replacement with hostname " + host_.pod_name,
                now);
      return;
    }
    ended_how_ = ended->phase + TerminalDetail(*ended);
    if (gone_at_ == TimePoint::max()) {
      gone_at_ = now;
      LogInfo(host_.original + ": only " + PodRef() + " (" + ended_how_ +
              ") has hostname " + host_.pod_name + "; waiting up to " +
              FormatDuration(policy_.replacement_grace) + " for " +
              last_controller_ + " to replace it");
    }
    NoteState(ended_how_ + "; waiting for " + last_controller_ +
                  "'s replacement with hostname " + host_.pod_name,
              now);
    return;
  }
  if (!found_name_.empty()) {
    // The pod used so far was deleted.
    if (last_controller_.empty()) {
      Fail(BarePodGone("was deleted"));
      return;
    }
    ended_how_.clear();
    if (gone_at_ == TimePoint::max()) gone_at_ = now;
    NoteState("deleted; waiting for " + last_controller_ +
                  "'s replacement with hostname " + host_.pod_name,
              now);
    return;
  }
  narrator_.SetMissing(true, now);
  NoteState("not created yet", now);
}

TimePoint HostWaiter::NameWatchDue() const {
  TimePoint open = finder_ ? finder_->first_open_at() : TimePoint::max();
  // Only while no pod matched and the name watch is not open yet.
  if (finder_matched_ || watcher_ || open == TimePoint::max()) {
    return TimePoint::max();
  }
  return open + policy_.name_watch_after;
}

TimePoint HostWaiter::LastResortDue() const {
  TimePoint open = finder_ ? finder_->first_open_at() : TimePoint::max();
  if (last_resort_listed_ || finder_matched_ || open == TimePoint::max()) {
    return TimePoint::max();
  }
  return open + policy_.not_found_grace;
}

void HostWaiter::ListAsLastResort(TimePoint now) {
  last_resort_listed_ = true;
  last_resort_ = true;
  LogDebug(host_.original + ": no pod labelled " + finder_selector_ +
           " after " + FormatDuration(now - started_) +
           "; listing every pod in namespace " + policy_.ns +
           " for spec.hostname " + host_.pod_name +
           " (Kubernetes before 1.28 does not label a Job's pods with their "
           "index)");
  listed_ = kube::PodList();
  List(now);
}

void HostWaiter::OnLastResortListed(const TargetPick& pick,
                                    const std::string& rv, TimePoint now) {
  last_resort_ = false;
  state_ = State::kWaitingForPod;
  if (pick.live.size() > 1) {
    Fail(SeveralPodsMatch(pick.live));
    return;
  }
  if (pick.live.empty()) {
    Evaluate(now);
    return;
  }
  LogDebug(host_.original + ": found pod " + pick.live[0]->name +
           " by spec.hostname without the labels; following it by name");
  DropWatchers();
  FollowListed(*pick.live[0], pick.passed_over, rv, now);
}

}  // namespace k8s_agent
