// SPDX-License-Identifier: Apache-2.0
// How one host's wait behaves: where to look, how long each stage may take,
// what to accept. Shared by the waiter, its resolver and its narrator.

#ifndef K8S_AGENT_PLUGIN_AGENT_WAIT_POLICY_H_
#define K8S_AGENT_PLUGIN_AGENT_WAIT_POLICY_H_

#include <string>
#include <vector>

#include "plugin/agent/fatal_reasons.h"
#include "plugin/base/clock.h"
#include "plugin/kube/pod_watcher.h"
#include "plugin/ssh/ssh_options.h"

namespace k8s_agent {

struct WaitPolicy {
  std::string ns;              ///< Namespace to look in.
  std::string label_selector;  ///< --selector: narrows hostname/IP lookups.
  Duration timeout = std::chrono::minutes(10);  ///< The whole wait.
  /// The wait while the API server has never answered this agent: a dead
  /// or wrong server fails in seconds, as kubectl does, not after
  /// `timeout`.
  Duration api_first_answer_timeout = std::chrono::seconds(30);
  /// See PodWatcher::set_watch_idle_timeout.
  Duration watch_idle_timeout = kube::PodWatcher::kDefaultWatchIdleTimeout;
  bool require_ready = false;  ///< --wait-for ready: also condition Ready.
  std::vector<std::string> fatal_reasons = DefaultFatalReasons();
  /// This host's ssh settings (port, user, keys, host key alias).
  ssh::ResolvedSshOptions ssh;
  /// Say once that the pod does not exist after this long: a typo in a
  /// hostfile otherwise looks exactly like a slow scheduler.
  Duration not_found_grace = std::chrono::seconds(10);
  /// A probe that started from a GET alone (no watch yet, to keep a ready
  /// host at one API call) starts the watch after this long: a handshake
  /// takes tens of milliseconds, while a hung one (a silent listener at
  /// the pod IP) could otherwise hide a new IP, Failed or a deletion until
  /// ConnectTimeout.
  Duration probe_watch_after = std::chrono::seconds(1);
  /// A HOST of a Job's hostname grammar that no labelled pod answers yet
  /// may still be a pod name to come (a StatefulSet's pod created late), or
  /// the spec.hostname of a pod without the Job's labels (hand-written, a
  /// Job before Kubernetes 1.28): after this long, watch that name too and
  /// LIST the namespace once for the hostname. The watch cache answers a
  /// label-selected watch with the pods it holds at once, so an existing
  /// Job pod is found well before and neither request is made.
  Duration name_watch_after = std::chrono::seconds(1);
  /// A deleted pod that its controller (a StatefulSet, a Job) does not
  /// recreate within this long is gone. A pod no controller owns fails as
  /// soon as its deletion shows.
  Duration replacement_grace = std::chrono::seconds(30);
  /// A Running pod with one container in a fatal wait (a sidecar in
  /// CrashLoopBackOff) and another running may still have a working sshd:
  /// it fails only when SSH has not answered for this long. sshd in a
  /// container that just started answers within a second or two.
  Duration fatal_probe_grace = std::chrono::seconds(10);
  /// First progress line after this long, then at most every
  /// `progress_every`: enough to see a stuck launch, never a flood from
  /// 128 agents.
  Duration progress_after = std::chrono::seconds(5);
  Duration progress_every = std::chrono::seconds(30);
};

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_AGENT_WAIT_POLICY_H_
