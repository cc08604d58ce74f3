// SPDX-License-Identifier: Apache-2.0
// Public-key authentication on a libssh2 session whose host key is
// accepted: each IdentityFile in turn, as ssh does, without blocking.

#ifndef K8S_AGENT_PLUGIN_SSH_PUBLICKEY_AUTH_H_
#define K8S_AGENT_PLUGIN_SSH_PUBLICKEY_AUTH_H_

#include <libssh2.h>

#include <optional>
#include <string>
#include <vector>

#include "plugin/base/status.h"
#include "plugin/ssh/handshake_diagnosis.h"
#include "plugin/ssh/socket_fate.h"
#include "plugin/ssh/ssh_options.h"

namespace k8s_agent::ssh {

/// The auth step of one connection. It reads the connection's socket fate
/// and the server's disconnect message (which the connection's libssh2
/// callbacks fill) to tell a refused key from a connection that ended.
class PublicKeyAuth {
 public:
  /// Every pointer must outlive this object (the connection owns them).
  PublicKeyAuth(const ResolvedSshOptions* options, const std::string* ip,
                int port, const SocketFate* fate,
                const std::optional<ServerDisconnect>* disconnect)
      : options_(options),
        ip_(ip),
        port_(port),
        fate_(fate),
        disconnect_(disconnect) {}

  /// Tries keys until one is accepted (true), libssh2 must wait for the
  /// socket (false; `*wait_events` says for what), or none is left (the
  /// error, to hand to the connection's Fail()).
  StatusOr<bool> Step(LIBSSH2_SESSION* session, short* wait_events);

  /// Keys the server refused so far.
  int rejected() const { return rejected_; }

 private:
  const ResolvedSshOptions* options_;
  const std::string* ip_;
  int port_;
  const SocketFate* fate_;
  const std::optional<ServerDisconnect>* disconnect_;

  size_t identity_index_ = 0;
  size_t inspected_ = 0;  // Keys before this index were inspected.
  std::vector<std::string> tried_;
  int rejected_ = 0;
};

}  // namespace k8s_agent::ssh

#endif  // K8S_AGENT_PLUGIN_SSH_PUBLICKEY_AUTH_H_
