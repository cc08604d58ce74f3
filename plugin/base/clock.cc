// SPDX-License-Identifier: Apache-2.0
// RealClock and Deadline arithmetic.

#include "plugin/base/clock.h"

namespace k8s_agent {

TimePoint RealClock::Now() const { return std::chrono::steady_clock::now(); }

RealClock* RealClock::Get() {
  static RealClock clock;
  return &clock;
}

int64_t WallClockMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Deadline Deadline::After(TimePoint now, Duration d) {
  // Saturate instead of overflowing for "effectively forever" durations.
  if (d >= TimePoint::max() - now) return Infinite();
  return Deadline(now + d);
}

Duration Deadline::Remaining(TimePoint now) const {
  if (now >= at_) return Duration::zero();
  return at_ - now;
}

double ToMillis(Duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

}  // namespace k8s_agent
