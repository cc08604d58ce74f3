// SPDX-License-Identifier: Apache-2.0
// Exec credential plugins: the protocol, running one, and the cache the
// agents of a job share.

#include "plugin/kube/exec_credential.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "plugin/kube/credential_cache.h"
#include "tests/fakes/status_matchers.h"

namespace k8s_agent::kube {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class ExecCredentialTest : public ::testing::Test {
 protected:
  ExecCredentialTest() {
    char tmpl[] = "/tmp/k8s-exec-cred-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
  }
  ~ExecCredentialTest() override { std::filesystem::remove_all(dir_); }
  std::string Script(const std::string& name, const std::string& body) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << "#!/bin/sh\n" << body;
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
    return path;
  }
  std::string Read(const std::string& rel) {
    std::ifstream in(dir_ + "/" + rel);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  ExecConfig Exec(const std::string& command) {
    ExecConfig e;
    e.api_version = kExecApiV1;
    e.command = command;
    e.interactive_mode = "Never";
    e.where = "KC: user \"u\"";
    return e;
  }
  std::string dir_;
};

TEST_F(ExecCredentialTest, ParsesTokenAndExpiry) {
  auto c = ParseExecCredential(
      R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",
          "status":{"token":"tok","expirationTimestamp":"2030-01-02T03:04:05Z"}})",
      kExecApiV1, "p");
  ASSERT_THAT(c.status(), IsOk());
  EXPECT_EQ(c->token, "tok");
  EXPECT_EQ(c->expires_at, 1893553445);
}

TEST_F(ExecCredentialTest, RefusesAnotherApiVersionAndEmptyStatus) {
  EXPECT_THAT(ParseExecCredential(
                  R"({"apiVersion":"client.authentication.k8s.io/v1beta1",
                      "kind":"ExecCredential","status":{"token":"t"}})",
                  kExecApiV1, "p"),
              StatusIs(Code::kFailedPrecondition,
                       "configured to use API version "
                       "client.authentication.k8s.io/v1"));
  EXPECT_THAT(ParseExecCredential(
                  R"({"apiVersion":"client.authentication.k8s.io/v1",
                      "kind":"ExecCredential","status":{}})",
                  kExecApiV1, "p"),
              StatusIs(Code::kFailedPrecondition, "token or cert/key"));
  EXPECT_THAT(ParseExecCredential("not json", kExecApiV1, "p"),
              StatusIs(Code::kFailedPrecondition, "ExecCredential JSON"));
}

TEST_F(ExecCredentialTest, ClientCertificateNeedsItsKey) {
  auto c = ParseExecCredential(
      R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",
          "status":{"clientCertificateData":"C","clientKeyData":"K"}})",
      kExecApiV1, "p");
  ASSERT_THAT(c.status(), IsOk());
  EXPECT_EQ(c->client_key_pem, "K");
  EXPECT_THAT(ParseExecCredential(
                  R"({"apiVersion":"client.authentication.k8s.io/v1",
                      "kind":"ExecCredential",
                      "status":{"clientCertificateData":"C"}})",
                  kExecApiV1, "p"),
              StatusIs(Code::kFailedPrecondition, "both are needed"));
}

TEST_F(ExecCredentialTest, Rfc3339) {
  EXPECT_EQ(*ParseRfc3339("1970-01-01T00:00:10Z"), 10);
  EXPECT_EQ(*ParseRfc3339("1970-01-01T01:00:10.123+01:00"), 10);
  EXPECT_FALSE(ParseRfc3339("1970-01-01 00:00:10").ok());
  EXPECT_FALSE(ParseRfc3339("tomorrow").ok());
}

TEST_F(ExecCredentialTest, ExecInfoHasClusterOnlyWhenAsked) {
  ExecConfig e = Exec("x");
  ExecClusterInfo info;
  info.server = "https://s:6443";
  std::string plain = ExecInfoJson(e, info);
  EXPECT_THAT(plain, HasSubstr("\"interactive\":false"));
  EXPECT_THAT(plain, HasSubstr("\"kind\":\"ExecCredential\""));
  EXPECT_THAT(plain, Not(HasSubstr("cluster")));
  e.provide_cluster_info = true;
  EXPECT_THAT(ExecInfoJson(e, info),
              HasSubstr(R"("cluster":{"server":"https://s:6443"})"));
}

TEST_F(ExecCredentialTest, RunsWithEnvArgsAndNoStdin) {
  std::string plugin = Script(
      "plugin",
      "printf '%s\\n' \"$KUBERNETES_EXEC_INFO\" > " + dir_ + "/info\n" +
          "printf '%s %s %s\\n' \"$FOO\" \"$1\" \"$(cat)\" > " + dir_ +
          "/seen\n" +
          R"SH(echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"tk"}}')SH"
          "\n");
  ExecConfig e = Exec(plugin);
  e.args = {"--region"};
  e.env = {{"FOO", "bar"}};
  auto c = RunExecPlugin(e, ExecClusterInfo{});
  ASSERT_THAT(c.status(), IsOk());
  EXPECT_EQ(c->token, "tk");
  EXPECT_EQ(c->expires_at, 0);
  EXPECT_EQ(Read("seen"), "bar --region \n");
  EXPECT_THAT(Read("info"), HasSubstr("client.authentication.k8s.io/v1"));
}

TEST_F(ExecCredentialTest, FailureNamesPluginAndStderrLastLineEscaped) {
  std::string plugin =
      Script("plugin", "echo one >&2; printf 'bad\\033]0;x\\n' >&2; exit 2\n");
  auto c = RunExecPlugin(Exec(plugin), ExecClusterInfo{});
  EXPECT_THAT(c, StatusIs(Code::kFailedPrecondition,
                          plugin + " exited with status 2: \"bad\\x1b]0;x\""));
}

TEST_F(ExecCredentialTest, NotFoundShowsInstallHintAndAlwaysIsRefused) {
  ExecConfig e = Exec("k8s-agent-no-such-plugin");
  e.install_hint = "brew install it";
  EXPECT_THAT(
      RunExecPlugin(e, ExecClusterInfo{}),
      StatusIs(Code::kFailedPrecondition, "installHint: brew install it"));
  e = Exec(Script("plugin", "exit 0\n"));
  e.interactive_mode = "Always";
  EXPECT_THAT(RunExecPlugin(e, ExecClusterInfo{}),
              StatusIs(Code::kFailedPrecondition, "interactiveMode Always"));
}

TEST_F(ExecCredentialTest, TimeoutKills) {
  auto c = RunExecPlugin(Exec(Script("plugin", "exec sleep 30\n")),
                         ExecClusterInfo{}, 1);
  EXPECT_THAT(c, StatusIs(Code::kDeadlineExceeded, "killed"));
}

// Runs `n` processes that each Get() from one cache at once; returns how
// often the runner ran (it appends to a counter file).
int CountRunsAcross(const std::string& dir, int n, int64_t expires_at,
                    const std::string& stale = "") {
  std::string counter = dir + "/runs";
  std::vector<pid_t> pids;
  for (int i = 0; i < n; ++i) {
    pid_t pid = ::fork();
    if (pid == 0) {
      CredentialCache cache(dir + "/cache", "key", [] { return 1000; });
      auto c = cache.Get(
          [&] {
            std::ofstream(counter, std::ios::app) << "run\n";
            ::usleep(200 * 1000);
            ExecCredential cred;
            cred.token = "fresh";
            cred.expires_at = expires_at;
            return StatusOr<ExecCredential>(cred);
          },
          stale);
      ::_exit(c.ok() && c->token == "fresh" ? 0 : 1);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::ifstream in(counter);
  int runs = 0;
  for (std::string line; std::getline(in, line);) ++runs;
  std::filesystem::remove(counter);
  return runs;
}

TEST_F(ExecCredentialTest, EightProcessesRunThePluginOnce) {
  EXPECT_EQ(CountRunsAcross(dir_, 8, 1000 + 3600), 1);
  auto mode = std::filesystem::status(dir_ + "/cache").permissions();
  EXPECT_EQ(mode, std::filesystem::perms::owner_all);
  // Cached: no run at all; a refused token is not reused.
  EXPECT_EQ(CountRunsAcross(dir_, 4, 1000 + 3600), 0);
  EXPECT_EQ(CountRunsAcross(dir_, 1, 1000 + 3600, "fresh"), 1);
}

TEST_F(ExecCredentialTest, NearExpiryOrNoExpiryIsNotShared) {
  // Within the margin: refreshed by each (they run one after another).
  EXPECT_EQ(CountRunsAcross(dir_, 2, 1000 + kCredentialMarginSeconds), 2);
  // No expiration: memory only, never written.
  EXPECT_EQ(CountRunsAcross(dir_, 3, 0), 3);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/cache/key.json"));
}

TEST_F(ExecCredentialTest, CacheKeyCoversTheConfig) {
  ExecConfig a = Exec("aws");
  ExecConfig b = a;
  b.args = {"eks"};
  EXPECT_NE(ExecCacheKey(a, "https://s"), ExecCacheKey(b, "https://s"));
  EXPECT_NE(ExecCacheKey(a, "https://s"), ExecCacheKey(a, "https://t"));
  EXPECT_EQ(ExecCacheKey(a, "https://s"),
            ExecCacheKey(Exec("aws"), "https://s"));
  EXPECT_EQ(CredentialCacheDir("/x", "/h"), "/x/k8s-agent");
  EXPECT_EQ(CredentialCacheDir("", "/h"), "/h/.kube/cache/k8s-agent");
}

}  // namespace
}  // namespace k8s_agent::kube
