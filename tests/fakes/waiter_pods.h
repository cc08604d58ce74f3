// SPDX-License-Identifier: Apache-2.0
// The pods and cluster the host-wait tests (HostWaiter, PodResolver) script
// their API server with.

#ifndef K8S_AGENT_TESTS_FAKES_WAITER_PODS_H_
#define K8S_AGENT_TESTS_FAKES_WAITER_PODS_H_

#include <string>
#include <vector>

#include "plugin/kube/cluster_config.h"
#include "tests/fakes/fake_pods.h"

namespace k8s_agent::waiter_pods {

// Most pods here wait for a StatefulSet "w": uid-1, Pending, no IP yet.
using PodSpec = kube::FakePod;
inline const PodSpec kDefaults = {.uid = "uid-1",
                                  .controller = "StatefulSet/w"};

inline std::string Event(const char* type, const PodSpec& p) {
  return kube::WatchEventLine(type, p, kDefaults);
}

inline std::string List(const std::vector<PodSpec>& pods,
                        const std::string& rv) {
  return kube::PodListJson(pods, rv, kDefaults);
}

// An Indexed Job's pods for index 0 of Job "job", as the Job controller
// names and labels them (Kubernetes 1.28+).
inline PodSpec JobPod(const std::string& name, PodSpec p = {}) {
  p.name = name;
  p.hostname = "job-0";
  p.controller = "Job/job";
  p.labels = {{"batch.kubernetes.io/job-name", "job"},
              {"batch.kubernetes.io/job-completion-index", "0"}};
  return p;
}

// The cluster the fake transport stands in for.
inline kube::ClusterConfig Cluster() {
  kube::ClusterConfig c;
  c.server = "https://10.96.0.1:443";
  c.ns = "default";
  c.token = "t";
  return c;
}

}  // namespace k8s_agent::waiter_pods

#endif  // K8S_AGENT_TESTS_FAKES_WAITER_PODS_H_
