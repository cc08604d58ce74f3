// SPDX-License-Identifier: Apache-2.0
// StartTcpConnect and TcpConnectError.

#include "plugin/ssh/tcp_connect.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdint>

#include "plugin/base/strings.h"

namespace k8s_agent::ssh {

StatusOr<TcpAttempt> StartTcpConnect(const std::string& ip, int port) {
  std::string host = ip;
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  sockaddr_storage addr{};
  socklen_t addr_len = 0;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&addr);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&addr);
  if (::inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
    addr_len = sizeof(*v4);
  } else if (::inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    addr_len = sizeof(*v6);
  } else {
    return InvalidArgumentError("\"" + Printable(ip) +
                                "\" is not an IPv4 or IPv6 address");
  }
  TcpAttempt attempt;
  attempt.fd.reset(
      ::socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!attempt.fd.valid()) return ErrnoError("socket", errno);
  int one = 1;
  // Without TCP_NODELAY every handshake pays two ~40 ms Nagle/delayed-ACK
  // stalls.
  ::setsockopt(attempt.fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  ::setsockopt(attempt.fd.get(), SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
  attempt.error = ::connect(attempt.fd.get(),
                            reinterpret_cast<sockaddr*>(&addr), addr_len) == 0
                      ? 0
                      : errno;
  return attempt;
}

int TcpConnectError(int fd) {
  int err = 0;
  socklen_t len = sizeof(err);
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  return err;
}

}  // namespace k8s_agent::ssh
