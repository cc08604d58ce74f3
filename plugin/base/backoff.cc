// SPDX-License-Identifier: Apache-2.0
// Backoff: exponential growth with half jitter.

#include "plugin/base/backoff.h"

#include <algorithm>

namespace k8s_agent {

Backoff::Params Backoff::ApiDefaults() {
  return {milliseconds(800), seconds(30), seconds(120)};
}

Backoff::Params Backoff::SshProbeDefaults() {
  return {milliseconds(5), milliseconds(25), seconds(30)};
}

Backoff::Params Backoff::SshProbeTroubleDefaults() {
  return {milliseconds(50), seconds(2), seconds(30)};
}

Backoff::Backoff(Params params, uint64_t seed)
    : params_(params), rng_(seed), ceiling_(params.initial) {}

Duration Backoff::Next(TimePoint now) {
  if (failures_ > 0 && now - last_failure_ >= params_.reset_after) Reset();
  Duration ceiling = ceiling_;
  ceiling_ = std::min(params_.max, ceiling_ * 2);
  last_failure_ = now;
  ++failures_;
  auto hi = ceiling.count();
  std::uniform_int_distribution<Duration::rep> dist(hi / 2, hi);
  return Duration(dist(rng_));
}

Duration Backoff::NextAfter(Duration server_delay, TimePoint now) {
  Duration own = Next(now);
  if (server_delay <= Duration::zero()) return own;
  std::uniform_int_distribution<Duration::rep> dist(0, own.count());
  return server_delay + Duration(dist(rng_));
}

void Backoff::Reset() {
  ceiling_ = params_.initial;
  failures_ = 0;
}

}  // namespace k8s_agent
