// SPDX-License-Identifier: Apache-2.0
// PickTarget and the pod verdicts; see pod_target.h.

#include "plugin/agent/pod_target.h"

#include <algorithm>

namespace k8s_agent {
namespace {

bool MatchesHost(const HostName& host, const kube::Pod& p) {
  if (host.kind == HostName::Kind::kIp) {
    return p.pod_ip == host.ip || std::find(p.pod_ips.begin(), p.pod_ips.end(),
                                            host.ip) != p.pod_ips.end();
  }
  return p.hostname == host.pod_name &&
         (host.subdomain.empty() || p.subdomain == host.subdomain);
}

bool IsFatalWait(const kube::ContainerStatus& c,
                 const std::vector<std::string>& fatal_reasons) {
  return !c.waiting_reason.empty() &&
         std::find(fatal_reasons.begin(), fatal_reasons.end(),
                   c.waiting_reason) != fatal_reasons.end();
}

// "init container fetch", "sidecar container log-shipper", "container main".
std::string ContainerKind(const kube::ContainerStatus& c) {
  if (c.sidecar) return "sidecar container ";
  return c.init ? "init container " : "container ";
}

}  // namespace

std::string UnfinishedInit(const kube::Pod& pod) {
  // Initialized=True (or Running) is the kubelet's own word that they are
  // done; a crash-looping sidecar of such a pod is not "started" but was.
  if (pod.true_since.count("Initialized") > 0 || pod.phase != "Pending") {
    return "";
  }
  for (const kube::ContainerStatus& c : pod.containers) {
    if (!c.init) continue;
    bool done = c.sidecar ? c.started || !c.started_at.empty()
                          : c.waiting_reason.empty() && c.started_at.empty() &&
                                c.terminated_reason == "Completed";
    if (!done) return ContainerKind(c) + c.name;
  }
  return "";
}

bool IsTerminal(const kube::Pod& pod) {
  return pod.phase == "Failed" || pod.phase == "Succeeded";
}

bool IsLive(const kube::Pod& pod) { return !IsTerminal(pod) && !pod.deleting; }

std::string TerminalDetail(const kube::Pod& pod) {
  std::string detail;
  if (!pod.reason.empty()) detail += ": " + pod.reason;
  if (!pod.message.empty()) detail += ": " + pod.message;
  for (const kube::ContainerStatus& c : pod.containers) {
    if (!c.terminated_reason.empty()) {
      detail += "; container " + c.name + " " + c.terminated_reason +
                " (exit code " + std::to_string(c.terminated_exit_code) + ")";
    }
  }
  return detail;
}

std::string PodSummary(const kube::Pod& pod) {
  std::string s = kube::PhaseSummary(pod);
  if (std::string init = UnfinishedInit(pod); !init.empty()) {
    s += " (" + init + " not finished)";
  }
  if (pod.phase == "Running") {
    s += pod.pod_ip.empty() ? " without an IP" : " at " + pod.pod_ip;
  }
  if (pod.deleting) s += " (terminating)";
  return s;
}

std::vector<std::string> PodAddresses(const kube::Pod& pod) {
  if (!pod.pod_ips.empty()) return pod.pod_ips;
  if (pod.pod_ip.empty()) return {};
  return {pod.pod_ip};
}

TargetPick PickTarget(const HostName& host, const std::vector<kube::Pod>& pods,
                      const std::string& skip_uid) {
  TargetPick pick;
  for (const kube::Pod& p : pods) {
    if (!MatchesHost(host, p)) continue;
    if (!skip_uid.empty() && p.uid == skip_uid) {
      pick.skipped = true;
      continue;
    }
    (IsLive(p) ? pick.live : pick.passed_over).push_back(&p);
  }
  // RFC 3339 in UTC as the API server writes it ("2026-12-01T10:00:00Z")
  // sorts as text. Within one second the list's order stands: either pod
  // names the same controller, which is all the newest is asked for.
  std::stable_sort(pick.passed_over.begin(), pick.passed_over.end(),
                   [](const kube::Pod* a, const kube::Pod* b) {
                     return a->creation_timestamp > b->creation_timestamp;
                   });
  return pick;
}

Status FatalPodState(const kube::Pod& pod, const std::string& ref,
                     const std::string& ns,
                     const std::vector<std::string>& fatal_reasons) {
  std::string where = ref + " is " + pod.phase;
  if (IsTerminal(pod)) {
    return FailedPreconditionError(
        where + TerminalDetail(pod) +
        " (it will never run the command; see kubectl describe pod -n " + ns +
        " " + pod.name + ")");
  }
  for (const kube::ContainerStatus& c : pod.containers) {
    if (!IsFatalWait(c, fatal_reasons)) continue;
    std::string remedy = "see kubectl describe pod -n " + ns + " " + pod.name;
    if (c.waiting_reason == "ImagePullBackOff" ||
        c.waiting_reason == "ErrImagePull" ||
        c.waiting_reason == "InvalidImageName") {
      remedy = "check the image name and pull secrets; " + remedy;
    } else if (c.waiting_reason == "ErrImageNeverPull") {
      remedy =
          "load the image onto the node, or drop imagePullPolicy: Never; " +
          remedy;
    }
    // A crash loop's cause is the last exit; kubelet keeps it in
    // lastState, which kubectl describe shows only further down.
    std::string last_exit;
    if (c.waiting_reason == "CrashLoopBackOff" &&
        !c.terminated_reason.empty()) {
      last_exit = "; it last exited with code " +
                  std::to_string(c.terminated_exit_code) + " (" +
                  c.terminated_reason + ")";
    }
    return FailedPreconditionError(
        where + ": " + ContainerKind(c) + c.name +
        " is waiting: " + c.waiting_reason +
        (c.waiting_message.empty() ? "" : ": " + c.waiting_message) +
        last_exit + " (" + remedy + ", or change --fail-on-reasons)");
  }
  return OkStatus();
}

std::string FatalUnlessSshAnswers(
    const kube::Pod& pod, const std::vector<std::string>& fatal_reasons) {
  if (pod.phase != "Running" || pod.pod_ip.empty() || pod.deleting) return "";
  std::string failing;
  bool another = false;  // A container not in a fatal wait: maybe sshd's.
  for (const kube::ContainerStatus& c : pod.containers) {
    // Running: the regular init containers are done. A native sidecar runs
    // beside the main containers, as a classic sidecar does: sshd is not
    // in it, but its crash loop need not stop a launch either.
    if (c.init && !c.sidecar) continue;
    if (!IsFatalWait(c, fatal_reasons)) {
      another = true;  // sshd may run in a sidecar, too.
    } else if (failing.empty()) {
      failing = ContainerKind(c) + c.name + " is waiting: " + c.waiting_reason;
    }
  }
  return another ? failing : "";
}

}  // namespace k8s_agent
