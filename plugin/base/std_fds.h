// SPDX-License-Identifier: Apache-2.0
// Makes sure fds 0, 1 and 2 are open before the agent opens anything.

#ifndef K8S_AGENT_PLUGIN_BASE_STD_FDS_H_
#define K8S_AGENT_PLUGIN_BASE_STD_FDS_H_

#include "plugin/base/status.h"

namespace k8s_agent {

/// Opens /dev/null on each of fds 0-2 that is closed, as ssh does
/// (sanitise_stdfd). Started with `>&-`, the first fd the agent opens (a
/// trace file, the signalfd, a socket) would otherwise become "stdout":
/// remote output would land in it, or the loop would wait for POLLOUT on
/// its own signalfd forever. Call first thing in main.
Status EnsureStdFdsOpen();

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_BASE_STD_FDS_H_
