// SPDX-License-Identifier: Apache-2.0
// The default of --fail-on-reasons, apart from the agent core so the option
// parser can name it without linking the pods client and the SSH transport.

#ifndef K8S_AGENT_PLUGIN_AGENT_FATAL_REASONS_H_
#define K8S_AGENT_PLUGIN_AGENT_FATAL_REASONS_H_

#include <string>
#include <vector>

namespace k8s_agent {

/// The container waiting reasons that mean "this pod will not start
/// without a human": the default for --fail-on-reasons. ErrImageNeverPull is
/// what kubelet reports for an image missing from the node under
/// imagePullPolicy: Never; kubelet retries it forever, but nothing changes
/// until someone loads the image.
inline std::vector<std::string> DefaultFatalReasons() {
  return {"ImagePullBackOff",
          "ErrImagePull",
          "ErrImageNeverPull",
          "InvalidImageName",
          "CreateContainerConfigError",
          "CreateContainerError",
          "CrashLoopBackOff"};
}

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_AGENT_FATAL_REASONS_H_
