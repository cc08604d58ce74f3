// SPDX-License-Identifier: Apache-2.0
// RAII owners for libssh2 handles and the one-time library init.

#ifndef K8S_AGENT_PLUGIN_SSH_LIBSSH2_HANDLES_H_
#define K8S_AGENT_PLUGIN_SSH_LIBSSH2_HANDLES_H_

#include <libssh2.h>

#include <memory>
#include <string>

namespace k8s_agent::ssh {

/// Calls libssh2_init once per process (thread-safe static); returns its
/// result. libssh2_exit is left to process exit: sessions may outlive any
/// scope we could pick.
inline int EnsureLibssh2Init() {
  static const int rc = libssh2_init(0);
  return rc;
}

/// Frees a session without talking to the peer. The graceful disconnect
/// is done by the owner before releasing (it needs blocking mode).
struct SessionDeleter {
  void operator()(LIBSSH2_SESSION* s) const { libssh2_session_free(s); }
};
using SessionPtr = std::unique_ptr<LIBSSH2_SESSION, SessionDeleter>;

/// Frees a channel; the owner closes it first where it can wait.
struct ChannelDeleter {
  void operator()(LIBSSH2_CHANNEL* c) const { libssh2_channel_free(c); }
};
using ChannelPtr = std::unique_ptr<LIBSSH2_CHANNEL, ChannelDeleter>;

struct KnownHostsDeleter {
  void operator()(LIBSSH2_KNOWNHOSTS* k) const { libssh2_knownhost_free(k); }
};
using KnownHostsPtr = std::unique_ptr<LIBSSH2_KNOWNHOSTS, KnownHostsDeleter>;

/// The session's last error message, for Status texts.
inline std::string LastError(LIBSSH2_SESSION* session) {
  char* msg = nullptr;
  int len = 0;
  libssh2_session_last_error(session, &msg, &len, 0);
  if (msg == nullptr || len <= 0) return "unknown libssh2 error";
  return std::string(msg, static_cast<size_t>(len));
}

}  // namespace k8s_agent::ssh

#endif  // K8S_AGENT_PLUGIN_SSH_LIBSSH2_HANDLES_H_
