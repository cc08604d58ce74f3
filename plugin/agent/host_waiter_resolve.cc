// SPDX-License-Identifier: Apache-2.0
// HostWaiter's resolution: HOST to a pod by name, spec.hostname or IP
// (PickTarget decides among several), and again after that pod went. The
// rest of the class is in host_waiter.cc.

#include "plugin/agent/host_waiter.h"

#include <utility>

#include "plugin/agent/hostname_labels.h"
#include "plugin/agent/pod_target.h"
#include "plugin/base/log.h"
#include "plugin/base/strings.h"

namespace k8s_agent {
namespace {

std::string Quote(const std::string& s) { return "\"" + Printable(s) + "\""; }

}  // namespace

// ---- Resolution -----------------------------------------------------------

void HostWaiter::Lookup(TimePoint now) {
  (void)now;
  state_ = State::kResolving;
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

void HostWaiter::List(TimePoint now) {
  (void)now;
  state_ = State::kResolving;
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

void HostWaiter::RetryApi(const Status& why, TimePoint now) {
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
      List(now);
    } else {
      Lookup(now);
    }
    return;
  }
  LogInfo(host_.original + ": " + d.status.message() + "; retrying in " +
          FormatDuration(d.delay));
  api_health_.Failed(why, now);
  api_retry_at_ = now + d.delay;
}

bool HostWaiter::Answered(const Status& status, TimePoint now) {
  lookup_answered_ = true;
  if (!status.ok()) {
    RetryApi(status, now);
    return false;
  }
  api_retry_.OnSuccess();
  api_health_.Answered();
  return true;
}

void HostWaiter::OnLookupDone(StatusOr<kube::PodList> list) {
  TimePoint now = clock_->Now();
  if (!Answered(list.status(), now)) return;
  for (kube::Pod& pod : list->items) {
    if (pod.name != pod_name_) continue;
    tracer_->Record(host_.original, pod_name_, "resolved", "by name");
    std::string rv = list->resource_version.empty() ? pod.resource_version
                                                    : list->resource_version;
    BeginWaiting(std::move(pod), rv, now);
    return;
  }
  // Not created yet, or HOST is a hostname rather than a pod name
  // (Indexed Jobs, JobSet). A Job's hostname is found among the few pods
  // labelled for it; any other hostname costs a namespace-wide LIST.
  std::string selector = HostnameLabelSelector(host_, policy_.label_selector);
  if (!selector.empty()) {
    StartFinder(std::move(selector), list->resource_version, now);
    return;
  }
  LogDebug(host_.original + ": no pod is named " + pod_name_ +
           " and no controller's hostname grammar fits it; listing every "
           "pod in namespace " +
           policy_.ns + " for spec.hostname " + pod_name_);
  listed_ = kube::PodList();
  List(now);
}

void HostWaiter::OnListDone(StatusOr<kube::PodList> list) {
  TimePoint now = clock_->Now();
  if (!Answered(list.status(), now)) return;
  for (kube::Pod& p : list->items) listed_.items.push_back(std::move(p));
  listed_.resource_version = list->resource_version;
  listed_.continue_token = list->continue_token;
  if (!listed_.continue_token.empty()) {
    List(now);
    return;
  }
  listing_ = false;

  kube::PodList all = std::move(listed_);
  listed_ = kube::PodList();
  namespace_empty_ = all.items.empty();
  bool by_ip = host_.kind == HostName::Kind::kIp;
  TargetPick pick = PickTarget(host_, all.items, gone_uid_);
  if (last_resort_) {
    OnLastResortListed(pick, all.resource_version, now);
    return;
  }
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
    // Being deleted but not ended: follow it by name until it goes, since
    // a controller may make the replacement only then; its DELETED (or
    // terminal phase) starts the wait for that (Evaluate).
    target = ended;
  }
  if (target) {
    FollowListed(*target, pick.passed_over, all.resource_version, now);
    return;
  }
  if (ended && !reresolving_) {
    AwaitReplacementOf(*ended, now);
    if (done()) return;
  }
  if (by_ip) {
    Fail(NoPodHasIp());
    return;
  }
  if (reresolving_) {
    // The controller has not created the replacement yet, and a watch by
    // the old name would never see it: look again after a backoff, within
    // replacement_grace (OnTimer fails the host when that passes).
    listing_ = true;
    api_retry_at_ = now + reresolve_backoff_.Next(now);
    return;
  }
  // Not there yet: wait for a pod of that name from the list's version.
  BeginWaiting(std::nullopt, all.resource_version, now);
}

void HostWaiter::FollowListed(const kube::Pod& target,
                              const std::vector<const kube::Pod*>& passed_over,
                              const std::string& rv, TimePoint now) {
  bool by_ip = host_.kind == HostName::Kind::kIp;
  for (const kube::Pod* p : passed_over) {
    if (p == &target) continue;
    LogInfo(host_.original + ": using pod " + target.name +
            "; passing over pod " + p->name + ": " + PodSummary(*p));
  }
  pod_name_ = target.name;
  by_hostname_ = !by_ip;
  reresolving_ = false;
  tracer_->Record(host_.original, pod_name_, "resolved",
                  by_ip ? "by pod IP" : "by spec.hostname");
  BeginWaiting(target, rv, now);
}

void HostWaiter::AwaitReplacementOf(const kube::Pod& ended, TimePoint now) {
  // Only ended pods have HOST's hostname (a Job's Failed attempt): a bare
  // one is final; a controller may still make the replacement.
  pod_name_ = ended.name;
  if (ended.controller.empty()) {
    Fail(CheckFatal(ended));
    return;
  }
  last_controller_ = ended.controller;
  ended_how_ = ended.phase + TerminalDetail(ended);
  gone_at_ = now;
  reresolving_ = true;
  LogInfo(host_.original + ": only " + PodRef() + " (" + ended_how_ +
          ") has hostname " + host_.pod_name + "; waiting up to " +
          FormatDuration(policy_.replacement_grace) + " for " +
          last_controller_ + " to replace it");
}

Status HostWaiter::SeveralPodsMatch(
    const std::vector<const kube::Pod*>& live) const {
  std::vector<std::string> names;
  for (const kube::Pod* p : live) names.push_back(p->name);
  return FailedPreconditionError(
      "host " + Quote(host_.original) + " matches " +
      std::to_string(names.size()) + " pods in namespace " + policy_.ns + ": " +
      Join(names, ", ") + " (use the pod name, or narrow with --selector)");
}

Status HostWaiter::NoPodHasIp() const {
  return FailedPreconditionError(
      "no pod in namespace " + policy_.ns + " has IP " + host_.ip +
      (policy_.label_selector.empty()
           ? ""
           : " and labels " + policy_.label_selector) +
      " (use pod names in the hostfile, or check --namespace)");
}

Status HostWaiter::NoLivePodHasIp(
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

// ---- After the pod went -----------------------------------------------------

void HostWaiter::Reresolve(TimePoint now) {
  gone_uid_ = last_uid_;
  reresolving_ = true;
  AbortAttempt();
  direct_pod_.reset();
  DropWatchers();
  NoteState((ended_how_.empty() ? "deleted" : ended_how_) + ", looking for " +
                last_controller_ + "'s replacement with hostname " +
                host_.pod_name,
            now);
  listed_ = kube::PodList();
  List(now);
}

Status HostWaiter::NotReplaced() const {
  std::string remedy = " (is its controller " + last_controller_ +
                       " gone? check kubectl get pods -n " + policy_.ns + ")";
  std::string within = FormatDuration(policy_.replacement_grace);
  if (ended_how_.empty()) {
    return FailedPreconditionError(
        PodRef() + " was deleted and not replaced within " + within + remedy);
  }
  return FailedPreconditionError(
      PodRef() + " is " + ended_how_ + "; no replacement with hostname " +
      host_.pod_name + " appeared within " + within + remedy);
}

}  // namespace k8s_agent
