// SPDX-License-Identifier: Apache-2.0
// Time as an injected dependency: Clock, RealClock and Deadline.

#ifndef K8S_AGENT_PLUGIN_BASE_CLOCK_H_
#define K8S_AGENT_PLUGIN_BASE_CLOCK_H_

#include <chrono>
#include <cstdint>

namespace k8s_agent {

using TimePoint = std::chrono::steady_clock::time_point;
using Duration = std::chrono::steady_clock::duration;
using std::chrono::milliseconds;
using std::chrono::seconds;

/// Source of monotonic time. Abstract so tests can advance time by hand;
/// nothing outside RealClock reads steady_clock directly.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint Now() const = 0;
};

/// The production clock.
class RealClock : public Clock {
 public:
  TimePoint Now() const override;
  /// A process-wide instance; RealClock has no state.
  static RealClock* Get();
};

/// Microseconds since the Unix epoch, for trace records meant for humans
/// and for correlating agents on one machine. Not for deadlines.
int64_t WallClockMicros();

/// A point in time after which something is late. A value type.
class Deadline {
 public:
  static Deadline Infinite() { return Deadline(TimePoint::max()); }
  static Deadline At(TimePoint t) { return Deadline(t); }
  static Deadline After(TimePoint now, Duration d);

  bool infinite() const { return at_ == TimePoint::max(); }
  bool Expired(TimePoint now) const { return now >= at_; }
  /// Zero once expired.
  Duration Remaining(TimePoint now) const;
  TimePoint at() const { return at_; }

  static Deadline Earliest(Deadline a, Deadline b) {
    return a.at_ < b.at_ ? a : b;
  }

 private:
  explicit Deadline(TimePoint at) : at_(at) {}
  TimePoint at_;
};

/// Milliseconds as a double, for messages and traces.
double ToMillis(Duration d);

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_BASE_CLOCK_H_
