// SPDX-License-Identifier: Apache-2.0
// SocketFate: the first socket error or end of stream, in ssh's words.

#include "plugin/ssh/socket_fate.h"

#include <cerrno>
#include <cstring>

#include "plugin/base/strings.h"

namespace k8s_agent::ssh {

void SocketFate::OnRecv(ssize_t n, int err) {
  if (lost()) return;  // The first cause is the one to report.
  if (n == 0) {
    eof_ = true;
  } else if (n < 0 && err != EAGAIN && err != EWOULDBLOCK && err != EINTR) {
    error_ = err;
  }
}

void SocketFate::OnSend(ssize_t n, int err) {
  if (lost()) return;
  if (n < 0 && err != EAGAIN && err != EWOULDBLOCK && err != EINTR) {
    error_ = err;
  }
}

std::string SocketFate::Describe(const std::string& ip, int port) const {
  std::string where = " by " + ip + " port " + std::to_string(port);
  if (error_ == ECONNRESET || error_ == EPIPE)
    return "Connection reset" + where;
  if (error_ != 0) return std::string(std::strerror(error_)) + where;
  return "Connection closed" + where;
}

bool IsUnreadableAuthReply(const std::string& libssh2_message) {
  // Both versions' userauth.c: "Waiting for USERAUTH response" and
  // "Waiting for publickey USERAUTH response" follow a failed read.
  return StartsWith(libssh2_message, "Waiting for") &&
         libssh2_message.find("USERAUTH response") != std::string::npos;
}

}  // namespace k8s_agent::ssh
