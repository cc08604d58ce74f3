// SPDX-License-Identifier: Apache-2.0
// The option tables against --help and the parser: an option is one table
// entry, so --help, the environment and the config file follow it.

#include "launcher/option_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "launcher/options.h"
#include "tests/fakes/status_matchers.h"

namespace k8s_agent {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The long options --help gives a line of their own ("  --name ARG  help").
std::set<std::string> HelpLongOptions() {
  static const std::regex kLine("^  --([a-z-]+)( [A-Z]+)? .*");
  std::set<std::string> names;
  for (const std::string& line : Lines(UsageText())) {
    std::smatch m;
    if (std::regex_match(line, m, kLine)) names.insert(m[1]);
  }
  return names;
}

TEST(OptionTableTest, EveryLongOptionIsInHelpAndViceVersa) {
  std::set<std::string> in_help = HelpLongOptions();
  std::set<std::string> in_table;
  for (const LongOption& opt : LongOptions()) {
    in_table.insert(opt.name);
    std::string head = std::string("  --") + opt.name;
    if (opt.arg != nullptr) head += std::string(" ") + opt.arg;
    // A head too long for its column ends its line; the help follows below.
    EXPECT_THAT(UsageText(),
                AnyOf(HasSubstr(head + " "), HasSubstr(head + "\n")))
        << opt.name;
  }
  EXPECT_EQ(in_help, in_table);
}

TEST(OptionTableTest, EverySettableOptionHasItsVariableInHelp) {
  std::string usage = UsageText();
  for (const LongOption& opt : LongOptions()) {
    std::string line = "  " + EnvName(opt) + " ";
    if (opt.settable()) {
      EXPECT_THAT(usage, HasSubstr(line)) << opt.name;
    } else if (std::string(opt.name) != "config") {
      // (K8S_AGENT_CONFIG names the file itself: it has its own line.)
      EXPECT_THAT(usage, ::testing::Not(HasSubstr(line))) << opt.name;
    }
  }
}

TEST(OptionTableTest, EveryShortFlagIsInHelpAndViceVersa) {
  std::string usage = UsageText();
  std::string ignored, refused;
  for (const ShortFlag& f : ShortFlags()) {
    if (f.help != nullptr) {
      EXPECT_THAT(usage, HasSubstr(std::string("\n  ") + f.head + " "))
          << f.flag;
      EXPECT_EQ(f.head[0], '-');
      EXPECT_EQ(f.head[1], f.flag);
      EXPECT_EQ(f.arg != nullptr, std::string(f.head).size() > 2 &&
                                      f.head[2] == ' ' && f.head[3] != '-')
          << f.flag;
    } else if (f.refused) {
      refused += std::string(refused.empty() ? "" : " ") + "-" + f.flag;
    } else {
      ignored += std::string(ignored.empty() ? "" : " ") + "-" + f.flag;
    }
  }
  EXPECT_THAT(usage, HasSubstr("  " + ignored + "\n" + std::string(31, ' ') +
                               "accepted and ignored"));
  EXPECT_THAT(usage, HasSubstr("  " + refused + "\n" + std::string(31, ' ') +
                               "refused, saying why"));
  // Every "  -X" line of the ssh section names a flag of the table.
  static const std::regex kLine("^  -([a-zA-Z0-9])[ ,].*");
  for (const std::string& line : Lines(usage)) {
    std::smatch m;
    if (std::regex_match(line, m, kLine)) {
      EXPECT_NE(FindShortFlag(m.str(1)[0]), nullptr) << line;
    }
  }
}

TEST(OptionTableTest, EverySettableOptionIsReadFromEnvAndFile) {
  // An empty value is "unset" in both: accepted whatever the option.
  for (const LongOption& opt : LongOptions()) {
    SCOPED_TRACE(opt.name);
    const std::string file = std::string(opt.name) + "=\n";
    auto read = [&](const std::string&) -> StatusOr<std::string> {
      return file;
    };
    StatusOr<Options> o = ParseOptions({"h", "c"}, {{EnvName(opt), ""}}, read);
    if (opt.settable()) {
      ASSERT_THAT(o, IsOk());
      EXPECT_THAT(o->notes, ::testing::IsEmpty());
    } else {
      EXPECT_THAT(o, StatusIs(Code::kInvalidArgument, "unknown setting"));
    }
  }
}

TEST(OptionTableTest, NamesAreUnique) {
  std::set<std::string> names;
  for (const LongOption& opt : LongOptions()) {
    EXPECT_TRUE(names.insert(opt.name).second) << opt.name;
    EXPECT_EQ(FindLongOption(opt.name), &opt);
  }
  std::set<char> flags;
  for (const ShortFlag& f : ShortFlags()) {
    EXPECT_TRUE(flags.insert(f.flag).second) << f.flag;
  }
}

TEST(OptionTableTest, MisspeltLongOptionGetsTheClosestOne) {
  auto parse = [](std::vector<std::string> args,
                  std::map<std::string, std::string> env = {},
                  std::string file = "") {
    return ParseOptions(args, env,
                        [&](const std::string&) -> StatusOr<std::string> {
                          if (file.empty()) return NotFoundError("none");
                          return file;
                        });
  };
  EXPECT_THAT(parse({"--namespce", "ns", "h", "c"}),
              StatusIs(Code::kInvalidArgument,
                       "--namespce: unknown option (did you mean "
                       "--namespace? see k8s-agent --help)"));
  EXPECT_THAT(parse({"--Timeout=5m", "h", "c"}),
              StatusIs(Code::kInvalidArgument, "did you mean --timeout?"));
  EXPECT_THAT(parse({"--hostfiel"}),
              StatusIs(Code::kInvalidArgument, "did you mean --hostfile?"));
  EXPECT_THAT(parse({"--kube=/k", "h", "c"}),  // A unique prefix.
              StatusIs(Code::kInvalidArgument, "did you mean --kubeconfig?"));
  // Nothing near enough: no guess.
  StatusOr<Options> o = parse({"--bogus", "h", "c"});
  EXPECT_THAT(o, StatusIs(Code::kInvalidArgument,
                          "--bogus: unknown option (see k8s-agent --help)"));
  // The file and the environment, in their own spelling.
  EXPECT_THAT(
      parse({"h", "c"}, {}, "selecter=role=w\n"),
      StatusIs(Code::kInvalidArgument, "did you mean selector? known:"));
  EXPECT_THAT(parse({"h", "c"}, {}, "K8S_AGENT_TIMEOT=5m\n"),
              StatusIs(Code::kInvalidArgument,
                       "did you mean K8S_AGENT_TIMEOUT? known:"));
  o = parse({"h", "c"}, {{"K8S_AGENT_NAMESPCE", "ns"}});
  ASSERT_THAT(o, IsOk());
  EXPECT_THAT(o->notes,
              ::testing::Contains("ignoring unknown environment variable "
                                  "K8S_AGENT_NAMESPCE (did you mean "
                                  "K8S_AGENT_NAMESPACE?)"));
}

TEST(OptionTableTest, ClosestLongOptionKeepsToItsLimits) {
  EXPECT_EQ(ClosestLongOption("namespace", false), FindLongOption("namespace"));
  EXPECT_EQ(ClosestLongOption("slot", false), FindLongOption("slots"));
  EXPECT_EQ(ClosestLongOption("wait", false), nullptr);  // Three prefixes.
  EXPECT_EQ(ClosestLongOption("xyz", false), nullptr);
  // --hostfile is command-line only: not offered for the file.
  EXPECT_EQ(ClosestLongOption("hostfile", false), FindLongOption("hostfile"));
  EXPECT_NE(ClosestLongOption("hostfile", true), FindLongOption("hostfile"));
}

}  // namespace
}  // namespace k8s_agent
