// SPDX-License-Identifier: Apache-2.0
// WaitNarrator: the lines a person reads while a host waits.

#include "plugin/agent/wait_narrator.h"

#include "plugin/base/log.h"
#include "plugin/base/strings.h"

namespace k8s_agent {

WaitNarrator::WaitNarrator(const HostName& host, const WaitPolicy& policy)
    : host_(host.original), pod_name_(host.pod_name), policy_(policy) {}

void WaitNarrator::Start(TimePoint now) {
  started_ = now;
  next_progress_ = now + policy_.progress_after;
}

void WaitNarrator::Note(const std::string& summary, const std::string& pod_ref,
                        TimePoint now) {
  if (summary == summary_) return;
  summary_ = summary;
  summary_since_ = now;
  LogDebug(host_ + ": " + pod_ref + ": " + summary);
}

void WaitNarrator::SetMissing(bool missing, TimePoint now) {
  if (!missing) {
    missing_since_ = TimePoint::max();
  } else if (missing_since_ == TimePoint::max()) {
    missing_since_ = now;
  }
}

TimePoint WaitNarrator::NextWake() const {
  if (missing_since_ != TimePoint::max() && !said_missing_) {
    return std::min(next_progress_, missing_since_ + policy_.not_found_grace);
  }
  return next_progress_;
}

void WaitNarrator::OnTimer(const WaitFacts& facts, TimePoint now) {
  if (missing_since_ != TimePoint::max() && !said_missing_ &&
      now - missing_since_ >= policy_.not_found_grace) {
    said_missing_ = true;
    WarnMissing(facts, now);
  }
  if (now < next_progress_) return;
  next_progress_ = now + policy_.progress_every;
  LogWarning(host_ + ": waiting for " + facts.pod_ref + ": " +
             Describe(facts, now) + " (" + FormatDuration(now - started_) +
             " so far, timeout " + FormatDuration(policy_.timeout) + ")");
}

void WaitNarrator::WarnMissing(const WaitFacts& facts, TimePoint now) {
  std::string after = " after " + FormatDuration(now - started_);
  bool finding = !facts.finder_selector.empty();
  std::string none = "no pod named " + pod_name_ + " or labelled " +
                     facts.finder_selector + " in namespace " + policy_.ns;
  if (facts.api != nullptr) {
    // Not "is the name right?": nobody could say whether it exists.
    LogWarning(host_ + ": " +
               (finding ? none + " seen" : facts.pod_ref + " not seen") +
               after + ": " + facts.api->Describe(now) + "; still waiting");
    return;
  }
  LogWarning(host_ + ": " +
             (finding ? none + " exists" : facts.pod_ref + " does not exist") +
             " yet" + after + "; still waiting (is the name right?" +
             EmptyNamespaceHint(facts) + ")");
}

std::string WaitNarrator::EmptyNamespaceHint(const WaitFacts& facts) const {
  if (!facts.namespace_empty) return "";
  if (!policy_.label_selector.empty()) {
    return " no pod in namespace " + policy_.ns + " matches --selector " +
           policy_.label_selector + ": are the namespace and selector right?";
  }
  return " namespace " + policy_.ns +
         " holds no pods at all: is the namespace right? see --namespace";
}

std::string WaitNarrator::Describe(const WaitFacts& facts,
                                   TimePoint now) const {
  if (facts.resolving && !facts.answered && facts.api == nullptr) {
    // The request is in flight: say so, rather than a state of the pod.
    return "no answer yet from the API server (" +
           FormatDuration(now - started_) + ")";
  }
  std::string s = summary_ + " for " + FormatDuration(now - summary_since_);
  if (facts.ssh_failures > 0) {
    s += "; ssh failed " + std::to_string(facts.ssh_failures) +
         " time(s), last: " + facts.ssh_last_error;
  }
  // What the pod "is" comes from a snapshot the API server can no longer
  // update: lead with the outage, so nobody debugs a healthy pod.
  if (facts.api != nullptr) {
    return facts.api->Describe(now) + (facts.resolving
                                           ? "; the pod was not read yet"
                                           : "; last known: " + s);
  }
  return s;
}

Status WaitNarrator::TimedOut(const WaitFacts& facts, const std::string& server,
                              const std::string& pod, TimePoint now) const {
  std::string remedy =
      facts.api != nullptr
          ? "check that the API server " + server +
                " is up and reachable from here, or raise --timeout"
          : "raise --timeout, or see kubectl describe pod -n " + policy_.ns +
                " " + pod;
  return DeadlineExceededError(
      "timed out after " + FormatDuration(policy_.timeout) + " waiting for " +
      facts.pod_ref + ": " + Describe(facts, now) + " (" + remedy + ")");
}

}  // namespace k8s_agent
