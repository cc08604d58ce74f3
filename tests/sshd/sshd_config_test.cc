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
  std::string c = *RenderSshdConfig(Settings());
  EXPECT_THAT(c, HasSubstr("\nPort 2222\n"));
  EXPECT_THAT(c, HasSubstr("\nHostKey \"/tmp/r/ssh_host_key\"\n"));
  EXPECT_THAT(
      c, HasSubstr("\nAuthorizedKeysFile \"/tmp/r/user/authorized_keys\"\n"));
  EXPECT_THAT(c, HasSubstr("\nPidFile \"/tmp/r/sshd.pid\"\n"));
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
  EXPECT_THAT(*RenderSshdConfig(s),
              HasSubstr("\nPermitRootLogin prohibit-password\n"));
}

TEST(SshdConfigTest, NewSshdKeywordsOnlyWithSshdSession) {
  std::string old = *RenderSshdConfig(Settings());
  EXPECT_THAT(old, Not(HasSubstr("SshdSessionPath")));
  EXPECT_THAT(old, Not(HasSubstr("PerSourcePenalties")));
  SshdSettings s = Settings();
  s.session_path = "/opt/k/sshd-session";
  s.auth_path = "/opt/k/sshd-auth";
  std::string c = *RenderSshdConfig(s);
  EXPECT_THAT(c, HasSubstr("\nSshdSessionPath \"/opt/k/sshd-session\"\n"));
  EXPECT_THAT(c, HasSubstr("\nSshdAuthPath \"/opt/k/sshd-auth\"\n"));
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
  EXPECT_THAT(*RenderSshdConfig(s),
              HasSubstr("\nSetEnv \"PATH=/opt/conda/bin:/usr/bin\" "
                        "\"LD_LIBRARY_PATH=/opt/lib dir\"\n"));
}

TEST(SshdConfigTest, ClientSettingsCheckTheSharedHostKey) {
  std::string c =
      *RenderClientConfig(2222, "/r/user/id_job", "/r/user/known_hosts");
  EXPECT_THAT(
      c, HasSubstr("Host *\n  Port 2222\n  IdentityFile \"/r/user/id_job\"\n"));
  EXPECT_THAT(c, HasSubstr("  UserKnownHostsFile \"/r/user/known_hosts\"\n"));
  EXPECT_THAT(c, HasSubstr("  StrictHostKeyChecking yes\n"));
  EXPECT_EQ(RenderKnownHosts(2222, "ssh-ed25519 AAAA"),
            "*,[*]:2222 ssh-ed25519 AAAA\n");
}

// A TMPDIR with a space, '#', '=' or '%' (sshd 9.2 and 10.0 read these back
// with "sshd -T"; sshd_entry.login logs in through such a directory).
TEST(SshdConfigTest, PathsAreQuotedAndPercentDoubledWhereExpanded) {
  SshdSettings s = Settings();
  s.host_key_file = "/tmp/my dir#1=%u/ssh_host_key";
  s.authorized_keys_file = "/tmp/my dir#1=%u/user/authorized_keys";
  s.pid_file = "/tmp/my dir#1=%u/sshd.pid";
  s.session_path = "/opt/k 8s/sshd-session";
  s.auth_path = "/opt/k 8s/sshd-auth";
  auto c = RenderSshdConfig(s);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_THAT(*c, HasSubstr("\nHostKey \"/tmp/my dir#1=%u/ssh_host_key\"\n"));
  // sshd expands %h, %u, %U there, and %% is a literal %.
  EXPECT_THAT(*c, HasSubstr("\nAuthorizedKeysFile "
                            "\"/tmp/my dir#1=%%u/user/authorized_keys\"\n"));
  EXPECT_THAT(*c, HasSubstr("\nPidFile \"/tmp/my dir#1=%u/sshd.pid\"\n"));
  EXPECT_THAT(*c, HasSubstr("\nSshdSessionPath \"/opt/k 8s/sshd-session\"\n"));
  auto client = RenderClientConfig(2222, "/t/a b%d/id_job", "/t/a b%d/kh");
  ASSERT_TRUE(client.ok()) << client.status().message();
  EXPECT_THAT(*client, HasSubstr("  IdentityFile \"/t/a b%%d/id_job\"\n"));
  EXPECT_THAT(*client, HasSubstr("  UserKnownHostsFile \"/t/a b%%d/kh\"\n"));
}

TEST(SshdConfigTest, WhatAConfigCannotHoldIsRefusedByName) {
  for (const auto& [path, named] :
       std::vector<std::pair<std::string, std::string>>{
           {"/tmp/a\"b", "a double quote"},
           {"/tmp/a\\b", "a backslash"},
           {"/tmp/a\nHostKey /x", "a newline"},
           {"/tmp/a\tb\x01", "a control character"},
           {"/tmp/${HOME}", "\"${\""}}) {
    SshdSettings s = Settings();
    s.pid_file = path + "/sshd.pid";
    auto c = RenderSshdConfig(s);
    ASSERT_FALSE(c.ok()) << path;
    EXPECT_THAT(c.status().message(), HasSubstr("PidFile"));
    EXPECT_THAT(c.status().message(), HasSubstr("has " + named)) << path;
    EXPECT_FALSE(RenderClientConfig(2222, path + "/id", "/kh").ok()) << path;
  }
  EXPECT_TRUE(CheckConfigPath("TMPDIR", "/tmp/$HOME'x").ok());
}

TEST(SshdConfigTest, LogLevelIsOneOfSshds) {
  SshdSettings s = Settings();
  s.log_level = "debug3";
  EXPECT_TRUE(RenderSshdConfig(s).ok());
  s.log_level = "INFO\nPermitRootLogin yes";
  auto c = RenderSshdConfig(s);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("not one of sshd's levels"));
}

}  // namespace
}  // namespace k8s_agent::sshd
