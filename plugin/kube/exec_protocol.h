// SPDX-License-Identifier: Apache-2.0
// The ExecCredential protocol's data: the input a credential plugin gets
// (KUBERNETES_EXEC_INFO) and the answer it prints, as client-go reads it.

#ifndef K8S_AGENT_PLUGIN_KUBE_EXEC_PROTOCOL_H_
#define K8S_AGENT_PLUGIN_KUBE_EXEC_PROTOCOL_H_

#include <string>
#include <string_view>

#include "plugin/base/status.h"
#include "plugin/kube/exec_credential.h"

namespace k8s_agent::kube {

/// The KUBERNETES_EXEC_INFO value: apiVersion, kind ExecCredential,
/// spec.interactive false (the agent never has a terminal), spec.cluster
/// only when provideClusterInfo.
std::string ExecInfoJson(const ExecConfig& exec, const ExecClusterInfo& info);

/// Parses a plugin's stdout. Its apiVersion must be the one requested and
/// its kind ExecCredential, as client-go requires; a token or a client
/// certificate with its key must be present. `plugin` names it in errors.
StatusOr<ExecCredential> ParseExecCredential(std::string_view text,
                                             const std::string& api_version,
                                             const std::string& plugin);

}  // namespace k8s_agent::kube

#endif  // K8S_AGENT_PLUGIN_KUBE_EXEC_PROTOCOL_H_
