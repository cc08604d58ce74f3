// SPDX-License-Identifier: Apache-2.0
#include "plugin/sshd/session_user.h"

#include <unistd.h>

#include <fstream>

#include "gtest/gtest.h"
#include "tests/sshd/secret_dir.h"

namespace k8s_agent::sshd {
namespace {

TEST(SessionUserTest, RootServesRootByDefault) {
  auto u = ResolveSessionUser("", 0);
  ASSERT_TRUE(u.ok()) << u.status().message();
  EXPECT_EQ(u->name, "root");
  EXPECT_EQ(u->uid, 0u);
}

TEST(SessionUserTest, RootMayServeAnotherUser) {
  auto u = ResolveSessionUser("nobody", 0);
  ASSERT_TRUE(u.ok()) << u.status().message();
  EXPECT_EQ(u->name, "nobody");
  EXPECT_NE(u->uid, 0u);
}

TEST(SessionUserTest, UnknownUserIsNamed) {
  auto u = ResolveSessionUser("no-such-user-k8s", 0);
  ASSERT_FALSE(u.ok());
  EXPECT_NE(u.status().message().find("--user no-such-user-k8s: no such user"),
            std::string::npos);
}

TEST(SessionUserTest, NonRootServesOnlyItself) {
  auto nobody = ResolveSessionUser("nobody", 0);
  ASSERT_TRUE(nobody.ok());
  auto self = ResolveSessionUser("", nobody->uid);
  ASSERT_TRUE(self.ok());
  EXPECT_EQ(self->name, "nobody");
  auto other = ResolveSessionUser("root", nobody->uid);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("sshd can only serve nobody"),
            std::string::npos);
}

TEST(SessionUserTest, UidWithoutPasswdEntryIsNamed) {
  auto u = ResolveSessionUser("", 3999999);
  ASSERT_FALSE(u.ok());
  EXPECT_NE(u.status().message().find("uid 3999999 has no passwd entry"),
            std::string::npos);
}

TEST(SessionUserTest, RefusingShellsFailAtStart) {
  SessionUser u{"nobody", 65534, 65534, "/nonexistent", "/usr/sbin/nologin"};
  auto s = CheckCanLogIn(u, false, "/dev/null");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("nologin"), std::string::npos);
  u.shell = "/no/such/shell";
  EXPECT_FALSE(CheckCanLogIn(u, false, "/dev/null").ok());
  u.shell = "";  // sshd's default: /bin/sh.
  EXPECT_TRUE(CheckCanLogIn(u, false, "/dev/null").ok());
}

TEST(SessionUserTest, LockedPasswordFailsOnlyForARootSshd) {
  SecretDir d;
  std::string shadow = d.root() + "/shadow";
  std::ofstream(shadow) << "root:*:19000:0:99999:7:::\n"
                        << "mpiuser:!:19000:0:99999:7:::\n";
  SessionUser u{"mpiuser", 1000, 1000, "/home/mpiuser", "/bin/sh"};
  Status s = CheckCanLogIn(u, true, shadow);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("usermod -p '*' mpiuser"), std::string::npos);
  EXPECT_TRUE(CheckCanLogIn(u, false, shadow).ok());
  u.name = "root";
  EXPECT_TRUE(CheckCanLogIn(u, true, shadow).ok());
}

}  // namespace
}  // namespace k8s_agent::sshd
