// SPDX-License-Identifier: Apache-2.0
// The one poll(2) loop that drives every component of an agent.

#ifndef K8S_AGENT_PLUGIN_BASE_EVENT_LOOP_H_
#define K8S_AGENT_PLUGIN_BASE_EVENT_LOOP_H_

#include <poll.h>

#include <functional>
#include <vector>

#include "plugin/base/clock.h"
#include "plugin/base/status.h"

namespace k8s_agent {

/// Something the loop drives: it names the fds it waits on and the next
/// time it needs to run (mosh's wait_time() idea). Components never block
/// and never sleep; a retry delay is just a later NextWake().
class Pollable {
 public:
  virtual ~Pollable() = default;
  /// Appends the fds to wait on, with POLLIN and/or POLLOUT.
  virtual void CollectFds(std::vector<pollfd>* fds) = 0;
  /// The earliest time OnTimer must run; TimePoint::max() for never.
  virtual TimePoint NextWake() const = 0;
  /// Called for each collected fd with non-zero revents.
  virtual void OnFdReady(int fd, short revents, TimePoint now) = 0;
  /// Called once NextWake() has passed.
  virtual void OnTimer(TimePoint now) = 0;
};

/// Single-threaded loop: one blocking poll() per iteration, whose timeout
/// is the earliest NextWake() of all pollables.
class EventLoop {
 public:
  explicit EventLoop(Clock* clock) : clock_(clock) {}

  /// The pollable must outlive its registration. Safe to call from
  /// callbacks: removal takes effect at once, additions next iteration.
  void Add(Pollable* p);
  void Remove(Pollable* p);

  /// Runs one iteration: one poll(), fd dispatch, then due timers.
  Status RunOnce();

  /// Iterates until `done()` is true (checked before each iteration).
  Status RunUntil(const std::function<bool()>& done);

  /// How many consecutive iterations had a zero timeout without any fd
  /// becoming ready; a busy loop shows up here (tests assert on it).
  int zero_timeout_streak() const { return zero_streak_; }
  /// Total poll() calls, for tests that check the loop slept.
  long polls() const { return polls_; }

 private:
  Clock* clock_;
  std::vector<Pollable*> pollables_;
  int zero_streak_ = 0;
  long polls_ = 0;
  bool warned_spin_ = false;
};

/// Converts a duration to a poll() timeout: rounded up to whole
/// milliseconds (rounding down would wake early and spin), clamped to
/// [0, 60 s] so a bad NextWake cannot sleep forever.
int PollTimeoutMs(Duration d);

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_BASE_EVENT_LOOP_H_
