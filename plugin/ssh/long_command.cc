// SPDX-License-Identifier: Apache-2.0
// PlanExec: the command in the exec request, or read from stdin.

#include "plugin/ssh/long_command.h"

namespace k8s_agent::ssh {

ExecPlan PlanExec(const std::string& command) {
  ExecPlan plan;
  if (command.size() <= kMaxExecRequestCommand) {
    plan.request = command;
    return plan;
  }
  // "; echo ." keeps trailing newlines that $(...) would strip; a dd that
  // fails (missing, short read) leaves no "." and is reported.
  plan.request =
      "k8s_agent_cmd=$(dd bs=1 count=" + std::to_string(command.size()) +
      " 2>/dev/null && echo .); case $k8s_agent_cmd in *.) eval "
      "\"${k8s_agent_cmd%.}\";; *) echo 'k8s-agent: the remote shell could "
      "not read the command from stdin (needs dd)' >&2; exit 255;; esac";
  plan.stdin_preamble = command;
  return plan;
}

}  // namespace k8s_agent::ssh
