// SPDX-License-Identifier: Apache-2.0
// What the kernel said about an SSH connection's socket, and what a failed
// libssh2 authentication call really means.

#ifndef K8S_AGENT_PLUGIN_SSH_SOCKET_FATE_H_
#define K8S_AGENT_PLUGIN_SSH_SOCKET_FATE_H_

#include <sys/types.h>

#include <string>

namespace k8s_agent::ssh {

/// libssh2 folds a reset or a close into its own messages ("Waiting for
/// USERAUTH response", "Failed getting banner"), and its userauth calls
/// even report one as a rejected key. Its socket hooks record the real
/// cause here, so errors can say what ssh says.
class SocketFate {
 public:
  /// The result of one recv()/send(): bytes, or -1 with `err`.
  void OnRecv(ssize_t n, int err);
  void OnSend(ssize_t n, int err);

  /// The peer reset or closed the connection (or a send failed).
  bool lost() const { return eof_ || error_ != 0; }
  /// "Connection reset by 10.0.0.5 port 22" / "Connection closed by ...",
  /// ssh's wording.
  std::string Describe(const std::string& ip, int port) const;

 private:
  int error_ = 0;
  bool eof_ = false;
};

/// True for the libssh2 (1.10 and 1.11) userauth failures that mean "no
/// answer could be read", as opposed to the server's refusal ("Username/
/// PublicKey combination invalid", "Invalid signature ..."): with the
/// socket intact, the answer was unreadable, in practice a packet over
/// libssh2's 40000-byte receive limit such as a long sshd Banner.
bool IsUnreadableAuthReply(const std::string& libssh2_message);

/// libssh2's receive limit (LIBSSH2_PACKET_MAXPAYLOAD), for messages.
constexpr int kLibssh2MaxIncomingPacket = 40000;

}  // namespace k8s_agent::ssh

#endif  // K8S_AGENT_PLUGIN_SSH_SOCKET_FATE_H_
