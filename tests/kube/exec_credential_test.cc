// SPDX-License-Identifier: Apache-2.0
// Exec credential plugins: the protocol, running one on the event loop,
// and the cache the agents of a job share.

#include "plugin/kube/exec_credential.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "plugin/base/event_loop.h"
#include "plugin/kube/credential_cache.h"
#include "plugin/kube/exec_credential_source.h"
#include "plugin/kube/exec_plugin.h"
#include "plugin/kube/exec_protocol.h"
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
  // Runs the plugin on a real EventLoop until it is done; `env` is the
  // whole environment it gets (PATH of this process by default).
  StatusOr<ExecCredential> Run(const ExecConfig& e,
                               Duration timeout = seconds(kExecTimeoutSeconds),
                               std::vector<std::string> env = {}) {
    if (env.empty()) env = ExecPluginEnv(e, ProcessEnvironment(), "{}");
    auto run = ExecPluginRun::Start(e, env, RealClock::Get()->Now(), timeout);
    if (!run.ok()) return run.status();
    EventLoop loop(RealClock::Get());
    loop.Add(run->get());
    Status s = loop.RunUntil([&] { return (*run)->done(); });
    if (!s.ok()) return s;
    return (*run)->result();
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

// The expiry goes through base's RFC 3339 parser (tests/base holds its
// cases); here: the whole second it rounds down to and the error it names.
TEST_F(ExecCredentialTest, ExpiryFractionOffsetAndBadTime) {
  auto expiry = [](const std::string& at) {
    return ParseExecCredential(
        R"({"apiVersion":"client.authentication.k8s.io/v1",
            "kind":"ExecCredential",
            "status":{"token":"t","expirationTimestamp":")" +
            at + R"("}})",
        kExecApiV1, "p");
  };
  auto c = expiry("1970-01-01T01:00:10.999+01:00");
  ASSERT_THAT(c.status(), IsOk());
  EXPECT_EQ(c->expires_at, 10);
  EXPECT_THAT(expiry("1970-01-01 00:00:10").status(),
              StatusIs(Code::kFailedPrecondition,
                       "status.expirationTimestamp \"1970-01-01 00:00:10\" "
                       "is not an RFC 3339 time"));
  EXPECT_THAT(expiry("tomorrow").status(),
              StatusIs(Code::kFailedPrecondition, "is not an RFC 3339 time"));
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
  auto c = Run(e, seconds(kExecTimeoutSeconds),
               ExecPluginEnv(e, ProcessEnvironment(),
                             ExecInfoJson(e, ExecClusterInfo{})));
  ASSERT_THAT(c.status(), IsOk());
  EXPECT_EQ(c->token, "tk");
  EXPECT_EQ(c->expires_at, 0);
  EXPECT_EQ(Read("seen"), "bar --region \n");
  EXPECT_THAT(Read("info"), HasSubstr("client.authentication.k8s.io/v1"));
}

TEST_F(ExecCredentialTest, FailureNamesPluginAndStderrLastLineEscaped) {
  std::string plugin =
      Script("plugin", "echo one >&2; printf 'bad\\033]0;x\\n' >&2; exit 2\n");
  auto c = Run(Exec(plugin));
  EXPECT_THAT(c, StatusIs(Code::kFailedPrecondition,
                          plugin + " exited with status 2: \"bad\\x1b]0;x\""));
}

TEST_F(ExecCredentialTest, NotFoundShowsInstallHintAndAlwaysIsRefused) {
  ExecConfig e = Exec("k8s-agent-no-such-plugin");
  e.install_hint = "brew install it";
  EXPECT_THAT(Run(e), StatusIs(Code::kFailedPrecondition,
                               "installHint: brew install it"));
  e = Exec(Script("plugin", "exit 0\n"));
  e.interactive_mode = "Always";
  EXPECT_THAT(Run(e),
              StatusIs(Code::kFailedPrecondition, "interactiveMode Always"));
}

TEST_F(ExecCredentialTest, TimeoutKillsThePluginAndWhatItStarted) {
  // Given a plugin that starts a child and hangs, expect the run to end at
  // its timeout, killed, and the child gone with the plugin's group.
  ExecConfig e = Exec(
      Script("plugin", "sleep 300 & echo $! > " + dir_ + "/child.pid\nwait\n"));
  std::vector<std::string> env = ExecPluginEnv(e, ProcessEnvironment(), "{}");
  auto run = ExecPluginRun::Start(e, env, RealClock::Get()->Now(), seconds(1));
  ASSERT_THAT(run.status(), IsOk());
  EventLoop loop(RealClock::Get());
  loop.Add(run->get());
  int child_fd = -1;
  pid_t child = 0;
  ASSERT_THAT(loop.RunUntil([&] {
    if (child == 0 && !Read("child.pid").empty() &&
        Read("child.pid").back() == '\n') {
      child = std::stoi(Read("child.pid"));
      child_fd = static_cast<int>(::syscall(SYS_pidfd_open, child, 0));
    }
    return (*run)->done();
  }),
              IsOk());
  EXPECT_THAT((*run)->result(), StatusIs(Code::kDeadlineExceeded,
                                         "plugin did not finish within "
                                         "1.0s and was killed"));
  ASSERT_GT(child, 0);
  ASSERT_GE(child_fd, 0) << "the child was gone before the timeout";
  // A pidfd is readable once its process has exited: waits for the
  // condition, not for a time.
  pollfd p{child_fd, POLLIN, 0};
  EXPECT_EQ(::poll(&p, 1, 5000), 1) << "the plugin's child survived";
  ::close(child_fd);
}

TEST_F(ExecCredentialTest, DestroyingARunKillsItsGroup) {
  // Given a run torn down early (the agent got SIGTERM), expect the
  // plugin gone at once, not when it would have ended.
  ExecConfig e = Exec(Script("plugin", "exec sleep 300\n"));
  auto run = ExecPluginRun::Start(
      e, ExecPluginEnv(e, ProcessEnvironment(), "{}"), RealClock::Get()->Now());
  ASSERT_THAT(run.status(), IsOk());
  pid_t pid = (*run)->pid();
  run->reset();
  EXPECT_NE(::kill(pid, 0), 0) << "reaped, so no such process any more";
}

// A run that answers `cred` when its time comes, like a plugin taking
// 200 ms, on a real clock (these runs are in separate processes).
class TimedRun : public ExecRun {
 public:
  TimedRun(TimePoint at, ExecCredential cred) : at_(at), result_(cred) {}
  bool done() const override { return done_; }
  const StatusOr<ExecCredential>& result() const override { return result_; }
  void CollectFds(std::vector<pollfd>*) override {}
  TimePoint NextWake() const override { return done_ ? TimePoint::max() : at_; }
  void OnFdReady(int, short, TimePoint) override {}
  void OnTimer(TimePoint now) override { done_ = done_ || now >= at_; }

 private:
  TimePoint at_;
  bool done_ = false;
  StatusOr<ExecCredential> result_;
};

// Runs `n` processes that each get a credential from one cache at once, on
// their own event loop; returns how often the plugin ran (each run appends
// to a counter file).
int CountRunsAcross(const std::string& dir, int n, int64_t expires_at) {
  std::string counter = dir + "/runs";
  std::vector<pid_t> pids;
  for (int i = 0; i < n; ++i) {
    pid_t pid = ::fork();
    if (pid == 0) {
      ExecCredentialSource source(
          "exec plugin p",
          CredentialCache(dir + "/cache", "key", [] { return 1000; }),
          [&](TimePoint now) -> StatusOr<std::unique_ptr<ExecRun>> {
            std::ofstream(counter, std::ios::app) << "run\n";
            ExecCredential cred;
            cred.token = "fresh";
            cred.expires_at = expires_at;
            return std::unique_ptr<ExecRun>(
                new TimedRun(now + milliseconds(200), cred));
          });
      EventLoop loop(RealClock::Get());
      loop.Add(&source);
      StatusOr<MaybeCredential> got = MaybeCredential();
      Status s = loop.RunUntil([&] {
        got = source.Get(RealClock::Get()->Now());
        return !got.ok() || got->has_value();
      });
      ::_exit(s.ok() && got.ok() && (*got)->token == "fresh" ? 0 : 1);
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
  // Cached: no run at all.
  EXPECT_EQ(CountRunsAcross(dir_, 4, 1000 + 3600), 0);
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
  auto key = [](const ExecConfig& e, const std::string& server) {
    return CredentialCache::Key(e, server, {"PATH=/bin"});
  };
  EXPECT_NE(key(a, "https://s"), key(b, "https://s"));
  EXPECT_NE(key(a, "https://s"), key(a, "https://t"));
  EXPECT_EQ(key(a, "https://s"), key(Exec("aws"), "https://s"));
  EXPECT_EQ(CredentialCacheDir("/x", "/h"), "/x/k8s-agent");
  EXPECT_EQ(CredentialCacheDir("", "/h"), "/h/.kube/cache/k8s-agent");
}

TEST_F(ExecCredentialTest, CacheKeyCoversThePluginsEnvironment) {
  // Given two runs that differ only in AWS_PROFILE (client-go runs the
  // plugin per process, with that process's environment), expect two
  // cache entries: the second must not reuse the first identity's token.
  ExecConfig e = Exec("aws");
  std::string dev =
      CredentialCache::Key(e, "https://s", {"PATH=/bin", "AWS_PROFILE=dev"});
  std::string prod =
      CredentialCache::Key(e, "https://s", {"PATH=/bin", "AWS_PROFILE=prod"});
  EXPECT_NE(dev, prod);
  // The order environ happens to have is not an identity.
  EXPECT_EQ(dev, CredentialCache::Key(e, "https://s",
                                      {"AWS_PROFILE=dev", "PATH=/bin"}));
  // What the starting shell sets per command is not either.
  EXPECT_EQ(dev, CredentialCache::Key(e, "https://s",
                                      {"_=/usr/bin/env", "PATH=/bin", "SHLVL=2",
                                       "AWS_PROFILE=dev"}));
  EXPECT_EQ(dev.size(), 64u);
}

}  // namespace
}  // namespace k8s_agent::kube
