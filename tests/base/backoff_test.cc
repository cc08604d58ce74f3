// SPDX-License-Identifier: Apache-2.0
// Tests for Backoff: bounds, growth, cap and reset.

#include "plugin/base/backoff.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "tests/fakes/fake_clock.h"

namespace k8s_agent {
namespace {

TEST(BackoffTest, GrowsWithinJitterBoundsUpToMax) {
  // Given 100 ms doubling to 1 s, expect each delay in [ceil/2, ceil].
  FakeClock clock;
  Backoff b({milliseconds(100), seconds(1), seconds(60)}, 42);
  Duration ceiling = milliseconds(100);
  for (int i = 0; i < 10; ++i) {
    Duration d = b.Next(clock.Now());
    EXPECT_GE(d, ceiling / 2) << i;
    EXPECT_LE(d, ceiling) << i;
    ceiling = std::min<Duration>(ceiling * 2, seconds(1));
    clock.Advance(d);
  }
  EXPECT_EQ(b.failures(), 10);
}

TEST(BackoffTest, ResetsAfterQuietPeriod) {
  FakeClock clock;
  Backoff b({milliseconds(100), seconds(10), seconds(5)}, 1);
  for (int i = 0; i < 5; ++i) (void)b.Next(clock.Now());
  clock.Advance(seconds(6));
  EXPECT_LE(b.Next(clock.Now()), milliseconds(100));
}

TEST(BackoffTest, SameSeedSameSequence) {
  FakeClock clock;
  Backoff a(Backoff::ApiDefaults(), 7), b(Backoff::ApiDefaults(), 7);
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(a.Next(clock.Now()), b.Next(clock.Now()));
}

TEST(BackoffTest, RetryAfterIsAFloorPlusSpreadingJitter) {
  // Given Retry-After 1 s and 800 ms doubling, expect each delay in
  // [1 s, 1 s + ceiling], and 200 agents refused at the same instant to
  // come back spread out rather than together.
  FakeClock clock;
  std::set<Duration::rep> distinct;
  Duration lo = seconds(100), hi = Duration::zero();
  for (uint64_t seed = 0; seed < 200; ++seed) {
    Backoff b(Backoff::ApiDefaults(), seed);
    Duration d = b.NextAfter(seconds(1), clock.Now());
    EXPECT_GE(d, seconds(1));
    EXPECT_LE(d, seconds(1) + milliseconds(800));
    distinct.insert(d.count());
    lo = std::min(lo, d);
    hi = std::max(hi, d);
  }
  EXPECT_GT(distinct.size(), 190u);
  EXPECT_GT(hi - lo, milliseconds(500));
  // Refused again and again: the window widens with the backoff.
  Backoff b(Backoff::ApiDefaults(), 5);
  Duration last = Duration::zero();
  for (int i = 0; i < 6; ++i) last = b.NextAfter(seconds(1), clock.Now());
  EXPECT_GE(last, seconds(1));
  EXPECT_LE(last, seconds(1) + seconds(26));
  // No Retry-After: the plain backoff.
  Backoff c(Backoff::ApiDefaults(), 9);
  Duration d = c.NextAfter(Duration::zero(), clock.Now());
  EXPECT_GE(d, milliseconds(400));
  EXPECT_LE(d, milliseconds(800));
}

TEST(BackoffTest, SshProbeStartsFastAndStaysUnderASecond) {
  // The issue asks for first retries within tens of ms, capped < 1 s.
  FakeClock clock;
  Backoff b(Backoff::SshProbeDefaults(), 3);
  EXPECT_LE(b.Next(clock.Now()), milliseconds(20));
  for (int i = 0; i < 20; ++i) EXPECT_LT(b.Next(clock.Now()), seconds(1));
}

}  // namespace
}  // namespace k8s_agent
