// SPDX-License-Identifier: Apache-2.0
// Tests for Deadline arithmetic.

#include "plugin/base/clock.h"

#include <gtest/gtest.h>

#include "tests/fakes/fake_clock.h"

namespace k8s_agent {
namespace {

TEST(DeadlineTest, ExpiresAndCountsDown) {
  FakeClock clock;
  Deadline d = Deadline::After(clock.Now(), seconds(5));
  EXPECT_FALSE(d.Expired(clock.Now()));
  EXPECT_EQ(d.Remaining(clock.Now()), seconds(5));
  clock.Advance(seconds(5));
  EXPECT_TRUE(d.Expired(clock.Now()));
  EXPECT_EQ(d.Remaining(clock.Now()), Duration::zero());
}

TEST(DeadlineTest, InfiniteNeverExpiresAndDoesNotOverflow) {
  FakeClock clock;
  Deadline d = Deadline::After(clock.Now(), Duration::max());
  EXPECT_TRUE(d.infinite());
  EXPECT_FALSE(d.Expired(clock.Now() + std::chrono::hours(100000)));
}

TEST(DeadlineTest, EarliestPicksTheSooner) {
  FakeClock clock;
  Deadline a = Deadline::After(clock.Now(), seconds(1));
  Deadline b = Deadline::After(clock.Now(), seconds(2));
  EXPECT_EQ(Deadline::Earliest(a, b).at(), a.at());
  EXPECT_EQ(Deadline::Earliest(Deadline::Infinite(), b).at(), b.at());
}

}  // namespace
}  // namespace k8s_agent
