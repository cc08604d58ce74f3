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

}  // namespace

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
    if (!skip_uid.empty() && p.uid == skip_uid) continue;
    if (!MatchesHost(host, p)) continue;
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
    return FailedPreconditionError(
        where + ": " + (c.init ? "init container " : "container ") + c.name +
        " is waiting: " + c.waiting_reason +
        (c.waiting_message.empty() ? "" : ": " + c.waiting_message) + " (" +
        remedy + ", or change --fail-on-reasons)");
  }
  return OkStatus();
}

std::string FatalUnlessSshAnswers(
    const kube::Pod& pod, const std::vector<std::string>& fatal_reasons) {
  if (pod.phase != "Running" || pod.pod_ip.empty() || pod.deleting) return "";
  std::string failing;
  bool another = false;  // A container not in a fatal wait: maybe sshd's.
  for (const kube::ContainerStatus& c : pod.containers) {
    if (c.init) continue;  // Running: the init containers are done.
    if (!IsFatalWait(c, fatal_reasons)) {
      another = true;
    } else if (failing.empty()) {
      failing = "container " + c.name + " is waiting: " + c.waiting_reason;
    }
  }
  return another ? failing : "";
}

}  // namespace k8s_agent
