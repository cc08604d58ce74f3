// SPDX-License-Identifier: Apache-2.0
// Keeps the private key and the bearer token out of core files.

#ifndef K8S_AGENT_PLUGIN_BASE_CORE_DUMPS_H_
#define K8S_AGENT_PLUGIN_BASE_CORE_DUMPS_H_

#include "plugin/base/status.h"

namespace k8s_agent {

/// Sets RLIMIT_CORE to 0 (soft and hard, as ssh-agent does) and makes the
/// process non-dumpable (PR_SET_DUMPABLE 0, as ssh does): no core file on
/// a crash or SIGQUIT, even under `ulimit -c unlimited` or a core_pattern
/// pipe, and no ptrace or /proc/PID/mem by other processes of the same
/// user. The agent holds both secrets in memory. Call first thing in main.
Status DisableCoreDumps();

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_BASE_CORE_DUMPS_H_
