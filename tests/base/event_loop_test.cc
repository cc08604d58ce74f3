// SPDX-License-Identifier: Apache-2.0
// Tests for the poll loop: timers, fd dispatch, removal, no spinning.

#include "plugin/base/event_loop.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include "plugin/base/unique_fd.h"

namespace k8s_agent {
namespace {

class TimerOnce : public Pollable {
 public:
  explicit TimerOnce(TimePoint at) : at_(at) {}
  void CollectFds(std::vector<pollfd>*) override {}
  TimePoint NextWake() const override {
    return fired_ ? TimePoint::max() : at_;
  }
  void OnFdReady(int, short, TimePoint) override {}
  void OnTimer(TimePoint) override { fired_ = true; }
  bool fired_ = false;

 private:
  TimePoint at_;
};

class PipeReader : public Pollable {
 public:
  explicit PipeReader(int fd) : fd_(fd) {}
  void CollectFds(std::vector<pollfd>* fds) override {
    fds->push_back({fd_, POLLIN, 0});
  }
  TimePoint NextWake() const override { return TimePoint::max(); }
  void OnFdReady(int fd, short, TimePoint) override {
    char buf[16];
    got_ += static_cast<int>(::read(fd, buf, sizeof(buf)));
    if (loop_ != nullptr) loop_->Remove(this);
  }
  void OnTimer(TimePoint) override {}
  int got_ = 0;
  EventLoop* loop_ = nullptr;

 private:
  int fd_;
};

TEST(PollTimeoutTest, RoundsUpAndClamps) {
  EXPECT_EQ(PollTimeoutMs(std::chrono::microseconds(1)), 1);
  EXPECT_EQ(PollTimeoutMs(Duration::zero()), 0);
  EXPECT_EQ(PollTimeoutMs(-seconds(1)), 0);
  EXPECT_EQ(PollTimeoutMs(std::chrono::hours(5)), 60000);
}

TEST(EventLoopTest, TimerFiresAfterItsTimeWithoutSpinning) {
  // Given a timer 20 ms away, expect it to fire after a few polls, not
  // after thousands of zero-timeout iterations.
  EventLoop loop(RealClock::Get());
  TimerOnce t(RealClock::Get()->Now() + milliseconds(20));
  loop.Add(&t);
  ASSERT_TRUE(loop.RunUntil([&] { return t.fired_; }).ok());
  EXPECT_LE(loop.polls(), 5);
}

TEST(EventLoopTest, WakeAtTheBeginningOfTimeMeansNow) {
  // A pollable with pending work may ask for TimePoint::min(); the loop must
  // poll with timeout 0, not overflow computing min() - now (UBSan).
  EventLoop loop(RealClock::Get());
  TimerOnce t(TimePoint::min());
  loop.Add(&t);
  ASSERT_TRUE(loop.RunOnce().ok());
  EXPECT_TRUE(t.fired_);
}

TEST(EventLoopTest, DispatchesFdAndAllowsRemovalInCallback) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  UniqueFd r(p[0]), w(p[1]);
  EventLoop loop(RealClock::Get());
  PipeReader reader(r.get());
  reader.loop_ = &loop;
  loop.Add(&reader);
  ASSERT_EQ(::write(w.get(), "hi", 2), 2);
  ASSERT_TRUE(loop.RunOnce().ok());
  EXPECT_EQ(reader.got_, 2);
  // Removed: more data is not dispatched; the loop times out instead.
  ASSERT_EQ(::write(w.get(), "x", 1), 1);
  TimerOnce t(RealClock::Get()->Now() + milliseconds(5));
  loop.Add(&t);
  ASSERT_TRUE(loop.RunUntil([&] { return t.fired_; }).ok());
  EXPECT_EQ(reader.got_, 2);
}

}  // namespace
}  // namespace k8s_agent
