// SPDX-License-Identifier: Apache-2.0
// Tests for Backoff: bounds, growth, cap and reset.

#include "plugin/base/backoff.h"

#include <gtest/gtest.h>

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

TEST(BackoffTest, SshProbeStartsFastAndStaysUnderASecond) {
  // The issue asks for first retries within tens of ms, capped < 1 s.
  FakeClock clock;
  Backoff b(Backoff::SshProbeDefaults(), 3);
  EXPECT_LE(b.Next(clock.Now()), milliseconds(20));
  for (int i = 0; i < 20; ++i) EXPECT_LT(b.Next(clock.Now()), seconds(1));
}

}  // namespace
}  // namespace k8s_agent
