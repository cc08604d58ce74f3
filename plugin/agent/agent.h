// SPDX-License-Identifier: Apache-2.0
// Wires the pods client, the per-host waiters and the SSH session into one
// event loop: the whole life of one k8s-agent invocation.

#ifndef K8S_AGENT_PLUGIN_AGENT_AGENT_H_
#define K8S_AGENT_PLUGIN_AGENT_AGENT_H_

#include <string>
#include <vector>

#include "plugin/agent/agent_runtime.h"
#include "plugin/agent/fatal_reasons.h"
#include "plugin/base/status.h"

namespace k8s_agent {

/// What RunAgent is asked to do.
struct AgentConfig {
  RunSetup setup;
  /// One host to run `command` on, or (wait_only) every host to wait for.
  std::vector<std::string> hosts;
  std::string command;
  bool wait_only = false;
  bool require_ready = false;  ///< --wait-for ready.
  /// --fail-on-reasons: container waiting reasons that fail at once.
  std::vector<std::string> fatal_reasons = DefaultFatalReasons();
  std::string trace_file;
};

/// How a run ended, for the launcher to turn into an exit code.
struct AgentResult {
  /// The remote exit status (exec mode) or 0 (all hosts ready).
  int exit_code = 0;
  /// Non-empty when the remote command died of a signal ("TERM").
  std::string remote_signal;
  /// Non-zero when we stopped because we received this signal.
  int local_signal = 0;
};

/// Runs the agent: resolve and wait for the host(s), then exec. A non-ok
/// Status is the agent's own failure (exit 255); its message names the
/// stage, the reason and the remedy. The host is not repeated in it.
StatusOr<AgentResult> RunAgent(const AgentConfig& config);

/// Maps a signal name from SSH ("TERM") to its number, 0 if unknown.
int SignalNumber(const std::string& name);

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_AGENT_AGENT_H_
