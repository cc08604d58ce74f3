// SPDX-License-Identifier: Apache-2.0
// Tests for string helpers and duration parsing.

#include "plugin/base/strings.h"

#include <gtest/gtest.h>

#include "tests/fakes/status_matchers.h"

namespace k8s_agent {
namespace {

TEST(EditDistanceTest, CountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(EditDistance("", ""), 0u);
  EXPECT_EQ(EditDistance("timeout", "timeout"), 0u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(EditDistance("abc", ""), 3u);
  EXPECT_EQ(EditDistance("namespce", "namespace"), 1u);  // Insertion.
  EXPECT_EQ(EditDistance("timeoutt", "timeout"), 1u);    // Deletion.
  EXPECT_EQ(EditDistance("selektor", "selector"), 1u);   // Substitution.
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("hostfiel", "hostfile"), 2u);  // A swap is two.
}

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
  EXPECT_EQ(FormatDuration(seconds(90)), "1m30s");
  EXPECT_EQ(FormatDuration(seconds(3720)), "1h2m");
  EXPECT_EQ(FormatDuration(Duration::zero()), "0ms");
  EXPECT_EQ(FormatDuration(-seconds(2)), "-2.0s");
}

TEST(DurationTest, FormatsThePaddedReportStyle) {
  constexpr int64_t kMs = 1000;
  constexpr int64_t kSec = 1000 * kMs;
  EXPECT_EQ(FormatMicrosPadded(850 * kMs), "850ms");
  EXPECT_EQ(FormatMicrosPadded(12300 * kMs), "12.3s");
  EXPECT_EQ(FormatMicrosPadded(422 * kSec), "7m02s");
  EXPECT_EQ(FormatMicrosPadded(3720 * kSec), "1h02m");
  EXPECT_EQ(FormatMicrosPadded(3600 * kSec), "1h00m");
  EXPECT_EQ(FormatMicrosPadded(-2 * kSec), "-2.0s");
  EXPECT_EQ(FormatMicrosPadded(0), "0ms");
}

TEST(DurationTest, BothStylesShareOneRule) {
  constexpr int64_t kMs = 1000;
  constexpr int64_t kSec = 1000 * kMs;
  // Same value, same unit; only the second part's padding differs.
  EXPECT_EQ(FormatDuration(seconds(422)), "7m2s");
  EXPECT_EQ(FormatMicrosPadded(422 * kSec), "7m02s");
  struct Case {
    int64_t us;
    const char* want;
  } cases[] = {
      // Truncated toward zero at the last digit shown: never rounded up
      // into the next unit.
      {999, "0ms"},           {999 * kMs + 999, "999ms"},
      {1 * kSec, "1.0s"},     {1250 * kMs, "1.2s"},
      {1350 * kMs, "1.3s"},   {1999 * kMs, "1.9s"},
      {59999 * kMs, "59.9s"}, {-500, "0ms"},  // Not "-0ms".
      {-1500 * kMs, "-1.5s"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(FormatMicrosPadded(c.us), c.want) << c.us;
    EXPECT_EQ(FormatDuration(std::chrono::microseconds(c.us)), c.want) << c.us;
  }
  EXPECT_EQ(FormatDuration(seconds(60)), "1m0s");
  EXPECT_EQ(FormatMicrosPadded(60 * kSec), "1m00s");
  EXPECT_EQ(FormatMicrosPadded(3599 * kSec + 999 * kMs), "59m59s");
  // The extremes do not overflow (INT64_MIN has no int64_t magnitude).
  EXPECT_EQ(FormatMicrosPadded(INT64_MAX), "2562047788h00m");
  EXPECT_EQ(FormatMicrosPadded(INT64_MIN), "-2562047788h00m");
  EXPECT_EQ(FormatDuration(Duration::max()), "2562047h47m");
}

TEST(DurationTest, FormatsWallClockMicros) {
  EXPECT_EQ(FormatWallMicros(0), "1970-01-01 00:00:00.000 UTC");
  EXPECT_EQ(FormatWallMicros(int64_t{1764579600123456}),
            "2025-12-01 09:00:00.123 UTC");
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

// A terminal acts on C1 controls (CSI is 0x9b alone, or U+009B) as on ESC;
// bytes that are not UTF-8 are shown, not passed on.
TEST(StringsTest, PrintableEscapesC1AndInvalidUtf8) {
  EXPECT_EQ(Printable("\x1b[2J\x7f"), "\\x1b[2J\\x7f");
  EXPECT_EQ(Printable("a\x9bKb"), "a\\x9bKb");
  EXPECT_EQ(Printable("\xc2\x9bK"), "\\xc2\\x9bK");  // U+009B
  EXPECT_EQ(Printable("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(Printable("\xc0\xaf"), "\\xc0\\xaf");           // Overlong.
  EXPECT_EQ(Printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // Surrogate.
  EXPECT_EQ(Printable("\xf4\x90\x80\x80"),
            "\\xf4\\x90\\x80\\x80");                   // Over U+10FFFF.
  EXPECT_EQ(Printable("ok\xe2\x9c"), "ok\\xe2\\x9c");  // Cut short.
  // Printable text in any script stays as it is.
  EXPECT_EQ(Printable("\xc3\xbc \xe2\x9c\x93 \xf0\x9f\x90\xb3 \xc2\xa0"),
            "\xc3\xbc \xe2\x9c\x93 \xf0\x9f\x90\xb3 \xc2\xa0");
  // Escaping twice changes nothing: callers may escape before the logger.
  EXPECT_EQ(Printable(Printable("a\nb\x9b")), Printable("a\nb\x9b"));
  // No limit: the logger keeps whole messages.
  EXPECT_EQ(Printable(std::string(300, 'x'), kNoPrintableLimit),
            std::string(300, 'x'));
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
