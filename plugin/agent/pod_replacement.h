// SPDX-License-Identifier: Apache-2.0
// The one policy for a pod that went: whether to wait for its replacement,
// for how long, and what to say meanwhile and when none came.

#ifndef K8S_AGENT_PLUGIN_AGENT_POD_REPLACEMENT_H_
#define K8S_AGENT_PLUGIN_AGENT_POD_REPLACEMENT_H_

#include <string>

#include "plugin/agent/host_name.h"
#include "plugin/agent/wait_policy.h"
#include "plugin/base/clock.h"
#include "plugin/base/status.h"
#include "plugin/kube/pod.h"

namespace k8s_agent {

/// A pod HOST resolved to went: deleted, being deleted, or ended where its
/// controller retries (a Job's index).
///
///   no controller                 an error at once: nothing recreates it
///   terminating                   wait (no clock yet): a Job makes the
///                                 replacement beside it, a StatefulSet
///                                 once it is gone; said once at -v
///   deleted or ended              wait replacement_grace from the first
///                                 sight, said once at -v; then NotReplaced
///   a pod seen again (Saw)        the wait is over
///
/// Its owner (PodResolver) decides where the replacement is looked for;
/// this says only whether and how long, and the words.
class PodReplacement {
 public:
  /// Where the replacement is looked for, for the words of note().
  enum class Where { kListAgain, kLabelledWatch, kNameWatch };

  PodReplacement(const HostName& host, const WaitPolicy& policy);

  /// The followed pod's latest snapshot: its controller is what a
  /// departure is judged by, and seeing it ends a wait.
  void Saw(const kube::Pod& pod);
  /// The pod `ref` ("pod ns/name") went: `last` its final snapshot
  /// (terminal, or being deleted), nullptr when it was deleted. An error
  /// when no controller owns it; ok while a replacement is awaited.
  Status Went(const kube::Pod* last, const std::string& ref, TimePoint now);
  /// The pod that went is still being deleted (no grace runs yet).
  bool terminating() const { return terminating_; }
  /// The uid of the pod seen last: a lagging cache may still list it.
  const std::string& last_uid() const { return last_uid_; }

  /// When replacement_grace ends; max while none runs.
  TimePoint due() const;
  /// due() has passed: why the host fails, naming the controller.
  Status NotReplaced(const std::string& ref) const;
  /// What is awaited, for the waiter's state line.
  std::string Note(Where where) const;
  /// No more waiting (the host is ready or failed).
  void Stop() { gone_at_ = TimePoint::max(); }

 private:
  Status BarePodGone(const std::string& ref, const std::string& what) const;

  std::string host_;      // As given, to prefix the log line.
  std::string hostname_;  // HOST's first label: the replacement's hostname.
  WaitPolicy policy_;
  std::string controller_;  // Of the latest snapshot seen.
  std::string last_uid_;
  TimePoint gone_at_ = TimePoint::max();
  std::string ended_how_;             // "Failed: Error; ...", "" if deleted.
  bool terminating_ = false;          // Being deleted, not ended.
  std::string said_terminating_uid_;  // The pod the -v line named.
};

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_AGENT_POD_REPLACEMENT_H_
