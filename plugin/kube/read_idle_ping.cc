// SPDX-License-Identifier: Apache-2.0
#include "plugin/kube/read_idle_ping.h"

// linux/tcp.h, not netinet/tcp.h: glibc's struct tcp_info stops before
// tcpi_bytes_received.
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <cstddef>

namespace k8s_agent::kube {

std::optional<ReadIdlePing::Reads> ReadIdlePing::SocketReads(int fd) {
  tcp_info info{};
  socklen_t len = sizeof(info);
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0 ||
      len < offsetof(tcp_info, tcpi_bytes_received) +
                sizeof(info.tcpi_bytes_received)) {
    return std::nullopt;
  }
  Reads reads;
  reads.idle = std::chrono::milliseconds(info.tcpi_last_data_recv);
  reads.bytes = info.tcpi_bytes_received;
  return reads;
}

ReadIdlePing::Action ReadIdlePing::Check(const Reads& reads, TimePoint now) {
  if (pinged_at_) {
    if (reads.bytes == bytes_at_ping_) {
      if (now - *pinged_at_ >= timeout_) return Action::kDead;
      next_check_ = *pinged_at_ + timeout_;
      return Action::kNone;
    }
    pinged_at_.reset();  // Answered (or other bytes came): alive.
  }
  if (reads.idle >= after_) return Action::kPing;
  next_check_ = now + (after_ - reads.idle);
  return Action::kNone;
}

void ReadIdlePing::Pinged(const Reads& reads, TimePoint now) {
  pinged_at_ = now;
  bytes_at_ping_ = reads.bytes;
  next_check_ = now + timeout_;
}

}  // namespace k8s_agent::kube
