// SPDX-License-Identifier: Apache-2.0
// Tests for the logger: one line per message, whatever the message holds.

#include "plugin/base/log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "tests/fakes/log_capture.h"

namespace k8s_agent {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A pod's status.message (or any server text) that tries to forge a line
// of another host and to colour the terminal.
TEST(LogTest, ControlCharactersCannotForgeALineOrReachTheTerminal) {
  std::string logged = CaptureLog([] {
    LogError(
        "w-0: pod default/w-0 is Failed: Evicted: gone\nk8s-agent: "
        "w-1: forged\r\x1b[31mred\x7f\x9bK");
  });
  EXPECT_EQ(logged,
            "k8s-agent: w-0: pod default/w-0 is Failed: Evicted: gone\\x0a"
            "k8s-agent: w-1: forged\\x0d\\x1b[31mred\\x7f\\x9bK\n");
  EXPECT_EQ(std::count(logged.begin(), logged.end(), '\n'), 1);
  EXPECT_THAT(logged, Not(HasSubstr("\x1b")));
}

TEST(LogTest, PrintableUtf8StaysAsIs) {
  std::string logged =
      CaptureLog([] { LogError("\xc3\xa9t\xc3\xa9 \xe2\x9c\x93"); });
  EXPECT_EQ(logged, "k8s-agent: \xc3\xa9t\xc3\xa9 \xe2\x9c\x93\n");
}

// Long messages (every key tried, a pod's conditions) are not cut.
TEST(LogTest, LongMessagesAreNotTruncated) {
  std::string message(5000, 'x');
  EXPECT_EQ(CaptureLog([&] { LogError(message); }),
            "k8s-agent: " + message + "\n");
}

// -v turns timestamps on: each line starts with the UTC time of day, and
// "k8s-agent: " follows whole. Off (the default), lines are as they were.
TEST(LogTest, TimestampsStartTheLineWhenOn) {
  SetLogTimestamps(true);
  std::string logged = CaptureLog([] { LogError("w-0: resolved"); });
  SetLogTimestamps(false);
  EXPECT_THAT(logged, ::testing::MatchesRegex(
                          "[0-2][0-9]:[0-5][0-9]:[0-6][0-9]\\.[0-9]{3} "
                          "k8s-agent: w-0: resolved\n"));
  EXPECT_EQ(CaptureLog([] { LogError("w-0: resolved"); }),
            "k8s-agent: w-0: resolved\n");
}

}  // namespace
}  // namespace k8s_agent
