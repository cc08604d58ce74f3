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

namespace {

// `ip` (IPv4, IPv6 or [IPv6]) and `port` as a socket address.
StatusOr<socklen_t> ToSockaddr(const std::string& ip, int port,
                               sockaddr_storage* addr) {
  std::string host = ip;
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  *addr = sockaddr_storage{};
  auto* v4 = reinterpret_cast<sockaddr_in*>(addr);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(addr);
  if (::inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
    return static_cast<socklen_t>(sizeof(*v4));
  }
  if (::inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    return static_cast<socklen_t>(sizeof(*v6));
  }
  return InvalidArgumentError("\"" + Printable(ip) +
                              "\" is not an IPv4 or IPv6 address");
}

}  // namespace

StatusOr<TcpAttempt> StartTcpConnect(const std::string& ip, int port,
                                     const std::string& bind_address) {
  sockaddr_storage addr;
  K8S_ASSIGN_OR_RETURN(socklen_t addr_len, ToSockaddr(ip, port, &addr));
  TcpAttempt attempt;
  attempt.fd.reset(
      ::socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!attempt.fd.valid()) return ErrnoError("socket", errno);
  int one = 1;
  // Without TCP_NODELAY every handshake pays two ~40 ms Nagle/delayed-ACK
  // stalls.
  ::setsockopt(attempt.fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  ::setsockopt(attempt.fd.get(), SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
  if (!bind_address.empty()) {
    // -b / BindAddress: the source address, any port. A name is no
    // address here: k8s-agent does no DNS.
    sockaddr_storage local;
    StatusOr<socklen_t> local_len = ToSockaddr(bind_address, 0, &local);
    if (!local_len.ok()) {
      return local_len.status().WithContext("BindAddress");
    }
    if (::bind(attempt.fd.get(), reinterpret_cast<sockaddr*>(&local),
               *local_len) != 0) {
      return ErrnoError("bind to " + bind_address, errno);
    }
  }
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

std::string HostPort(const std::string& ip, int port) {
  bool bare_v6 = ip.find(':') != std::string::npos && ip.front() != '[';
  return (bare_v6 ? "[" + ip + "]" : ip) + ":" + std::to_string(port);
}

}  // namespace k8s_agent::ssh
