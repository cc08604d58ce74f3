// SPDX-License-Identifier: Apache-2.0
// Tests for TreeSettings: what a launch tree hands down, and argv completed
// from it the way PRRTE's '=' cut demands.

#include "launcher/tree_settings.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "launcher/options.h"
#include "tests/fakes/status_matchers.h"

namespace k8s_agent {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::Not;
using Args = std::vector<std::string>;

// The stock example's arguments, as prterun on the launcher passes them.
const Args kLauncher = {"-p", "2222",
                        "-i", "/etc/ssh-secret/id_ed25519",
                        "-o", "UserKnownHostsFile=/etc/ssh-secret/known_hosts",
                        "-o", "ConnectionAttempts=10"};

Args With(Args options, const Args& rest) {
  options.insert(options.end(), rest.begin(), rest.end());
  return options;
}

const Args kHostAndCommand = {"train-worker-1", "PRTE_PREFIX=/usr;",
                              "/usr/bin/prted", "--tree-spawn"};

TEST(TreeSettingsTest, EncodesAndDecodesEveryField) {
  TreeSettings s;
  s.level = 2;
  s.via = "w-0";
  s.args = kLauncher;
  s.env = {{"K8S_AGENT_NAMESPACE", "team a"}, {"KUBERNETES_SERVICE_PORT", "1"}};
  const std::string text = s.Encode();
  // Safe unquoted in sh and csh: base64 only.
  EXPECT_EQ(text.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
                                   "qrstuvwxyz0123456789+/="),
            std::string::npos);
  StatusOr<TreeSettings> back = TreeSettings::Decode(text);
  ASSERT_THAT(back, IsOk());
  EXPECT_EQ(back->level, 2);
  EXPECT_EQ(back->via, "w-0");
  EXPECT_EQ(back->args, kLauncher);
  EXPECT_EQ(back->env, s.env);
}

TEST(TreeSettingsTest, RefusesWhatEncodeDidNotWrite) {
  EXPECT_THAT(TreeSettings::Decode("not base64!"), Not(IsOk()));
  EXPECT_THAT(TreeSettings::Decode("bm90IGpzb24="), Not(IsOk()));  // not json
  EXPECT_THAT(TreeSettings::Decode("eyJhcmdzIjpbXX0="),
              Not(IsOk()));  // no level
}

TEST(TreeSettingsTest, OnlyTreeDaemonLaunchesCarrySettings) {
  EXPECT_TRUE(
      IsTreeLaunch({"/usr/bin/prted", "--prtemca", "x", "--tree-spawn"}));
  EXPECT_TRUE(IsTreeLaunch({"orted", "-mca", "ess", "env", "--tree-spawn"}));
  EXPECT_FALSE(IsTreeLaunch({"/usr/bin/prted", "--daemonize"}));
  EXPECT_FALSE(IsTreeLaunch({"echo", "--tree-spawnx"}));
}

TEST(TreeSettingsTest, HandsDownTheAgentsSettingsButNeverItsOwnState) {
  std::map<std::string, std::string> env = {
      {"K8S_AGENT_NAMESPACE", "mpi"},
      {"K8S_AGENT_TREE", "x"},
      {"K8S_AGENT_TREE_REPORT", "pipe:[1]"},
      {"KUBERNETES_SERVICE_HOST", "10.96.0.1"},
      {"KUBERNETES_SERVICE_PORT", "443"},
      {"HOME", "/root"},
      {"PATH", "/usr/bin"}};
  EXPECT_THAT(TreeEnvironment(env),
              ElementsAre(std::pair<const std::string, std::string>(
                              "K8S_AGENT_NAMESPACE", "mpi"),
                          std::pair<const std::string, std::string>(
                              "KUBERNETES_SERVICE_HOST", "10.96.0.1"),
                          std::pair<const std::string, std::string>(
                              "KUBERNETES_SERVICE_PORT", "443")));
}

TEST(TreeSettingsTest, KnowsWhichVariablesNameAFileOfThePod) {
  EXPECT_TRUE(IsFileSetting("K8S_AGENT_SSH_CONFIG"));
  EXPECT_TRUE(IsFileSetting("K8S_AGENT_KUBECONFIG"));
  EXPECT_TRUE(IsFileSetting("K8S_AGENT_TRACE"));
  EXPECT_TRUE(IsFileSetting("K8S_AGENT_CONFIG"));
  EXPECT_FALSE(IsFileSetting("K8S_AGENT_NAMESPACE"));
  EXPECT_FALSE(IsFileSetting("K8S_AGENT_TIMEOUT"));
  EXPECT_FALSE(IsFileSetting("KUBERNETES_SERVICE_HOST"));
}

TEST(TreeSettingsTest, ShCommandExportsTheSettingsAndKeepsStderr) {
  TreeSettings s;
  s.via = "w-0";
  const std::string command = " PRTE_PREFIX=/usr;export PRTE_PREFIX; prted";
  std::string out = TreeLaunchCommand(command, {"prted"}, s);
  EXPECT_THAT(out, HasSubstr("exec 9>&2;K8S_AGENT_TREE=" + s.Encode() + ";"));
  EXPECT_THAT(out, HasSubstr("K8S_AGENT_TREE_REPORT=$(readlink /proc/$$/fd/9"));
  EXPECT_THAT(out, HasSubstr("export K8S_AGENT_TREE K8S_AGENT_TREE_REPORT;"));
  EXPECT_EQ(out.substr(out.size() - command.size()), command);
  EXPECT_THAT(out, Not(HasSubstr("command -v")));
}

// The daemon's command names the agent it will run: checked on the pod.
TEST(TreeSettingsTest, ShCommandChecksTheNextLevelsAgent) {
  TreeSettings s;
  s.via = "w-0";
  std::string out = TreeLaunchCommand(
      "prted", {"prted", "--prtemca", "plm_ssh_agent", "\"/opt/k/k8s-agent\""},
      s);
  EXPECT_THAT(out, HasSubstr("command -v /opt/k/k8s-agent >/dev/null 2>&1||"
                             "echo \"k8s-agent: w-0: /opt/k/k8s-agent "
                             "(plm_ssh_agent) is not on this pod"));
  out = TreeLaunchCommand("orted",
                          {"orted", "-mca", "plm_rsh_agent", "ssh : rsh"}, s);
  EXPECT_THAT(out, HasSubstr("command -v ssh >/dev/null"));
  // Nothing the shell would read as more than a word.
  out = TreeLaunchCommand("prted",
                          {"prted", "--prtemca", "plm_ssh_agent", "$(x)"}, s);
  EXPECT_THAT(out, Not(HasSubstr("command -v")));
}

TEST(TreeSettingsTest, CshCommandUsesSetenv) {
  TreeSettings s;
  const std::string command = "setenv PRTE_PREFIX /usr ; prted";
  EXPECT_EQ(TreeLaunchCommand(command, {"prted"}, s),
            "setenv K8S_AGENT_TREE " + s.Encode() + " ; " + command);
}

// PRRTE 3.0.14 cut "-o UserKnownHostsFile=/k -o ConnectionAttempts=10" at
// its first '=': the rest of the value is gone.
TEST(TreeSettingsTest, CompletesPrrtesCutAtTheFirstEquals) {
  Args worker = With({"-p", "2222", "-i", "/etc/ssh-secret/id_ed25519", "-o",
                      "UserKnownHostsFile"},
                     kHostAndCommand);
  EXPECT_THAT(CompleteFromTree(worker, kLauncher),
              ElementsAreArray(With(kLauncher, kHostAndCommand)));
}

// The agent string is a value of its own, cut at its own first '='.
TEST(TreeSettingsTest, CompletesACutAgentStringAndCutArgs) {
  Args launcher = {"--namespace=team", "-o", "ConnectionAttempts=10"};
  Args worker =
      With({"--namespace", "-o", "ConnectionAttempts"}, kHostAndCommand);
  EXPECT_THAT(CompleteFromTree(worker, launcher),
              ElementsAreArray(With(launcher, kHostAndCommand)));
}

// An empty value made PRRTE end the daemon's argv early: plm_ssh_args
// never arrived.
TEST(TreeSettingsTest, CompletesArgsThatNeverArrived) {
  EXPECT_THAT(CompleteFromTree(kHostAndCommand, kLauncher),
              ElementsAreArray(With(kLauncher, kHostAndCommand)));
}

TEST(TreeSettingsTest, LeavesWholeArgsAlone) {
  Args whole = With(kLauncher, kHostAndCommand);
  EXPECT_EQ(CompleteFromTree(whole, kLauncher), whole);
  EXPECT_EQ(CompleteFromTree(kHostAndCommand, {}), kHostAndCommand);
}

// Words the first level never had are the daemon's own: kept after the
// completed ones, never dropped, never taken for a cut.
TEST(TreeSettingsTest, KeepsWordsTheFirstLevelNeverHad) {
  Args worker = With({"-o", "UserKnownHostsFile", "-v"}, kHostAndCommand);
  Args launcher = {"-o", "UserKnownHostsFile=/k"};
  Args expected = With(launcher, With({"-v"}, kHostAndCommand));
  EXPECT_EQ(CompleteFromTree(worker, launcher), expected);
  // "-o Other" is no cut of anything: the parse will say what it is.
  Args other = With({"-o", "Other"}, kHostAndCommand);
  EXPECT_EQ(CompleteFromTree(other, {"-x"}),
            With({"-x", "-o", "Other"}, kHostAndCommand));
}

// What a completed argv parses to: the very settings of the first level.
TEST(TreeSettingsTest, CompletedArgsParseAsTheFirstLevelsDid) {
  Args worker = With({"-p", "2222", "-i", "/etc/ssh-secret/id_ed25519", "-o",
                      "UserKnownHostsFile"},
                     kHostAndCommand);
  auto no_file = [](const std::string&) -> StatusOr<std::string> {
    return NotFoundError("none");
  };
  EXPECT_THAT(ParseOptions(worker, {}, no_file),
              StatusIs(Code::kInvalidArgument, "PRRTE cut"));
  StatusOr<Options> completed =
      ParseOptions(CompleteFromTree(worker, kLauncher), {}, no_file);
  ASSERT_THAT(completed, IsOk());
  StatusOr<Options> first =
      ParseOptions(With(kLauncher, kHostAndCommand), {}, no_file);
  ASSERT_THAT(first, IsOk());
  EXPECT_EQ(completed->option_words, first->option_words);
  EXPECT_EQ(completed->option_words, kLauncher);
  EXPECT_EQ(completed->host, "train-worker-1");
  EXPECT_EQ(completed->command, first->command);
}

}  // namespace
}  // namespace k8s_agent
