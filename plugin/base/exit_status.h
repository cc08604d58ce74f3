// SPDX-License-Identifier: Apache-2.0
// The exit status every k8s-agent binary gives for its own failures.

#ifndef K8S_AGENT_PLUGIN_BASE_EXIT_STATUS_H_
#define K8S_AGENT_PLUGIN_BASE_EXIT_STATUS_H_

namespace k8s_agent {

/// ssh(1) "exits with the exit status of the remote command or with 255 if
/// an error occurred"; Open MPI treats any non-zero as a failed daemon, and
/// scripts tell the agent's own failure from the remote command's by 255.
/// k8s-agent-sshd, -inject and report use it too, so one number means one
/// thing across the release.
inline constexpr int kFailureExit = 255;

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_BASE_EXIT_STATUS_H_
