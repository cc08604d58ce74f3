// SPDX-License-Identifier: Apache-2.0
// EventLoop: timers, then one poll(), then dispatch.

#include "plugin/base/event_loop.h"

#include <algorithm>
#include <cerrno>

#include "plugin/base/log.h"

namespace k8s_agent {
namespace {

// After this many zero-timeout iterations with nothing ready, something
// reports work it never does; say so once (mosh's consecutive_polls guard).
constexpr int kSpinWarnThreshold = 1000;

}  // namespace

int PollTimeoutMs(Duration d) {
  if (d <= Duration::zero()) return 0;
  constexpr auto kMax = std::chrono::milliseconds(60000);
  if (d >= kMax) return static_cast<int>(kMax.count());
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(d);
  return static_cast<int>(ms.count());
}

void EventLoop::Add(Pollable* p) { pollables_.push_back(p); }

void EventLoop::Remove(Pollable* p) {
  // Null the slot instead of erasing: RunOnce may be iterating.
  std::replace(pollables_.begin(), pollables_.end(), p,
               static_cast<Pollable*>(nullptr));
}

Status EventLoop::RunOnce() {
  // 1. Collect fds, remembering which pollable owns each one.
  std::vector<pollfd> fds;
  std::vector<Pollable*> owners;
  TimePoint wake = TimePoint::max();
  for (Pollable* p : pollables_) {
    if (p == nullptr) continue;  // Removed since the last iteration.
    p->CollectFds(&fds);
    owners.resize(fds.size(), p);
    wake = std::min(wake, p->NextWake());
  }

  // 2. One blocking wait, until the earliest wake-up at the latest.
  TimePoint now = clock_->Now();
  // Compare before subtracting: TimePoint::min() ("now, please") minus now
  // overflows.
  int timeout_ms = wake == TimePoint::max() ? 60000
                   : wake <= now            ? 0
                                            : PollTimeoutMs(wake - now);
  int n = ::poll(fds.data(), fds.size(), timeout_ms);
  ++polls_;
  if (n < 0) {
    if (errno == EINTR) return OkStatus();
    return ErrnoError("poll", errno);
  }
  if (n == 0 && timeout_ms == 0) {
    if (++zero_streak_ >= kSpinWarnThreshold && !warned_spin_) {
      warned_spin_ = true;
      LogDebug("event loop: a component keeps asking for an immediate wakeup");
    }
  } else {
    zero_streak_ = 0;
  }

  // 3. Dispatch fds. An owner removed by an earlier callback is skipped.
  now = clock_->Now();
  for (size_t i = 0; i < fds.size() && n > 0; ++i) {
    if (fds[i].revents == 0) continue;
    --n;
    Pollable* owner = owners[i];
    if (std::find(pollables_.begin(), pollables_.end(), owner) ==
        pollables_.end()) {
      continue;
    }
    owner->OnFdReady(fds[i].fd, fds[i].revents, now);
  }

  // 4. Timers that are due. Last, so that RunUntil re-checks its
  // condition right after a timer changed state instead of polling again.
  now = clock_->Now();
  for (size_t i = 0; i < pollables_.size(); ++i) {
    Pollable* p = pollables_[i];
    if (p != nullptr && p->NextWake() <= now) p->OnTimer(now);
  }
  pollables_.erase(std::remove(pollables_.begin(), pollables_.end(), nullptr),
                   pollables_.end());
  return OkStatus();
}

Status EventLoop::RunUntil(const std::function<bool()>& done) {
  while (!done()) {
    K8S_RETURN_IF_ERROR(RunOnce());
  }
  return OkStatus();
}

}  // namespace k8s_agent
