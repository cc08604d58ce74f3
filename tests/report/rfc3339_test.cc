// SPDX-License-Identifier: Apache-2.0
#include "plugin/report/rfc3339.h"

#include <gtest/gtest.h>

namespace k8s_agent::report {
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

TEST(Rfc3339Test, RejectsGarbage) {
  for (const char* bad :
       {"", "2026-12-01", "2026-12-01T00:00:00", "2026-13-01T00:00:00Z",
        "2026-12-01 00:00:00Z", "2026-12-01T00:00:00Zjunk",
        "2026-12-01T00:00:00.Z", "yesterday", "2026-12-01T24:00:00Z"}) {
    EXPECT_FALSE(ParseRfc3339Micros(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace k8s_agent::report
