// SPDX-License-Identifier: Apache-2.0
// Tests for string helpers and duration parsing.

#include "plugin/base/strings.h"

#include <gtest/gtest.h>

#include "tests/fakes/status_matchers.h"

namespace k8s_agent {
namespace {

TEST(DurationTest, ParsesGoStyleAndBareSeconds) {
  struct Case {
    const char* text;
    Duration want;
  } cases[] = {
      {"10m", std::chrono::minutes(10)},
      {"1h30m", std::chrono::minutes(90)},
      {"250ms", milliseconds(250)},
      {"1.5s", milliseconds(1500)},
      {"30", seconds(30)},
      {" 5s ", seconds(5)},
      {"0s", Duration::zero()},
  };
  for (const Case& c : cases) {
    StatusOr<Duration> d = ParseDuration(c.text);
    ASSERT_THAT(d, IsOk()) << c.text;
    EXPECT_EQ(*d, c.want) << c.text;
  }
}

TEST(DurationTest, RejectsGarbage) {
  for (const char* text :
       {"", "abc", "-5s", "10x", "5 s", "1e3", "s", "10m5", "99999999h"}) {
    EXPECT_THAT(ParseDuration(text),
                StatusIs(Code::kInvalidArgument, "invalid duration"))
        << text;
  }
}

TEST(DurationTest, FormatsForHumans) {
  EXPECT_EQ(FormatDuration(milliseconds(350)), "350ms");
  EXPECT_EQ(FormatDuration(milliseconds(1234)), "1.2s");
  EXPECT_EQ(FormatDuration(std::chrono::minutes(10)), "10m0s");
}

TEST(StringsTest, JoinSplitTrim) {
  EXPECT_EQ(Join({" orted", "-mca", "ess"}, " "), " orted -mca ess");
  EXPECT_EQ(Split("a,,b", ','), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_EQ(Trim("  x y \n"), "x y");
  EXPECT_TRUE(StartsWith("k8s-agent", "k8s"));
  EXPECT_TRUE(EndsWith("w-0.svc", ".svc"));
}

TEST(StringsTest, PrintableEscapesControlBytesAndTruncates) {
  EXPECT_EQ(Printable("a\nb\x01"), "a\\x0ab\\x01");
  EXPECT_EQ(Printable(std::string(10, 'x'), 4), "xxxx...");
}

TEST(StringsTest, ParseIntBounds) {
  EXPECT_EQ(*ParseInt("2222"), 2222);
  EXPECT_THAT(ParseInt("-1"), StatusIs(Code::kInvalidArgument));
  EXPECT_THAT(ParseInt("12a"), StatusIs(Code::kInvalidArgument));
  EXPECT_THAT(ParseInt("9999999999"), StatusIs(Code::kInvalidArgument));
}

TEST(StringsTest, MatchPatternGlobsLikeSsh) {
  EXPECT_TRUE(MatchPattern("worker-3.ns", "worker-*"));
  EXPECT_TRUE(MatchPattern("worker-3", "worker-?"));
  EXPECT_TRUE(MatchPattern("aes128-ctr", "*-ctr"));
  EXPECT_TRUE(MatchPattern("", "*"));
  EXPECT_FALSE(MatchPattern("worker-30", "worker-?"));
  EXPECT_FALSE(MatchPattern("Worker-3", "worker-*"));  // Exact case.
  EXPECT_FALSE(MatchPattern("aes128-gcm", "*-ctr"));
}

TEST(StringsTest, ReadFileReportsMissingPath) {
  EXPECT_THAT(ReadFileToString("/nonexistent/k8s-agent"),
              StatusIs(Code::kNotFound, "/nonexistent/k8s-agent"));
}

}  // namespace
}  // namespace k8s_agent
