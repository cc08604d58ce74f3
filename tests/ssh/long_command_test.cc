// SPDX-License-Identifier: Apache-2.0
// PlanExec: the libssh2 limit, and the stdin bootstrap run by a real sh.

#include "plugin/ssh/long_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace k8s_agent::ssh {
namespace {

using ::testing::HasSubstr;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

// Runs `plan` as sshd would (`sh -c REQUEST`, stdin = preamble + input).
std::string RunWithSh(const ExecPlan& plan, const std::string& input,
                      int* status) {
  char dir_tmpl[] = "/tmp/k8s-long-cmd-XXXXXX";
  std::string dir = ::mkdtemp(dir_tmpl);
  std::ofstream(dir + "/request") << plan.request;
  std::ofstream(dir + "/stdin") << plan.stdin_preamble << input;
  std::string cmd = "sh -c \"$(cat " + dir + "/request)\" < " + dir +
                    "/stdin > " + dir + "/out 2>&1";
  *status = std::system(cmd.c_str());
  std::string out = ReadAll(dir + "/out");
  std::filesystem::remove_all(dir);
  return out;
}

TEST(LongCommandTest, FitsInTheRequestUpToLibssh2sLimit) {
  std::string fits(kMaxExecRequestCommand, 'x');
  ExecPlan plan = PlanExec(fits);
  EXPECT_EQ(plan.request, fits);
  EXPECT_TRUE(plan.stdin_preamble.empty());
  EXPECT_EQ(kMaxExecRequestCommand, 34725u);

  std::string over(kMaxExecRequestCommand + 1, 'x');
  plan = PlanExec(over);
  EXPECT_EQ(plan.stdin_preamble, over);
  EXPECT_LT(plan.request.size(), 300u);
  EXPECT_THAT(plan.request, HasSubstr("count=34726"));
}

TEST(LongCommandTest, BootstrapRunsTheCommandAndLeavesStdinToIt) {
  // Given a 120 KB command that quotes, expands and reads stdin, expect sh
  // to run exactly it, with the stdin that follows and its exit status.
  std::string pad(120000, 'p');
  std::string command = "v='a b'; echo \"$v\" ${#v}; : " + pad +
                        "\nread line; echo \"got $line\"; printf 'x\\n\\n'"
                        "; exit 7";
  ExecPlan plan = PlanExec(command);
  ASSERT_FALSE(plan.stdin_preamble.empty());
  int status = 0;
  std::string out = RunWithSh(plan, "hello\n", &status);
  EXPECT_EQ(out, "a b 3\ngot hello\nx\n\n");
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 7);
}

TEST(LongCommandTest, TrailingNewlinesOfTheCommandSurvive) {
  std::string command = "cat <<'EOF'\n" + std::string(40000, 'y') + "\nEOF\n\n";
  int status = 0;
  std::string out = RunWithSh(PlanExec(command), "", &status);
  EXPECT_EQ(out, std::string(40000, 'y') + "\n");
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace k8s_agent::ssh
