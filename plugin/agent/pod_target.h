// SPDX-License-Identifier: Apache-2.0
// Which pod a HOST means when several answer to it, and what a pod's state
// says about running a command there: one rule for the waiter and the
// hostfile.

#ifndef K8S_AGENT_PLUGIN_AGENT_POD_TARGET_H_
#define K8S_AGENT_PLUGIN_AGENT_POD_TARGET_H_

#include <string>
#include <vector>

#include "plugin/agent/host_name.h"
#include "plugin/base/status.h"
#include "plugin/kube/pod.h"

namespace k8s_agent {

/// Failed or Succeeded: the phase is final (restartPolicy no longer
/// applies), so the pod will never run a command again.
bool IsTerminal(const kube::Pod& pod);

/// "init container fetch" (or "sidecar container log-shipper"): the first
/// init container a Pending, not yet Initialized pod still waits on before
/// its main containers start; "" when none. A regular one is done when it
/// Completed; a native sidecar (restartPolicy Always) once it runs or has
/// started: it keeps running for the pod's life (Kubernetes 1.33:
/// Initialized turns True once each sidecar has started).
std::string UnfinishedInit(const kube::Pod& pod);

/// Could still run a command: neither terminal nor being deleted.
bool IsLive(const kube::Pod& pod);

/// ": Evicted: low on memory; container main Error (exit code 1)": why a
/// terminal pod ended, to follow "is Failed".
std::string TerminalDetail(const kube::Pod& pod);

/// "Pending: ContainerCreating" / "Running at 10.1.2.3" / "Failed: Evicted",
/// with " (init container fetch not finished)" while one is (see
/// UnfinishedInit) and " (terminating)" for a pod being deleted.
std::string PodSummary(const kube::Pod& pod);

/// The pod's IPs in the order to try them: status.podIPs (dual-stack: one
/// per family, podIP first), or podIP alone when the list is absent.
std::vector<std::string> PodAddresses(const kube::Pod& pod);

/// Among the pods answering to HOST (by spec.hostname, and spec.subdomain
/// when HOST names one; or by IP), live pods win: an Indexed Job (JobSet,
/// Kubeflow Trainer) keeps each attempt's Failed pod next to its
/// replacement under the same hostname, and an Evicted or Succeeded pod
/// keeps reporting an IP the node has since given to a Running pod.
struct TargetPick {
  /// Live matches in list order: one is the target, more are ambiguous.
  std::vector<const kube::Pod*> live;
  /// Terminal or deleting matches, newest (creationTimestamp) first: passed
  /// over while a live pod matches; otherwise the newest says whether a
  /// replacement may still come (its controller).
  std::vector<const kube::Pod*> passed_over;
  /// The pod of `skip_uid` still answers to HOST (still terminating, or a
  /// lagging cache): the pod that went is not gone yet.
  bool skipped = false;
};

/// Matches `pods` against `host`, leaving out `skip_uid` (a pod known to be
/// gone that a lagging watch cache still lists). The pointers are into
/// `pods`.
TargetPick PickTarget(const HostName& host, const std::vector<kube::Pod>& pods,
                      const std::string& skip_uid);

/// Why `pod` will never run the command (terminal, or a container waiting
/// for a reason in `fatal_reasons`), or ok. `ref` names the pod ("pod
/// ns/name") and `ns` is where kubectl should look.
Status FatalPodState(const kube::Pod& pod, const std::string& ref,
                     const std::string& ns,
                     const std::vector<std::string>& fatal_reasons);

/// "container sidecar is waiting: CrashLoopBackOff" when `pod` runs with
/// an IP and some but not all of its containers wait for a reason in
/// `fatal_reasons`; "" otherwise. A native sidecar (an init container with
/// restartPolicy Always) counts as a container that may fail here, never
/// as the one left running for sshd; a regular init container never
/// counts (a Running pod has finished them). Which container runs sshd is
/// unknown, so such a pod is fatal only if SSH does not answer either (the
/// waiter probes it for a grace); a pod with every container failing, or not
/// Running, fails as FatalPodState says.
std::string FatalUnlessSshAnswers(
    const kube::Pod& pod, const std::vector<std::string>& fatal_reasons);

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_AGENT_POD_TARGET_H_
