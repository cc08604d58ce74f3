// SPDX-License-Identifier: Apache-2.0
// Where each kind keeps its pod templates, and which role each plays.
//
// Role rule (a template's annotation k8s-agent/role: launcher | worker |
// none overrides it; on a Pod, Job or StatefulSet the object's own
// annotation counts too):
//   Pod, batch Job                    launcher
//   StatefulSet                       worker
//   MPIJob (kubeflow.org)             mpiReplicaSpecs.Launcher / .Worker
//   JobSet, (Cluster)TrainingRuntime  replicatedJobs[]: "launcher*" is the
//                                     launcher, "*initializer*" (Trainer's
//                                     dataset/model initializers) none,
//                                     any other name (node, worker) worker
//   LeaderWorkerSet                   leaderTemplate launcher,
//                                     workerTemplate worker
//   TrainJob                          none: it has no pod template; its
//                                     runtime is injected instead (warned)

#ifndef K8S_AGENT_PLUGIN_INJECT_WORKLOADS_H_
#define K8S_AGENT_PLUGIN_INJECT_WORKLOADS_H_

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "plugin/inject/pod_injector.h"

namespace k8s_agent::inject {

struct PodTemplateRef {
  YAML::Node node;
  TemplateSpec spec;
  /// A Job's or Pod's launcher, whose workers' labels are only known from
  /// another object of the input (a StatefulSet's selector).
  bool plain_launcher = false;
};

struct Workload {
  /// A kind the injector knows: one with pod templates, or one that holds
  /// none (Service, ConfigMap, RBAC, ...). Unknown kinds pass through with
  /// a warning.
  bool known = false;
  std::vector<PodTemplateRef> templates;
  std::vector<std::string> warnings;
  /// A StatefulSet of workers: its matchLabels as a label selector.
  std::string worker_selector;
};

/// The templates of `object` (a Kubernetes object, not a List).
Workload FindWorkload(const YAML::Node& object, const AgentSettings& settings);

}  // namespace k8s_agent::inject

#endif  // K8S_AGENT_PLUGIN_INJECT_WORKLOADS_H_
