// SPDX-License-Identifier: Apache-2.0
// Reading a kubeconfig user's `exec:` stanza.

#ifndef K8S_AGENT_PLUGIN_KUBE_KUBECONFIG_EXEC_H_
#define K8S_AGENT_PLUGIN_KUBE_KUBECONFIG_EXEC_H_

#include <string>

#include "plugin/base/status.h"
#include "plugin/kube/exec_credential.h"

namespace YAML {
class Node;
}  // namespace YAML

namespace k8s_agent::kube {

/// Validates `node` (the exec map) as client-go does: apiVersion v1 or v1beta1,
/// a command, interactiveMode required by v1 (v1beta1 defaults it to
/// IfAvailable), env as name/value pairs. `dir` is the kubeconfig file's
/// directory, against which a relative command with a slash resolves;
/// `where` names the file and user in errors.
StatusOr<ExecConfig> ParseExecStanza(const YAML::Node& node,
                                     const std::string& dir,
                                     const std::string& where);

}  // namespace k8s_agent::kube

#endif  // K8S_AGENT_PLUGIN_KUBE_KUBECONFIG_EXEC_H_
