// SPDX-License-Identifier: Apache-2.0
// StreamLiveness: the idle limit first, then the PING check.

#include "plugin/kube/stream_liveness.h"

#include <algorithm>

#include "plugin/base/strings.h"

namespace k8s_agent::kube {

StreamLiveness::StreamLiveness(Duration idle_limit, Duration ping_after,
                               Duration ping_timeout, TimePoint now)
    : idle_limit_(idle_limit), last_heard_(now) {
  if (ping_after > Duration::zero() && ping_timeout > Duration::zero()) {
    ping_.emplace(ping_after, ping_timeout);
  }
}

StreamLiveness::Action StreamLiveness::Check(TimePoint now,
                                             bool headers_complete) {
  if (idle_limit_ > Duration::zero() && now - last_heard_ >= idle_limit_) {
    ping_dead_ = false;
    return Action::kDead;
  }
  if (!ping_ || !headers_complete || now < ping_->next_check()) {
    return Action::kNone;
  }
  return Action::kReadSocket;
}

StreamLiveness::Action StreamLiveness::CheckReads(
    const std::optional<ReadIdlePing::Reads>& reads, TimePoint now) {
  if (!ping_) return Action::kNone;
  if (!reads) {
    ping_.reset();
    return Action::kNone;
  }
  switch (ping_->Check(*reads, now)) {
    case ReadIdlePing::Action::kPing:
      return Action::kPing;
    case ReadIdlePing::Action::kDead:
      ping_dead_ = true;
      return Action::kDead;
    case ReadIdlePing::Action::kNone:
      break;
  }
  return Action::kNone;
}

void StreamLiveness::Pinged(const ReadIdlePing::Reads& reads, TimePoint now) {
  if (ping_) ping_->Pinged(reads, now);
}

Status StreamLiveness::Dead(const std::string& description) const {
  if (ping_dead_ && ping_) {
    return UnavailableError(
        description + ": no answer to an HTTP/2 PING within " +
        FormatDuration(ping_->timeout()) + " after " +
        FormatDuration(ping_->after()) +
        " with nothing read (the API server is stopped or the "
        "connection is dead)");
  }
  return UnavailableError(description + ": no data for " +
                          FormatDuration(idle_limit_) +
                          " (idle timeout; connection presumed dead)");
}

TimePoint StreamLiveness::NextCheck(bool headers_complete) const {
  TimePoint next = TimePoint::max();
  if (idle_limit_ > Duration::zero()) next = last_heard_ + idle_limit_;
  if (ping_ && headers_complete) next = std::min(next, ping_->next_check());
  return next;
}

}  // namespace k8s_agent::kube
