// SPDX-License-Identifier: Apache-2.0
// k8s-agent-sshd's option table against its parser and --help.

#include "launcher/sshd_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "tests/fakes/status_matchers.h"

namespace k8s_agent::sshd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

StatusOr<SshdOptions> Parse(std::vector<std::string> args) {
  return ParseSshdOptions(args);
}

// A value each option takes.
std::string SampleValue(const std::string& name) {
  if (name == "port") return "22";
  if (name == "log-level") return "VERBOSE";
  return "/some/value";
}

TEST(SshdOptionsTest, DefaultsWithoutArguments) {
  StatusOr<SshdOptions> o = Parse({});
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->port, 2222);
  EXPECT_EQ(o->keys, "/etc/ssh-secret");
  EXPECT_EQ(o->user, "");
  EXPECT_EQ(o->sshd, "");
  EXPECT_EQ(o->run_dir, "");
  EXPECT_EQ(o->log_level, "INFO");
  EXPECT_THAT(o->session_env, IsEmpty());
  EXPECT_THAT(o->sshd_args, IsEmpty());
  EXPECT_FALSE(o->help);
  EXPECT_FALSE(o->version);
}

TEST(SshdOptionsTest, EveryOptionSeparateAndAttached) {
  // Given each option as "--name value" and as "--name=value", expect the
  // same field set.
  for (bool attached : {false, true}) {
    std::vector<std::string> args;
    auto add = [&](const std::string& name, const std::string& value) {
      if (attached) {
        args.push_back("--" + name + "=" + value);
      } else {
        args.push_back("--" + name);
        args.push_back(value);
      }
    };
    add("port", "22");
    add("keys", "/root/.ssh");
    add("user", "mpiuser");
    add("sshd", "/opt/k8s-agent/sshd");
    add("run-dir", "/tmp/run");
    add("session-env", "A,,B");
    add("log-level", "debug3");
    StatusOr<SshdOptions> o = Parse(args);
    ASSERT_THAT(o, IsOk()) << attached;
    EXPECT_EQ(o->port, 22);
    EXPECT_EQ(o->keys, "/root/.ssh");
    EXPECT_EQ(o->user, "mpiuser");
    EXPECT_EQ(o->sshd, "/opt/k8s-agent/sshd");
    EXPECT_EQ(o->run_dir, "/tmp/run");
    EXPECT_THAT(o->session_env, ElementsAre("A", "B"));
    EXPECT_EQ(o->log_level, "debug3");
    EXPECT_THAT(o->sshd_args, IsEmpty());
  }
}

TEST(SshdOptionsTest, FlagsLongShortAndGrouped) {
  for (std::vector<std::string> args :
       {std::vector<std::string>{"--help", "--version"},
        std::vector<std::string>{"-h", "-V"},
        std::vector<std::string>{"-hV"}}) {
    StatusOr<SshdOptions> o = Parse(args);
    ASSERT_THAT(o, IsOk()) << args[0];
    EXPECT_TRUE(o->help) << args[0];
    EXPECT_TRUE(o->version) << args[0];
  }
  EXPECT_TRUE(Parse({"-V"})->version);
  EXPECT_FALSE(Parse({"-V"})->help);
}

TEST(SshdOptionsTest, LastValueWinsButSessionEnvAdds) {
  StatusOr<SshdOptions> o =
      Parse({"--port", "22", "--port=2200", "--session-env", "A,B",
             "--session-env=C", "--keys", "/a", "--keys", "/b"});
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->port, 2200);
  EXPECT_EQ(o->keys, "/b");
  EXPECT_THAT(o->session_env, ElementsAre("A", "B", "C"));
}

TEST(SshdOptionsTest, EmptyPathsMeanTheDefault) {
  // Given "--user=" and the like, expect the field empty: the default.
  StatusOr<SshdOptions> o =
      Parse({"--user=", "--sshd=", "--run-dir=", "--session-env="});
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->user, "");
  EXPECT_EQ(o->sshd, "");
  EXPECT_EQ(o->run_dir, "");
  EXPECT_THAT(o->session_env, IsEmpty());
}

TEST(SshdOptionsTest, SshdArgumentsAfterDashDashOrTheFirstNonOption) {
  StatusOr<SshdOptions> dashes =
      Parse({"--port", "22", "--", "-o", "LogLevel=DEBUG3", "--port"});
  ASSERT_THAT(dashes, IsOk());
  EXPECT_EQ(dashes->port, 22);
  EXPECT_THAT(dashes->sshd_args,
              ElementsAre("-o", "LogLevel=DEBUG3", "--port"));
  // Options end at the first other word; the rest is sshd's, as it is.
  StatusOr<SshdOptions> word = Parse({"--keys", "/k", "extra", "--port", "1"});
  ASSERT_THAT(word, IsOk());
  EXPECT_EQ(word->port, 2222);
  EXPECT_THAT(word->sshd_args, ElementsAre("extra", "--port", "1"));
  StatusOr<SshdOptions> dash = Parse({"-", "--help"});
  ASSERT_THAT(dash, IsOk());
  EXPECT_FALSE(dash->help);
  EXPECT_THAT(dash->sshd_args, ElementsAre("-", "--help"));
  // A value that looks like an option is still the value.
  StatusOr<SshdOptions> value = Parse({"--keys", "--port"});
  ASSERT_THAT(value, IsOk());
  EXPECT_EQ(value->keys, "--port");
}

TEST(SshdOptionsTest, MissingValues) {
  for (const char* name : {"port", "keys", "user", "sshd", "run-dir",
                           "session-env", "log-level"}) {
    std::string flag = std::string("--") + name;
    EXPECT_THAT(Parse({flag}),
                StatusIs(Code::kInvalidArgument, flag + ": missing value"))
        << name;
  }
  EXPECT_THAT(Parse({"--port"}),
              StatusIs(Code::kInvalidArgument, "use --port N or --port=N"));
}

TEST(SshdOptionsTest, BadValues) {
  for (const char* port : {"0", "65536", "x", "", "-1"}) {
    EXPECT_THAT(Parse({"--port", port}),
                StatusIs(Code::kInvalidArgument, "not a port (use 1-65535)"))
        << port;
  }
  EXPECT_THAT(Parse({"--port", "65535"}), IsOk());
  EXPECT_THAT(Parse({"--log-level", "LOUD"}),
              StatusIs(Code::kInvalidArgument,
                       "--log-level LOUD: not one of sshd's levels"));
  EXPECT_THAT(Parse({"--help=yes"}),
              StatusIs(Code::kInvalidArgument, "--help: takes no value"));
}

TEST(SshdOptionsTest, UnknownOptionsSayWhatWasMeant) {
  EXPECT_THAT(Parse({"--portt", "22"}),
              StatusIs(Code::kInvalidArgument,
                       "--portt: unknown option (did you mean --port? see "
                       "k8s-agent-sshd --help)"));
  EXPECT_THAT(Parse({"--session-evn=A"}),
              StatusIs(Code::kInvalidArgument, "did you mean --session-env?"));
  // A prefix is not taken as the option, only suggested.
  EXPECT_THAT(Parse({"--run", "/tmp/r"}),
              StatusIs(Code::kInvalidArgument,
                       "--run: unknown option (did you mean --run-dir?"));
  EXPECT_THAT(Parse({"--namespace", "x"}),
              StatusIs(Code::kInvalidArgument,
                       "--namespace: unknown option (see k8s-agent-sshd "
                       "--help)"));
  EXPECT_THAT(Parse({"-p", "22"}),
              StatusIs(Code::kInvalidArgument,
                       "-p: unknown option (k8s-agent-sshd takes -h, -V"));
  EXPECT_THAT(Parse({"-hx"}),
              StatusIs(Code::kInvalidArgument, "-x (in \"-hx\"): unknown"));
  // The first bad option fails the parse, even after --help.
  EXPECT_THAT(Parse({"--help", "--bogus"}),
              StatusIs(Code::kInvalidArgument, "--bogus: unknown option"));
}

TEST(SshdOptionsTest, ShortNamesAreFlagsOnly) {
  // ScanShort gives no value: a short name on an option with one would
  // never get it.
  std::set<char> shorts;
  for (const SshdOption& opt : SshdOptionTable()) {
    if (opt.short_name == '\0') continue;
    EXPECT_EQ(opt.arg, nullptr) << opt.name;
    EXPECT_TRUE(shorts.insert(opt.short_name).second) << opt.name;
  }
  EXPECT_EQ(shorts, (std::set<char>{'h', 'V'}));
}

TEST(SshdOptionsTest, HelpListsEveryOptionOfTheTable) {
  const std::string usage = SshdUsageText();
  for (const SshdOption& opt : SshdOptionTable()) {
    std::string head = std::string("--") + opt.name;
    if (opt.short_name != '\0') {
      head = std::string("-") + opt.short_name + ", " + head;
    }
    if (opt.arg != nullptr) head += std::string(" ") + opt.arg;
    EXPECT_THAT(usage, HasSubstr("\n  " + head + " ")) << opt.name;
    // And the parser takes what --help lists.
    std::vector<std::string> args = {std::string("--") + opt.name};
    if (opt.arg != nullptr) args.push_back(SampleValue(opt.name));
    EXPECT_THAT(Parse(args), IsOk()) << opt.name;
  }
  EXPECT_THAT(usage, HasSubstr("Usage: k8s-agent-sshd [options]"));
}

TEST(SshdOptionsTest, HelpStatesTheDefaults) {
  SshdOptions defaults;
  // Wrapped lines joined, as a reader reads them.
  std::string usage;
  for (char c : SshdUsageText()) {
    bool space = c == ' ' || c == '\n';
    if (!space || (!usage.empty() && usage.back() != ' ')) {
      usage += space ? ' ' : c;
    }
  }
  EXPECT_THAT(usage, HasSubstr("(default " + std::to_string(defaults.port)));
  EXPECT_THAT(usage, HasSubstr("(default " + defaults.keys));
  EXPECT_THAT(usage, HasSubstr("(default " + defaults.log_level));
}

TEST(SshdOptionsTest, HelpFitsInEightyColumns) {
  const std::string usage = SshdUsageText();
  size_t start = 0;
  while (start < usage.size()) {
    size_t end = usage.find('\n', start);
    ASSERT_NE(end, std::string::npos) << "ends without a newline";
    EXPECT_LE(end - start, 79u) << usage.substr(start, end - start);
    start = end + 1;
  }
  EXPECT_THAT(usage, Not(HasSubstr("  \n")));
}

}  // namespace
}  // namespace k8s_agent::sshd
