// SPDX-License-Identifier: Apache-2.0
// Unit tests for ssh option parsing, ssh_config matching and Resolve.

#include "plugin/ssh/ssh_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "plugin/base/log.h"
#include "tests/fakes/log_capture.h"
#include "tests/fakes/status_matchers.h"

namespace k8s_agent::ssh {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(ApplySshOptionTest, KeysAreCaseInsensitiveAndFirstValueWins) {
  SshOptions o;
  bool known = false;
  EXPECT_THAT(ApplySshOption("port", "2222", &o, &known), IsOk());
  EXPECT_TRUE(known);
  EXPECT_THAT(ApplySshOption("PORT", "3333", &o), IsOk());
  EXPECT_EQ(o.port, 2222);
  EXPECT_THAT(ApplySshOption("User", "mpiuser", &o), IsOk());
  EXPECT_EQ(o.user, "mpiuser");
}

TEST(ApplySshOptionTest, IdentityFilesAccumulate) {
  SshOptions o;
  EXPECT_THAT(ApplySshOption("IdentityFile", "~/.ssh/a", &o), IsOk());
  EXPECT_THAT(ApplySshOption("identityfile", "\"/b c\"", &o), IsOk());
  EXPECT_THAT(o.identity_files, ElementsAre("~/.ssh/a", "/b c"));
}

TEST(ApplySshOptionTest, StrictHostKeyCheckingValues) {
  struct Case {
    const char* value;
    StrictHostKeyChecking want;
  } cases[] = {{"yes", StrictHostKeyChecking::kYes},
               {"ask", StrictHostKeyChecking::kYes},
               {"accept-new", StrictHostKeyChecking::kAcceptNew},
               {"no", StrictHostKeyChecking::kNo},
               {"off", StrictHostKeyChecking::kNo},
               {"NO", StrictHostKeyChecking::kNo}};
  for (const Case& c : cases) {
    SshOptions o;
    EXPECT_THAT(ApplySshOption("StrictHostKeyChecking", c.value, &o), IsOk());
    EXPECT_EQ(o.strict_host_key_checking, c.want) << c.value;
  }
  SshOptions o;
  EXPECT_THAT(ApplySshOption("StrictHostKeyChecking", "maybe", &o),
              StatusIs(Code::kInvalidArgument, "StrictHostKeyChecking"));
}

TEST(ApplySshOptionTest, NumbersAndTimes) {
  SshOptions o;
  EXPECT_THAT(ApplySshOption("ConnectTimeout", "7", &o), IsOk());
  EXPECT_EQ(o.connect_timeout, std::chrono::seconds(7));
  EXPECT_THAT(ApplySshOption("ServerAliveInterval", "1m", &o), IsOk());
  EXPECT_EQ(o.server_alive_interval_s, 60);
  EXPECT_THAT(ApplySshOption("ServerAliveCountMax", "5", &o), IsOk());
  EXPECT_EQ(o.server_alive_count_max, 5);
  EXPECT_THAT(ApplySshOption("ConnectionAttempts", "3", &o), IsOk());
  EXPECT_EQ(o.connection_attempts, 3);
  EXPECT_THAT(ApplySshOption("BatchMode", "yes", &o), IsOk());
  EXPECT_EQ(o.batch_mode, true);
  EXPECT_THAT(ApplySshOption("LogLevel", "ERROR", &o), IsOk());
  EXPECT_EQ(o.log_level, "error");
  EXPECT_THAT(ApplySshOption("Port", "0", &o),
              StatusIs(Code::kInvalidArgument, "Port"));
  EXPECT_THAT(ApplySshOption("Port", "x", &o),
              StatusIs(Code::kInvalidArgument, "Port"));
  EXPECT_THAT(ApplySshOption("ConnectTimeout", "soon", &o),
              StatusIs(Code::kInvalidArgument, "ConnectTimeout"));
  EXPECT_THAT(ApplySshOption("BatchMode", "perhaps", &o),
              StatusIs(Code::kInvalidArgument, "BatchMode"));
  EXPECT_THAT(ApplySshOption("LogLevel", "LOUD", &o),
              StatusIs(Code::kInvalidArgument, "LogLevel"));
}

TEST(ApplySshOptionTest, KnownHostsListAndUnknownKeys) {
  SshOptions o;
  EXPECT_THAT(ApplySshOption("UserKnownHostsFile", "/a /dev/null none", &o),
              IsOk());
  EXPECT_THAT(o.user_known_hosts_files,
              ElementsAre("/a", "/dev/null", "/dev/null"));
  bool known = true;
  EXPECT_THAT(ApplySshOption("ForwardAgent", "yes", &o, &known), IsOk());
  EXPECT_FALSE(known);
}

TEST(HostPatternTest, WildcardsAndNegation) {
  EXPECT_TRUE(HostPatternMatches("*", "w0"));
  EXPECT_TRUE(HostPatternMatches("w?", "w0"));
  EXPECT_FALSE(HostPatternMatches("w?", "w10"));
  EXPECT_TRUE(HostPatternMatches("worker-* launcher", "launcher"));
  EXPECT_FALSE(HostPatternMatches("* !w0", "w0"));
  EXPECT_TRUE(HostPatternMatches("* !w0", "w1"));
  EXPECT_TRUE(HostPatternMatches("a,W*", "w5"));  // known_hosts style.
  EXPECT_FALSE(HostPatternMatches("!w0", "w1"));  // Negation alone: no.
}

TEST(MergeFromTest, HigherPrecedenceKeepsItsValues) {
  SshOptions cli, file;
  cli.port = 1;
  cli.identity_files = {"a"};
  file.port = 2;
  file.user = "u";
  file.identity_files = {"b"};
  cli.MergeFrom(file);
  EXPECT_EQ(cli.port, 1);
  EXPECT_EQ(cli.user, "u");
  EXPECT_THAT(cli.identity_files, ElementsAre("a", "b"));
}

class ResolveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ssh-resolve-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    home_ = tmpl;
    const char* old = ::getenv("HOME");
    old_home_ = old ? old : "";
    ::setenv("HOME", home_.c_str(), 1);
    ::mkdir((home_ + "/.ssh").c_str(), 0700);
  }
  void TearDown() override {
    ::setenv("HOME", old_home_.c_str(), 1);
    std::filesystem::remove_all(home_);
  }
  void Touch(const std::string& rel) {
    std::ofstream(home_ + "/" + rel) << "x";
  }
  std::string home_, old_home_;
};

TEST_F(ResolveTest, DefaultsFromHome) {
  Touch(".ssh/id_rsa");
  Touch(".ssh/id_ed25519");
  SshOptions o;
  o.user = "me";
  ResolvedSshOptions r = Resolve(o, "w0").value();
  EXPECT_EQ(r.user, "me");
  EXPECT_EQ(r.port, 22);
  EXPECT_THAT(r.identity_files,
              ElementsAre(home_ + "/.ssh/id_ed25519", home_ + "/.ssh/id_rsa"));
  EXPECT_THAT(r.known_hosts_files, ElementsAre(home_ + "/.ssh/known_hosts",
                                               "/etc/ssh/ssh_known_hosts"));
  EXPECT_EQ(r.strict_host_key_checking, StrictHostKeyChecking::kYes);
}

std::optional<std::string> NoPasswdEntry(unsigned) { return std::nullopt; }
std::optional<std::string> PasswdSaysMpiuser(unsigned) { return "mpiuser"; }

TEST_F(ResolveTest, NoPasswdEntryLogsInAsDefaultUnlessAUserIsGiven) {
  // Given a uid with no passwd entry (a container run as a random uid),
  // expect the name k8s-agent-sshd gives such a uid, never $USER; -l/User
  // and a passwd entry still win.
  SshOptions o;
  const char* user = std::getenv("USER");
  std::string old_user = user ? user : "";
  ::setenv("USER", "root", 1);
  EXPECT_EQ(Resolve(o, "w0", &NoPasswdEntry)->user, "default");
  user ? ::setenv("USER", old_user.c_str(), 1) : ::unsetenv("USER");
  EXPECT_EQ(Resolve(o, "w0", &PasswdSaysMpiuser)->user, "mpiuser");
  o.user = "worker";
  EXPECT_EQ(Resolve(o, "w0", &NoPasswdEntry)->user, "worker");
}

TEST_F(ResolveTest, ConfiguredIdentitiesReplaceDefaultsAndExpandTilde) {
  Touch(".ssh/id_ed25519");
  Touch("key");
  SshOptions o;
  o.identity_files = {"~/key", "~/missing"};
  o.user_known_hosts_files = {"~/kh"};
  o.connect_timeout = std::chrono::seconds(0);
  ResolvedSshOptions r = Resolve(o, "w0").value();
  EXPECT_THAT(r.identity_files, ElementsAre(home_ + "/key"));
  EXPECT_EQ(r.known_hosts_files[0], home_ + "/kh");
  EXPECT_GT(r.connect_timeout, std::chrono::hours(1));  // 0 = no timeout.
  EXPECT_FALSE(r.user.empty());
}

// ssh expands ~, %-tokens and ${VAR} in IdentityFile and
// UserKnownHostsFile: a key per host, a known_hosts file per host and port.
TEST_F(ResolveTest, IdentityAndKnownHostsFilesExpandSshsTokens) {
  Touch(".ssh/w0.example.key");
  Touch(".ssh/mpiuser-2222");
  ::setenv("K8S_TEST_KEY_DIR", (home_ + "/.ssh").c_str(), 1);
  SshOptions o;
  o.hostname = "%h.example";
  o.port = 2222;
  o.identity_files = {"~/.ssh/%h.key", "${K8S_TEST_KEY_DIR}/%u-%p",
                      "%d/.ssh/%n-%r-%i-%k-%L-%l-%j-%%"};
  o.user_known_hosts_files = {"~/.ssh/kh-%h-%p"};
  o.global_known_hosts_files = {"/etc/ssh/%h"};  // ssh leaves these be.
  ResolvedSshOptions r = Resolve(o, "w0", &PasswdSaysMpiuser).value();
  EXPECT_THAT(r.identity_files, ElementsAre(home_ + "/.ssh/w0.example.key",
                                            home_ + "/.ssh/mpiuser-2222"));
  EXPECT_EQ(r.known_hosts_files[0], home_ + "/.ssh/kh-w0.example-2222");
  EXPECT_EQ(r.known_hosts_files[1], "/etc/ssh/%h");
  char host[256] = {};
  ASSERT_EQ(::gethostname(host, sizeof(host) - 1), 0);
  std::string long_host = host;
  o.identity_files = {"~/%n-%r-%i-%k-%L-%l-%j-%%"};
  o.user = "root";
  o.host_key_alias = "alias";
  std::string expected = home_ + "/w0-root-" + std::to_string(::getuid()) +
                         "-alias-" + long_host.substr(0, long_host.find('.')) +
                         "-" + long_host + "--%";
  Touch(expected.substr(home_.size() + 1));
  r = Resolve(o, "w0", &PasswdSaysMpiuser).value();
  EXPECT_THAT(r.identity_files, ElementsAre(expected));
  o.identity_files = {"~/%C"};
  EXPECT_THAT(Resolve(o, "w0").status(),
              StatusIs(Code::kInvalidArgument,
                       "IdentityFile ~/%C: token %C is not supported"));
  o.identity_files = {"~/%Z"};
  EXPECT_THAT(Resolve(o, "w0").status(),
              StatusIs(Code::kInvalidArgument, "token %Z is not one ssh"));
  o.identity_files.clear();
  o.user_known_hosts_files = {"${K8S_TEST_UNSET_VAR}/kh"};
  ::unsetenv("K8S_TEST_UNSET_VAR");
  EXPECT_THAT(Resolve(o, "w0").status(),
              StatusIs(Code::kInvalidArgument,
                       "UserKnownHostsFile ${K8S_TEST_UNSET_VAR}/kh: "
                       "environment variable ${K8S_TEST_UNSET_VAR} has no "
                       "value"));
  ::unsetenv("K8S_TEST_KEY_DIR");
}

}  // namespace
}  // namespace k8s_agent::ssh

namespace k8s_agent::ssh {
namespace {

// Runs Resolve with the log captured; returns the log.
std::string ResolveLog(const SshOptions& o, ResolvedSshOptions* r) {
  return CaptureLog([&] { *r = Resolve(o, "w0").value(); });
}

TEST_F(ResolveTest, KeyReadableByOthersWarnsLikeSshButIsUsed) {
  Touch("open_key");
  Touch("closed_key");
  ::chmod((home_ + "/open_key").c_str(), 0644);
  ::chmod((home_ + "/closed_key").c_str(), 0600);
  SshOptions o;
  o.identity_files = {"~/open_key", "~/closed_key"};
  ResolvedSshOptions r;
  std::string log = ResolveLog(o, &r);
  EXPECT_THAT(r.identity_files,
              ElementsAre(home_ + "/open_key", home_ + "/closed_key"));
  EXPECT_THAT(log, HasSubstr("UNPROTECTED PRIVATE KEY FILE: permissions 0644 "
                             "for " +
                             home_ + "/open_key"));
  EXPECT_THAT(log, Not(HasSubstr("closed_key")));
}

TEST_F(ResolveTest, MissingKeyFileWarnsAndIsSkipped) {
  SshOptions o;
  o.identity_files = {"/nonexistent/key"};
  ResolvedSshOptions r;
  std::string log = ResolveLog(o, &r);
  EXPECT_TRUE(r.identity_files.empty());
  EXPECT_THAT(log, HasSubstr("identity file /nonexistent/key not accessible"));
}

}  // namespace
}  // namespace k8s_agent::ssh
