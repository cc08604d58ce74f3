// SPDX-License-Identifier: Apache-2.0
// What a person is told while one host waits: the state at -v, progress
// lines, the warning that the pod does not show, and the timeout's story.

#ifndef K8S_AGENT_PLUGIN_AGENT_WAIT_NARRATOR_H_
#define K8S_AGENT_PLUGIN_AGENT_WAIT_NARRATOR_H_

#include <string>

#include "plugin/agent/host_name.h"
#include "plugin/agent/wait_policy.h"
#include "plugin/base/clock.h"
#include "plugin/base/status.h"
#include "plugin/kube/api_health.h"

namespace k8s_agent {

/// What the waiter knows when a line is due. The narrator keeps no pointer
/// into the waiter: it is told, and decides only what to say and when.
struct WaitFacts {
  std::string pod_ref;  ///< "pod ns/w-0".
  /// HOST is not resolved to a pod (yet, or again after it went).
  bool resolving = false;
  bool answered = false;  ///< A lookup of HOST has come back.
  /// The API tracker with failures (the lookup's or a watch's), or nullptr.
  const kube::ApiHealth* api = nullptr;
  int ssh_failures = 0;
  std::string ssh_last_error;
  /// The labels watched for HOST (a Job's hostname), or "".
  std::string finder_selector;
  /// The namespace-wide lookup found no pod at all.
  bool namespace_empty = false;
};

/// Says, at most every progress_every, what the wait is stuck on; warns
/// once when the pod has not shown for not_found_grace; writes the final
/// message on timeout. Each line leads with an API outage when there is
/// one, so nobody debugs a healthy pod behind a dead API server.
class WaitNarrator {
 public:
  WaitNarrator(const HostName& host, const WaitPolicy& policy);

  void Start(TimePoint now);
  TimePoint started() const { return started_; }

  /// The state in a few words ("Pending: ContainerCreating"); logged at -v
  /// when it changes, and the timeout names the last one.
  void Note(const std::string& summary, const std::string& pod_ref,
            TimePoint now);
  /// Whether the pod is known not to exist (yet); the warning about it
  /// comes once, not_found_grace after this first became true.
  void SetMissing(bool missing, TimePoint now);

  /// The next progress line or the missing warning.
  TimePoint NextWake() const;
  /// Writes what is due of those two.
  void OnTimer(const WaitFacts& facts, TimePoint now);

  /// "Pending: ContainerCreating for 4.0s; ssh failed 2 time(s), ...".
  std::string Describe(const WaitFacts& facts, TimePoint now) const;
  /// The final message when --timeout passed: the last state and what to
  /// check. `server` is the API server's URL, `pod` the name kubectl takes.
  Status TimedOut(const WaitFacts& facts, const std::string& server,
                  const std::string& pod, TimePoint now) const;

 private:
  void WarnMissing(const WaitFacts& facts, TimePoint now);
  // " namespace ns holds no pods at all: ..." or "".
  std::string EmptyNamespaceHint(const WaitFacts& facts) const;

  std::string host_;      // As given, to prefix each line.
  std::string pod_name_;  // HOST's first label, as a hostname.
  WaitPolicy policy_;
  TimePoint started_{};
  std::string summary_;
  TimePoint summary_since_{};
  TimePoint next_progress_ = TimePoint::max();
  TimePoint missing_since_ = TimePoint::max();
  bool said_missing_ = false;
};

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_AGENT_WAIT_NARRATOR_H_
