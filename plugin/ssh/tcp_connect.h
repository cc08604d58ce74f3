// SPDX-License-Identifier: Apache-2.0
// The non-blocking TCP connect under an SSH connection.

#ifndef K8S_AGENT_PLUGIN_SSH_TCP_CONNECT_H_
#define K8S_AGENT_PLUGIN_SSH_TCP_CONNECT_H_

#include <string>

#include "plugin/base/status.h"
#include "plugin/base/unique_fd.h"

namespace k8s_agent::ssh {

struct TcpAttempt {
  UniqueFd fd;
  /// connect()'s errno: 0 connected, EINPROGRESS pending (poll for
  /// POLLOUT, then TcpConnectError), anything else failed.
  int error = 0;
};

/// Starts connecting to `ip` (IPv4, IPv6, or [IPv6]) on `port` with a
/// non-blocking socket that has TCP_NODELAY and SO_KEEPALIVE. Not ok only
/// when `ip` is no address or no socket could be made (or bound to
/// `bind_address`, when one is given).
StatusOr<TcpAttempt> StartTcpConnect(const std::string& ip, int port,
                                     const std::string& bind_address = "");

/// "10.0.0.5:22", "[fd00:7::10]:22": an address and port as ssh writes
/// them, with an IPv6 address bracketed so the port stays readable.
std::string HostPort(const std::string& ip, int port);

/// The errno of a connect in progress on `fd` (SO_ERROR): 0 connected,
/// EINPROGRESS or EALREADY still pending.
int TcpConnectError(int fd);

}  // namespace k8s_agent::ssh

#endif  // K8S_AGENT_PLUGIN_SSH_TCP_CONNECT_H_
