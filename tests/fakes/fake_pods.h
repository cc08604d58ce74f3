// SPDX-License-Identifier: Apache-2.0
// Pods, lists and watch events as the API server sends them, for the tests
// that script FakeHttpTransport's answers. One builder for every suite; each
// suite names its own defaults (a waiting StatefulSet pod, a listed worker).

#ifndef K8S_AGENT_TESTS_FAKES_FAKE_PODS_H_
#define K8S_AGENT_TESTS_FAKES_FAKE_PODS_H_

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "plugin/base/strings.h"
#include "plugin/kube/http.h"

namespace k8s_agent::kube {

// A pod's fields the tests vary. The optional ones fall back to the suite's
// defaults (PodJson's second argument), so a suite's pods differ from them
// only where a test says so; set to "" they are absent.
struct FakePod {
  std::string name = "w-0";
  std::optional<std::string> phase;  // Default: Pending.
  std::optional<std::string> ip;     // status.podIP(s); default none.
  std::optional<std::string> uid;    // Default: "uid-<name>".
  std::string rv = "10";
  std::string waiting;  // Container waiting reason.
  std::string hostname;
  std::string subdomain;  // spec.subdomain.
  bool ready = false;
  std::string unschedulable;  // PodScheduled=False's message.
  /// The controller ownerReference ("Kind/name"); default none (bare pod).
  std::optional<std::string> controller;
  bool deleting = false;
  std::string gpus;  // resources.limits["nvidia.com/gpu"] when set.
  std::map<std::string, std::string> labels;
  std::string reason;      // status.reason, e.g. "Evicted".
  std::string terminated;  // state.terminated reason; exit code 1, or 0
                           // for "Completed".
  std::string created;     // metadata.creationTimestamp.
};

inline nlohmann::json PodJson(const FakePod& p, const FakePod& defaults = {}) {
  auto pick = [](const std::optional<std::string>& v,
                 const std::optional<std::string>& d, const std::string& dflt) {
    return v ? *v : d ? *d : dflt;
  };
  const std::string phase = pick(p.phase, defaults.phase, "Pending");
  const std::string ip = pick(p.ip, defaults.ip, "");
  const std::string uid = pick(p.uid, defaults.uid, "uid-" + p.name);
  const std::string controller = pick(p.controller, defaults.controller, "");
  nlohmann::json container = {{"name", "main"}};
  if (!p.gpus.empty()) {
    container["resources"] = {{"limits", {{"nvidia.com/gpu", p.gpus}}}};
  }
  nlohmann::json pod = {{"apiVersion", "v1"},
                        {"kind", "Pod"},
                        {"metadata",
                         {{"name", p.name},
                          {"namespace", "default"},
                          {"uid", uid},
                          {"resourceVersion", p.rv}}},
                        {"spec", {{"containers", {container}}}},
                        {"status", {{"phase", phase}}}};
  const auto& labels = p.labels.empty() ? defaults.labels : p.labels;
  if (!labels.empty()) pod["metadata"]["labels"] = labels;
  if (!p.hostname.empty()) pod["spec"]["hostname"] = p.hostname;
  if (!p.subdomain.empty()) pod["spec"]["subdomain"] = p.subdomain;
  if (!p.created.empty()) pod["metadata"]["creationTimestamp"] = p.created;
  if (!p.reason.empty()) pod["status"]["reason"] = p.reason;
  if (!controller.empty()) {
    size_t slash = controller.find('/');
    pod["metadata"]["ownerReferences"] = {
        {{"apiVersion", "apps/v1"},
         {"kind", controller.substr(0, slash)},
         {"name", controller.substr(slash + 1)},
         {"uid", "owner-uid"},
         {"controller", true}}};
  }
  if (p.deleting) {
    pod["metadata"]["deletionTimestamp"] = "2026-12-01T10:00:00Z";
    pod["metadata"]["deletionGracePeriodSeconds"] = 30;
  }
  if (!ip.empty()) {
    pod["status"]["podIP"] = ip;
    pod["status"]["podIPs"] = {{{"ip", ip}}};
  }
  nlohmann::json cs = {{"name", "main"},
                       {"ready", p.ready},
                       {"restartCount", 0},
                       {"image", "x"},
                       {"imageID", "x"}};
  if (!p.waiting.empty()) {
    cs["state"] = {{"waiting", {{"reason", p.waiting}, {"message", "boom"}}}};
  }
  if (!p.terminated.empty()) {
    cs["state"] = {{"terminated",
                    {{"reason", p.terminated},
                     {"exitCode", p.terminated == "Completed" ? 0 : 1}}}};
  }
  pod["status"]["containerStatuses"] = {cs};
  pod["status"]["conditions"] = {
      {{"type", "Ready"}, {"status", p.ready ? "True" : "False"}}};
  if (!p.unschedulable.empty()) {
    pod["status"]["conditions"].push_back({{"type", "PodScheduled"},
                                           {"status", "False"},
                                           {"reason", "Unschedulable"},
                                           {"message", p.unschedulable}});
  }
  return pod;
}

// A PodList body at resourceVersion `rv`.
inline std::string PodListJson(const std::vector<FakePod>& pods,
                               const std::string& rv,
                               const FakePod& defaults = {}) {
  nlohmann::json items = nlohmann::json::array();
  for (const FakePod& p : pods) items.push_back(PodJson(p, defaults));
  return nlohmann::json({{"kind", "PodList"},
                         {"metadata", {{"resourceVersion", rv}}},
                         {"items", items}})
      .dump();
}

// One line of a watch stream: `type` is ADDED, MODIFIED or DELETED.
inline std::string WatchEventLine(const char* type, const FakePod& p,
                                  const FakePod& defaults = {}) {
  return nlohmann::json({{"type", type}, {"object", PodJson(p, defaults)}})
             .dump() +
         "\n";
}

// The value of `key` in the request's query, "" when absent.
inline std::string QueryParam(const HttpRequest& r, const std::string& key) {
  size_t q = r.path.find('?');
  if (q == std::string::npos) return "";
  for (const std::string& kv : Split(r.path.substr(q + 1), '&')) {
    if (StartsWith(kv, key + "=")) return kv.substr(key.size() + 1);
  }
  return "";
}

}  // namespace k8s_agent::kube

#endif  // K8S_AGENT_TESTS_FAKES_FAKE_PODS_H_
