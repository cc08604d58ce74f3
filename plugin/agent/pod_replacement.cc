// SPDX-License-Identifier: Apache-2.0
// PodReplacement: the wait for a replacement pod and its words.

#include "plugin/agent/pod_replacement.h"

#include "plugin/agent/pod_target.h"
#include "plugin/base/log.h"
#include "plugin/base/strings.h"

namespace k8s_agent {

PodReplacement::PodReplacement(const HostName& host, const WaitPolicy& policy)
    : host_(host.original), hostname_(host.pod_name), policy_(policy) {}

void PodReplacement::Saw(const kube::Pod& pod) {
  gone_at_ = TimePoint::max();
  ended_how_.clear();
  terminating_ = false;
  controller_ = pod.controller;
  last_uid_ = pod.uid;
}

Status PodReplacement::Went(const kube::Pod* last, const std::string& ref,
                            TimePoint now) {
  if (last) {
    controller_ = last->controller;
    last_uid_ = last->uid;
  }
  bool was_terminating = terminating_;
  terminating_ = last && !IsTerminal(*last);
  if (controller_.empty()) {
    // Without a controller nothing brings a pod of that name back.
    if (!last) return BarePodGone(ref, "was deleted");
    if (terminating_) return BarePodGone(ref, "is being deleted");
    return FatalPodState(*last, ref, policy_.ns, policy_.fatal_reasons);
  }
  if (terminating_) {
    if (!was_terminating && last->uid != said_terminating_uid_) {
      // Once per pod, at -v: the wait's progress lines and a timeout say
      // it at default verbosity, should it last.
      said_terminating_uid_ = last->uid;
      kube::Pod as_was = *last;
      as_was.deleting = false;  // Summarised as it still runs.
      LogInfo(host_ + ": " + ref + " is terminating (" + PodSummary(as_was) +
              "): not launching there; waiting for " + controller_ +
              "'s replacement");
    }
    return OkStatus();
  }
  ended_how_ = last ? last->phase + TerminalDetail(*last) : "";
  if (gone_at_ == TimePoint::max()) {
    gone_at_ = now;
    LogInfo(host_ + ": " + ref +
            (last ? " is " + ended_how_ : std::string(" was deleted")) +
            "; waiting up to " + FormatDuration(policy_.replacement_grace) +
            " for " + controller_ + " to replace it");
  }
  return OkStatus();
}

TimePoint PodReplacement::due() const {
  if (gone_at_ == TimePoint::max()) return TimePoint::max();
  return gone_at_ + policy_.replacement_grace;
}

std::string PodReplacement::Note(Where where) const {
  std::string what = terminating_         ? "terminating"
                     : ended_how_.empty() ? "deleted"
                                          : ended_how_;
  switch (where) {
    case Where::kListAgain:
      return what + "; looking for " + controller_ +
             "'s replacement with hostname " + hostname_;
    case Where::kLabelledWatch:
      return what + "; waiting for " + controller_ +
             "'s replacement with hostname " + hostname_;
    case Where::kNameWatch:
      break;
  }
  return what + "; waiting for " + controller_ + " to replace it";
}

Status PodReplacement::NotReplaced(const std::string& ref) const {
  std::string remedy = " (is its controller " + controller_ +
                       " gone? check kubectl get pods -n " + policy_.ns + ")";
  std::string within = FormatDuration(policy_.replacement_grace);
  if (ended_how_.empty()) {
    return FailedPreconditionError(
        ref + " was deleted and not replaced within " + within + remedy);
  }
  return FailedPreconditionError(ref + " is " + ended_how_ +
                                 "; no replacement with hostname " + hostname_ +
                                 " appeared within " + within + remedy);
}

Status PodReplacement::BarePodGone(const std::string& ref,
                                   const std::string& what) const {
  return FailedPreconditionError(
      ref + " " + what +
      " and no controller owns it (no ownerReference with controller=true),"
      " so nothing will recreate it (recreate the pod, or run the workers "
      "as a StatefulSet or Job)");
}

}  // namespace k8s_agent
