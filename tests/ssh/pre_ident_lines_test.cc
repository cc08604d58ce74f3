// SPDX-License-Identifier: Apache-2.0

#include "plugin/ssh/pre_ident_lines.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/fakes/status_matchers.h"

namespace k8s_agent::ssh {
namespace {

using ::testing::HasSubstr;

std::string Lines(size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += "hello from a wrapper\r\n";
  return s;
}

TEST(PreIdentLinesTest, LinesBeforeTheIdentAreAllowed) {
  PreIdentLines p;
  EXPECT_THAT(p.Feed(Lines(PreIdentLines::kMaxLines - 1)), IsOk());
  EXPECT_FALSE(p.ident_seen());
  // libssh2 reads the banner a byte at a time.
  for (char c : std::string("SSH-2.0-OpenSSH_9.2\r\n")) {
    ASSERT_THAT(p.Feed(std::string(1, c)), IsOk());
  }
  EXPECT_TRUE(p.ident_seen());
  // What follows is binary: never looked at.
  EXPECT_THAT(p.Feed(std::string("\0\0\0\x14", 4) + Lines(5000)), IsOk());
}

TEST(PreIdentLinesTest, ManyLinesFailAtOnceAsInSsh) {
  PreIdentLines p;
  Status s = p.Feed(Lines(PreIdentLines::kMaxLines));
  EXPECT_THAT(s, StatusIs(Code::kFailedPrecondition,
                          "no SSH version received in the first 1024 lines"));
  EXPECT_THAT(s.message(), HasSubstr("point -p / Port at the sshd"));
  // Sticky: an ident after that is too late.
  EXPECT_THAT(p.Feed("SSH-2.0-x\r\n"), StatusIs(Code::kFailedPrecondition));
  EXPECT_FALSE(p.ident_seen());
  EXPECT_FALSE(p.status().ok());
}

TEST(PreIdentLinesTest, LongLineAndNulFail) {
  PreIdentLines long_line;
  EXPECT_THAT(long_line.Feed(std::string(PreIdentLines::kMaxLineLength, 'x')),
              IsOk());
  EXPECT_THAT(long_line.Feed("x"), StatusIs(Code::kFailedPrecondition,
                                            "line 1 before the SSH "
                                            "version is over 8192"));
  PreIdentLines nul;
  EXPECT_THAT(nul.Feed(std::string("a\nb\0", 4)),
              StatusIs(Code::kFailedPrecondition,
                       "line 2 before the SSH "
                       "version contains a NUL"));
}

TEST(PreIdentLinesTest, IdentOnlyAtTheStartOfALine) {
  PreIdentLines p;
  EXPECT_THAT(p.Feed("not SSH-2.0-x\n"), IsOk());
  EXPECT_FALSE(p.ident_seen());
  EXPECT_THAT(p.Feed("SSH-"), IsOk());
  EXPECT_TRUE(p.ident_seen());
}

}  // namespace
}  // namespace k8s_agent::ssh
