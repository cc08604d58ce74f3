// SPDX-License-Identifier: Apache-2.0
#include "plugin/base/rfc3339.h"

#include <gtest/gtest.h>

namespace k8s_agent {
namespace {

TEST(Rfc3339Test, WholeSecondsUtc) {
  EXPECT_EQ(ParseRfc3339Micros("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(ParseRfc3339Micros("2026-12-01T00:00:00Z"),
            int64_t{1796083200} * 1000000);
  EXPECT_EQ(ParseRfc3339Micros("2000-02-29T12:34:56Z"),
            int64_t{951827696} * 1000000);
}

TEST(Rfc3339Test, FractionsAndOffsets) {
  EXPECT_EQ(ParseRfc3339Micros("1970-01-01T00:00:01.5Z"), 1500000);
  EXPECT_EQ(ParseRfc3339Micros("1970-01-01T00:00:01.123456789Z"), 1123456);
  EXPECT_EQ(ParseRfc3339Micros("1970-01-01T01:00:00+01:00"), 0);
  EXPECT_EQ(ParseRfc3339Micros("1969-12-31T23:00:00-01:00"), 0);
}

TEST(Rfc3339Test, BeforeTheEpoch) {
  EXPECT_EQ(ParseRfc3339Micros("1969-12-31T23:59:59.5Z"), -500000);
  EXPECT_EQ(ParseRfc3339Micros("1900-01-01T00:00:00Z"),
            int64_t{-2208988800} * 1000000);
}

TEST(Rfc3339Test, LowerCaseSeparatorsAndLeapSecond) {
  EXPECT_EQ(ParseRfc3339Micros("1970-01-01t00:00:10z"), 10000000);
  // 23:59:60 names the instant after 23:59:59, as timegm would have it.
  EXPECT_EQ(ParseRfc3339Micros("1970-01-01T23:59:60Z"),
            int64_t{86400} * 1000000);
}

TEST(Rfc3339Test, RejectsGarbage) {
  for (const char* bad :
       {"", "2026-12-01", "2026-12-01T00:00:00", "2026-13-01T00:00:00Z",
        "2026-12-01 00:00:00Z", "2026-12-01T00:00:00Zjunk",
        "2026-12-01T00:00:00.Z", "yesterday", "2026-12-01T24:00:00Z",
        "2026-00-01T00:00:00Z", "2026-12-00T00:00:00Z",
        "2026-12-01T00:00:00+1:00", "2026-12-01T00:00:00+24:00",
        "2026-12-01T00:00:00+01:00 ", "1970-01-01 00:00:10", "tomorrow"}) {
    EXPECT_FALSE(ParseRfc3339Micros(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace k8s_agent
