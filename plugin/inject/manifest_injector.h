// SPDX-License-Identifier: Apache-2.0
// k8s-agent inject: manifests in, the same manifests out with what the
// agent needs added to every launcher and worker pod template
// (pod_injector.h says what, workloads.h where and which role).

#ifndef K8S_AGENT_PLUGIN_INJECT_MANIFEST_INJECTOR_H_
#define K8S_AGENT_PLUGIN_INJECT_MANIFEST_INJECTOR_H_

#include <string>
#include <vector>

#include "plugin/base/status.h"
#include "plugin/inject/pod_injector.h"

namespace k8s_agent::inject {

struct InjectOptions {
  AgentSettings agent;
  /// Also write the ServiceAccount, the pod-reading Role and its
  /// RoleBinding (images/k8s/{serviceaccount,role,rolebinding}.yaml),
  /// unless the input has them.
  bool rbac = false;
};

/// One input stream: its name for messages ("-" for stdin) and text.
struct Source {
  std::string name;
  std::string text;
};

struct InjectResult {
  /// Every input document (Lists' items in place), then any added ones,
  /// separated by "---".
  std::string yaml;
  /// One line each: "SOURCE: document N (Kind/name): what".
  std::vector<std::string> warnings;
};

/// Fails only on input that is not YAML or whose document is no object
/// (the error names the source, document and line).
StatusOr<InjectResult> InjectManifests(const std::vector<Source>& sources,
                                       const InjectOptions& options);

}  // namespace k8s_agent::inject

#endif  // K8S_AGENT_PLUGIN_INJECT_MANIFEST_INJECTOR_H_
