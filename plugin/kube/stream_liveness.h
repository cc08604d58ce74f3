// SPDX-License-Identifier: Apache-2.0
// Whether a streaming response (a watch) is still alive: its idle limit,
// and on HTTP/2 the PING check.

#ifndef K8S_AGENT_PLUGIN_KUBE_STREAM_LIVENESS_H_
#define K8S_AGENT_PLUGIN_KUBE_STREAM_LIVENESS_H_

#include <optional>
#include <string>

#include "plugin/base/clock.h"
#include "plugin/base/status.h"
#include "plugin/kube/read_idle_ping.h"

namespace k8s_agent::kube {

/// One streaming transfer's two ways of being found dead: no byte for its
/// idle limit, or a quiet HTTP/2 connection that does not answer a PING
/// (ReadIdlePing, once the response headers are in). It decides; its owner
/// reads the connection's socket when asked, sends the PING and ends the
/// transfer with Dead().
class StreamLiveness {
 public:
  enum class Action {
    kNone,
    kReadSocket,  // The PING check is due: call CheckReads.
    kPing,        // Send an HTTP/2 PING now, then call Pinged.
    kDead,        // End the transfer with Dead().
  };

  /// Neither limit: never dead.
  StreamLiveness() = default;
  /// A zero `idle_limit` sets none; a zero `ping_after` or `ping_timeout`
  /// no PING check. The request starts at `now`.
  StreamLiveness(Duration idle_limit, Duration ping_after,
                 Duration ping_timeout, TimePoint now);

  /// A byte of the response (header or body) arrived at `now`.
  void Heard(TimePoint now) { last_heard_ = now; }

  /// At `now`, with the response headers in or not: kDead (the idle limit
  /// passed), kReadSocket (a PING check is due) or kNone.
  Action Check(TimePoint now, bool headers_complete);
  /// After kReadSocket: what the connection's socket has read, nullopt
  /// when it cannot say or the connection is not HTTP/2 (the PING check
  /// stops; the idle limit stays). kPing, kDead or kNone.
  Action CheckReads(const std::optional<ReadIdlePing::Reads>& reads,
                    TimePoint now);
  void Pinged(const ReadIdlePing::Reads& reads, TimePoint now);

  /// Why the last kDead, for the request `description` ("GET https://...").
  Status Dead(const std::string& description) const;
  /// When Check() next has something to decide; TimePoint::max() for never.
  TimePoint NextCheck(bool headers_complete) const;

 private:
  Duration idle_limit_{};
  TimePoint last_heard_{};
  std::optional<ReadIdlePing> ping_;
  bool ping_dead_ = false;  // The last kDead was the PING's.
};

}  // namespace k8s_agent::kube

#endif  // K8S_AGENT_PLUGIN_KUBE_STREAM_LIVENESS_H_
