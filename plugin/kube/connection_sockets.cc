// SPDX-License-Identifier: Apache-2.0
// ConnectionSockets: a map kept in step with curl's open and close calls.

#include "plugin/kube/connection_sockets.h"

#include <algorithm>
#include <iterator>

namespace k8s_agent::kube {

void ConnectionSockets::Opened(int64_t connection, int fd) {
  sockets_[connection].push_back(fd);
}

void ConnectionSockets::Closed(int fd) {
  for (auto it = sockets_.begin(); it != sockets_.end();) {
    auto& fds = it->second;
    fds.erase(std::remove(fds.begin(), fds.end(), fd), fds.end());
    it = fds.empty() ? sockets_.erase(it) : std::next(it);
  }
}

int ConnectionSockets::SocketOf(int64_t connection) const {
  auto it = sockets_.find(connection);
  if (it == sockets_.end() || it->second.empty()) return -1;
  return it->second.back();
}

}  // namespace k8s_agent::kube
