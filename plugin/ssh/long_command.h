// SPDX-License-Identifier: Apache-2.0
// Commands longer than one libssh2 packet: a short exec request that reads
// the real command from the channel's stdin.

#ifndef K8S_AGENT_PLUGIN_SSH_LONG_COMMAND_H_
#define K8S_AGENT_PLUGIN_SSH_LONG_COMMAND_H_

#include <cstddef>
#include <string>

namespace k8s_agent::ssh {

/// The longest command an exec request can carry. libssh2 (1.10.0 and
/// 1.11.1 alike: transport.c) refuses to send a packet whose payload is
/// MAX_SSH_PACKET_LEN - 256 = 34744 bytes or more ("Unable to send channel
/// request"); an exec request adds 18 bytes (type, channel, "exec", flag,
/// length). ssh sends up to 256 KiB, so longer commands are sent as data.
constexpr size_t kMaxExecRequestCommand = 34744 - 18 - 1;

/// What to send for one command.
struct ExecPlan {
  /// The exec request's command.
  std::string request;
  /// Bytes to write to the channel's stdin before anything of ours: the
  /// real command, when it does not fit in `request`.
  std::string stdin_preamble;
};

/// A command that fits goes as is. A longer one becomes a short POSIX sh
/// request, run by the remote login shell as any command is, that reads
/// exactly the command's length from stdin with dd (one byte per read, so
/// it never consumes the stdin that follows, which the command still
/// gets) and evals it: the same shell, the same parsing, the same exit
/// status. Needs dd and a POSIX login shell on the pod.
ExecPlan PlanExec(const std::string& command);

}  // namespace k8s_agent::ssh

#endif  // K8S_AGENT_PLUGIN_SSH_LONG_COMMAND_H_
