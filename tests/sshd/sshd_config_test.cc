// SPDX-License-Identifier: Apache-2.0
#include "plugin/sshd/sshd_config.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace k8s_agent::sshd {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

SshdSettings Settings() {
  SshdSettings s;
  s.port = 2222;
  s.user = "mpiuser";
  s.host_key_file = "/tmp/r/ssh_host_key";
  s.authorized_keys_file = "/tmp/r/user/authorized_keys";
  s.pid_file = "/tmp/r/sshd.pid";
  return s;
}

TEST(SshdConfigTest, KeyLoginOnlyForTheOneUser) {
  std::string c = RenderSshdConfig(Settings());
  EXPECT_THAT(c, HasSubstr("\nPort 2222\n"));
  EXPECT_THAT(c, HasSubstr("\nHostKey /tmp/r/ssh_host_key\n"));
  EXPECT_THAT(c,
              HasSubstr("\nAuthorizedKeysFile /tmp/r/user/authorized_keys\n"));
  EXPECT_THAT(c, HasSubstr("\nPidFile /tmp/r/sshd.pid\n"));
  EXPECT_THAT(c, HasSubstr("\nAuthenticationMethods publickey\n"));
  EXPECT_THAT(c, HasSubstr("\nPasswordAuthentication no\n"));
  EXPECT_THAT(c, HasSubstr("\nKbdInteractiveAuthentication no\n"));
  EXPECT_THAT(c, HasSubstr("\nAllowUsers mpiuser\n"));
  EXPECT_THAT(c, HasSubstr("\nPermitRootLogin no\n"));
  EXPECT_THAT(c, HasSubstr("\nDisableForwarding yes\n"));
  EXPECT_THAT(c, HasSubstr("\nPermitUserEnvironment no\n"));
  // No client variable is accepted: no AcceptEnv line at all.
  EXPECT_THAT(c, Not(HasSubstr("AcceptEnv")));
  EXPECT_THAT(c, Not(HasSubstr("SetEnv")));
}

TEST(SshdConfigTest, RootMayLogInWithKeysOnly) {
  SshdSettings s = Settings();
  s.user = "root";
  EXPECT_THAT(RenderSshdConfig(s),
              HasSubstr("\nPermitRootLogin prohibit-password\n"));
}

TEST(SshdConfigTest, NewSshdKeywordsOnlyWithSshdSession) {
  std::string old = RenderSshdConfig(Settings());
  EXPECT_THAT(old, Not(HasSubstr("SshdSessionPath")));
  EXPECT_THAT(old, Not(HasSubstr("PerSourcePenalties")));
  SshdSettings s = Settings();
  s.session_path = "/opt/k/sshd-session";
  s.auth_path = "/opt/k/sshd-auth";
  std::string c = RenderSshdConfig(s);
  EXPECT_THAT(c, HasSubstr("\nSshdSessionPath /opt/k/sshd-session\n"));
  EXPECT_THAT(c, HasSubstr("\nSshdAuthPath /opt/k/sshd-auth\n"));
  EXPECT_THAT(c, HasSubstr("\nPerSourcePenalties no\n"));
}

TEST(SshdConfigTest, SessionEnvironmentIsQuotedAndFiltered) {
  std::vector<std::string> skipped;
  auto env = SessionEnvironment(
      {"PATH", "LD_LIBRARY_PATH", "EMPTY", "BAD", "PATH", "ABSENT"},
      {{"PATH", "/opt/conda/bin:/usr/bin"},
       {"LD_LIBRARY_PATH", "/opt/lib dir"},
       {"EMPTY", ""},
       {"BAD", "a\"b"}},
      &skipped);
  ASSERT_EQ(env.size(), 2u);
  EXPECT_EQ(env[0].first, "PATH");
  EXPECT_EQ(skipped, std::vector<std::string>{"BAD"});
  SshdSettings s = Settings();
  s.session_env = env;
  EXPECT_THAT(RenderSshdConfig(s),
              HasSubstr("\nSetEnv \"PATH=/opt/conda/bin:/usr/bin\" "
                        "\"LD_LIBRARY_PATH=/opt/lib dir\"\n"));
}

TEST(SshdConfigTest, ClientSettingsCheckTheSharedHostKey) {
  std::string c =
      RenderClientConfig(2222, "/r/user/id_job", "/r/user/known_hosts");
  EXPECT_THAT(
      c, HasSubstr("Host *\n  Port 2222\n  IdentityFile /r/user/id_job\n"));
  EXPECT_THAT(c, HasSubstr("  UserKnownHostsFile /r/user/known_hosts\n"));
  EXPECT_THAT(c, HasSubstr("  StrictHostKeyChecking yes\n"));
  EXPECT_EQ(RenderKnownHosts(2222, "ssh-ed25519 AAAA"),
            "*,[*]:2222 ssh-ed25519 AAAA\n");
}

}  // namespace
}  // namespace k8s_agent::sshd
