// SPDX-License-Identifier: Apache-2.0
// When to send an HTTP/2 PING on a quiet watch, and when its silence means
// the API server is gone: client-go's HTTP/2 health check.

#ifndef K8S_AGENT_PLUGIN_KUBE_READ_IDLE_PING_H_
#define K8S_AGENT_PLUGIN_KUBE_READ_IDLE_PING_H_

#include <cstdint>
#include <optional>

#include "plugin/base/clock.h"

namespace k8s_agent::kube {

/// A stopped API server (SIGSTOP, a hung process, a dead path whose TCP
/// still ACKs) keeps a watch's socket open and silent, and a watch may be
/// silent for a minute by design (bookmarks come about once a minute), so
/// silence alone can only be trusted after minutes. client-go instead
/// pings: after `after` with no byte read on the connection it sends an
/// HTTP/2 PING, and a connection that still reads nothing `timeout` later
/// is dead (its ReadIdleTimeout 30 s and PingTimeout 15 s). A PING is a
/// frame on the open connection, not a request: the API server never sees
/// it, so it costs nothing per waiting host.
///
/// This class decides; the caller reads the connection's socket counters
/// (the kernel's TCP_INFO: a PING's ACK counts there although it carries no
/// response bytes) and sends the PING.
class ReadIdlePing {
 public:
  enum class Action { kNone, kPing, kDead };

  /// What the socket has read, as of one moment.
  struct Reads {
    Duration idle{};     // Since the last byte arrived (ms resolution).
    uint64_t bytes = 0;  // Received in all, ever: exact, so an answer
                         // a microsecond after the PING still counts.
  };

  ReadIdlePing(Duration after, Duration timeout)
      : after_(after), timeout_(timeout) {}

  /// `reads` as of `now`. kPing: send one now and call Pinged(). kDead: no
  /// byte arrived within `timeout` of the PING.
  Action Check(const Reads& reads, TimePoint now);
  void Pinged(const Reads& reads, TimePoint now);
  /// The kernel's counters for a connected TCP socket; nullopt when it
  /// cannot give them (not TCP, a kernel before 4.1).
  static std::optional<Reads> SocketReads(int fd);

  /// When Check() next has something to decide (given no bytes arrive).
  TimePoint next_check() const { return next_check_; }

  Duration after() const { return after_; }
  Duration timeout() const { return timeout_; }

 private:
  Duration after_;
  Duration timeout_;
  std::optional<TimePoint> pinged_at_;
  uint64_t bytes_at_ping_ = 0;
  TimePoint next_check_{};
};

}  // namespace k8s_agent::kube

#endif  // K8S_AGENT_PLUGIN_KUBE_READ_IDLE_PING_H_
