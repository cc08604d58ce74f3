// SPDX-License-Identifier: Apache-2.0
// The --help layout and "did you mean" both programs' options use.

#include "plugin/base/usage_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "tests/fakes/status_matchers.h"

namespace k8s_agent {
namespace {

const std::vector<std::string_view> kNames = {"port", "keys", "run-dir",
                                              "run-as", "session-env"};

TEST(UsageTextTest, ClosestNamePrefersAUniquePrefix) {
  EXPECT_EQ(ClosestName("sess", kNames), 4u);
  EXPECT_EQ(ClosestName("SESS", kNames), 4u);  // Lower-cased.
  EXPECT_EQ(ClosestName("run-a", kNames), 3u);
  // "run" is a prefix of two, and more than one edit from each: no guess.
  EXPECT_EQ(ClosestName("run", kNames), std::nullopt);
  // Too short to count as a prefix, and two edits from "keys".
  EXPECT_EQ(ClosestName("ke", kNames), std::nullopt);
}

TEST(UsageTextTest, ClosestNameKeepsToTheEditLimitOfTheLength) {
  EXPECT_EQ(ClosestName("prt", kNames), 0u);  // One edit, up to 4.
  // Swapped letters are two edits: too many for 4 characters.
  EXPECT_EQ(ClosestName("prot", kNames), std::nullopt);
  EXPECT_EQ(ClosestName("run-dri", kNames), 2u);      // Two, up to 8.
  EXPECT_EQ(ClosestName("sesion-envv", kNames), 4u);  // Two of three.
  EXPECT_EQ(ClosestName("namespace", kNames), std::nullopt);
  EXPECT_EQ(ClosestName("keyz", {"keys", "keyx"}), 0u);  // A tie: the first.
  EXPECT_EQ(ClosestName("port", {}), std::nullopt);
}

TEST(UsageTextTest, HelpLinePutsHelpInItsColumn) {
  EXPECT_EQ(HelpLine("--port N", "port to listen on"),
            "  --port N" + std::string(kHelpColumn - 10, ' ') +
                "port to listen on\n");
  // A head that fills the column: the help starts on the next line.
  std::string head(kHelpColumn, 'x');
  EXPECT_EQ(HelpLine(head, "help"),
            "  " + head + "\n" + std::string(kHelpColumn, ' ') + "help\n");
}

TEST(UsageTextTest, WrapTextEndsLinesBeforeColumnEighty) {
  std::string text;
  for (int i = 0; i < 40; ++i) text += "word" + std::to_string(i) + " ";
  text.pop_back();
  std::string wrapped = WrapText(text, 4);
  size_t start = 0;
  size_t lines = 0;
  while (start <= wrapped.size()) {
    size_t end = wrapped.find('\n', start);
    if (end == std::string::npos) end = wrapped.size();
    // The first line starts at column 4 too: it follows a head.
    EXPECT_LE((lines == 0 ? 4 : 0) + end - start, kHelpWidth);
    if (lines > 0) {
      EXPECT_EQ(wrapped.substr(start, 4), "    ");
    }
    ++lines;
    start = end + 1;
  }
  EXPECT_GT(lines, 3u);
  EXPECT_EQ(WrapText("one two", 0), "one two");
}

TEST(UsageTextTest, UsageErrorShape) {
  EXPECT_THAT(
      UsageError("--port x", "not a port", "use 1-65535"),
      StatusIs(Code::kInvalidArgument, "--port x: not a port (use 1-65535)"));
}

// The value, or the error's message.
std::string ValueOrError(const StatusOr<std::string>& value) {
  return value.ok() ? *value : "error: " + value.status().message();
}

TEST(UsageTextTest, LongOptionValueFromEqualsOrTheNextWord) {
  std::vector<std::string> args = {"--port=22", "--port", "2222", "--port"};
  size_t i = 1;
  EXPECT_EQ(ValueOrError(LongOptionValue(args, &i, args[0], 6, "--port", "PORT",
                                         "", "see --help")),
            "22");
  EXPECT_EQ(i, 1u);
  i = 2;
  EXPECT_EQ(ValueOrError(LongOptionValue(args, &i, args[1], std::string::npos,
                                         "--port", "PORT", "", "see --help")),
            "2222");
  EXPECT_EQ(i, 3u);
  i = 4;
  EXPECT_THAT(LongOptionValue(args, &i, args[3], std::string::npos, "--port",
                              "PORT", "", "see --help"),
              StatusIs(Code::kInvalidArgument,
                       "--port: missing value (use --port PORT or "
                       "--port=PORT)"));
}

TEST(UsageTextTest, LongOptionValueOfAFlag) {
  std::vector<std::string> args = {"--help", "next", "--help=yes"};
  size_t i = 1;
  EXPECT_EQ(
      ValueOrError(LongOptionValue(args, &i, args[0], std::string::npos,
                                   "--help", nullptr, "true", "see --help")),
      "true");
  EXPECT_EQ(i, 1u);  // A flag takes no word.
  i = 3;
  EXPECT_THAT(LongOptionValue(args, &i, args[2], 6, "--help", nullptr, "true",
                              "see --help"),
              StatusIs(Code::kInvalidArgument,
                       "--help: takes no value (write --help alone; see "
                       "--help)"));
}

}  // namespace
}  // namespace k8s_agent
