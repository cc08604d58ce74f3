// SPDX-License-Identifier: Apache-2.0
// Which sockets each libcurl connection uses, so a watch's connection can
// be found on the poll loop's side (the HTTP/2 PING check reads its
// socket's counters).

#ifndef K8S_AGENT_PLUGIN_KUBE_CONNECTION_SOCKETS_H_
#define K8S_AGENT_PLUGIN_KUBE_CONNECTION_SOCKETS_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace k8s_agent::kube {

/// Fed from CURLOPT_SOCKOPTFUNCTION (opened, with the transfer's
/// CURLINFO_CONN_ID) and CURLOPT_CLOSESOCKETFUNCTION (closed, with only
/// the socket: curl says not which connection it was). A connection holds
/// more than one socket only while connecting (happy eyeballs); the last
/// one opened is the one it ends up on once the others are closed.
class ConnectionSockets {
 public:
  /// `fd` was opened for connection `connection` (>= 0). May throw
  /// std::bad_alloc; a libcurl callback catches it.
  void Opened(int64_t connection, int fd);
  /// `fd` was closed, whichever connection it was for. A connection left
  /// without sockets is forgotten.
  void Closed(int fd);
  /// The socket `connection` uses (the last opened of those still open),
  /// or -1 when none is known.
  int SocketOf(int64_t connection) const;
  /// Connections with an open socket.
  size_t connections() const { return sockets_.size(); }

 private:
  std::map<int64_t, std::vector<int>> sockets_;
};

}  // namespace k8s_agent::kube

#endif  // K8S_AGENT_PLUGIN_KUBE_CONNECTION_SOCKETS_H_
