// SPDX-License-Identifier: Apache-2.0
// What to poll the SSH socket for after libssh2 answered EAGAIN.

#ifndef K8S_AGENT_PLUGIN_SSH_BLOCK_DIRECTIONS_H_
#define K8S_AGENT_PLUGIN_SSH_BLOCK_DIRECTIONS_H_

#include <libssh2.h>
#include <poll.h>

namespace k8s_agent::ssh {

/// Poll events for libssh2_session_block_directions(): POLLIN, POLLOUT or
/// both. When libssh2 names no direction (an EAGAIN from a call that
/// buffered a partial packet, or from channel code that never touched the
/// socket) the answer is POLLIN, never 0: a socket polled for nothing
/// would only wake the loop on a timer, stalling the session until the
/// next keepalive or timeout; the peer's next bytes are the only thing
/// such a call can be waiting for, and a spurious wake costs one call.
inline short DirectionsToEvents(int dirs) {
  short ev = 0;
  if (dirs & LIBSSH2_SESSION_BLOCK_INBOUND) ev |= POLLIN;
  if (dirs & LIBSSH2_SESSION_BLOCK_OUTBOUND) ev |= POLLOUT;
  return ev == 0 ? short{POLLIN} : ev;
}

}  // namespace k8s_agent::ssh

#endif  // K8S_AGENT_PLUGIN_SSH_BLOCK_DIRECTIONS_H_
