// SPDX-License-Identifier: Apache-2.0
// HostWaiter's messages: what a human is told while waiting, when a pod
// does not show, and on failure. The rest of the class is in
// host_waiter.cc.

#include "plugin/agent/host_waiter.h"
#include "plugin/base/log.h"
#include "plugin/base/strings.h"

namespace k8s_agent {

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

// ---- Messages ---------------------------------------------------------------

void HostWaiter::WarnMissing(TimePoint now) {
  std::string after = " after " + FormatDuration(now - started_);
  std::string none = "no pod named " + host_.pod_name + " or labelled " +
                     finder_selector_ + " in namespace " + policy_.ns;
  if (const kube::ApiHealth* api = TroubledApi()) {
    // Not "is the name right?": nobody could say whether it exists.
    LogWarning(host_.original + ": " +
               (finder_ ? none + " seen" : PodRef() + " not seen") + after +
               ": " + api->Describe(now) + "; still waiting");
    return;
  }
  LogWarning(host_.original + ": " +
             (finder_ ? none + " exists" : PodRef() + " does not exist") +
             " yet" + after + "; still waiting (is the name right?" +
             EmptyNamespaceHint() + ")");
}

void HostWaiter::NoteState(const std::string& summary, TimePoint now) {
  if (summary == summary_) return;
  summary_ = summary;
  summary_since_ = now;
  LogDebug(host_.original + ": " + PodRef() + ": " + summary);
}

void HostWaiter::MaybeProgress(TimePoint now) {
  if (now < next_progress_) return;
  next_progress_ = now + policy_.progress_every;
  LogWarning(host_.original + ": waiting for " + PodRef() + ": " +
             Describe(now) + " (" + FormatDuration(now - started_) +
             " so far, timeout " + FormatDuration(policy_.timeout) + ")");
}

std::string HostWaiter::EmptyNamespaceHint() const {
  if (!namespace_empty_) return "";
  if (!policy_.label_selector.empty()) {
    return " no pod in namespace " + policy_.ns + " matches --selector " +
           policy_.label_selector + ": are the namespace and selector right?";
  }
  return " namespace " + policy_.ns +
         " holds no pods at all: is the namespace right? see --namespace";
}

std::string HostWaiter::Describe(TimePoint now) const {
  if (state_ == State::kResolving && !lookup_answered_ && !TroubledApi()) {
    // The request is in flight: say so, rather than a state of the pod.
    return "no answer yet from the API server (" +
           FormatDuration(now - started_) + ")";
  }
  std::string s = summary_ + " for " + FormatDuration(now - summary_since_);
  if (probe_.failures() > 0) {
    s += "; ssh failed " + std::to_string(probe_.failures()) +
         " time(s), last: " + probe_.last_error();
  }
  // What the pod "is" comes from a snapshot the API server can no longer
  // update: lead with the outage, so nobody debugs a healthy pod.
  if (const kube::ApiHealth* api = TroubledApi()) {
    return api->Describe(now) + (state_ == State::kResolving
                                     ? "; the pod was not read yet"
                                     : "; last known: " + s);
  }
  return s;
}

const kube::ApiHealth* HostWaiter::TroubledApi() const {
  const kube::ApiHealth* worst = kube::ApiHealth::Worst(
      &api_health_, watcher_ ? &watcher_->api_health() : nullptr);
  return kube::ApiHealth::Worst(worst,
                                finder_ ? &finder_->api_health() : nullptr);
}

}  // namespace k8s_agent
