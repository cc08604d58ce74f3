// SPDX-License-Identifier: Apache-2.0
// The names ssh refuses from its command line (OpenSSH readconf.c
// ssh_valid_ruser / ssh_valid_hostname).

#include "plugin/ssh/remote_names.h"

#include <gtest/gtest.h>

#include <string>

namespace k8s_agent::ssh {
namespace {

TEST(RemoteNamesTest, UserNamesAsSshJudgesThem) {
  for (const char* bad :
       {"root$(touch x)", "root;touch x", "`touch x`", "a'b", "a\"b", "a&b",
        "a<b", "a>b", "a|b", "a{b}", "-oProxyCommand=x", "a -b", "a\\", "a\nb",
        "a\tb", "a\x7f"}) {
    Status s = CheckRemoteUser(bad, "-l");
    EXPECT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.message().rfind("-l: remote user name '", 0), 0u)
        << s.message();
  }
  // ssh lets these through: $ and \ alone start no command.
  for (const char* good : {"mpiuser", "user@example.com", "DOMAIN\\user",
                           "first last", "a-b", "a$HOME", "x.y_z"}) {
    EXPECT_TRUE(CheckRemoteUser(good, "-l").ok()) << good;
  }
}

TEST(RemoteNamesTest, HostNamesAsSshJudgesThem) {
  for (const char* bad : {"w0;x", "w0 x", "-w0", "a,b", "$x", "a\\b", "a(b)",
                          "a`b`", "a\nb", "a|b"}) {
    EXPECT_FALSE(CheckRemoteHost(bad, "HOST").ok()) << bad;
  }
  for (const char* good : {"w-0", "10.0.0.1", "::1", "[::1]", "w0.svc.local",
                           "job-worker-0.job"}) {
    EXPECT_TRUE(CheckRemoteHost(good, "HOST").ok()) << good;
  }
  EXPECT_NE(CheckRemoteHost("w0;x", "HOST").message().find("it holds ';'"),
            std::string::npos);
}

}  // namespace
}  // namespace k8s_agent::ssh
