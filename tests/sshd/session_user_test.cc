// SPDX-License-Identifier: Apache-2.0
#include "plugin/sshd/session_user.h"

#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>

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

TEST(SessionUserTest, UidWithoutPasswdEntryIsNotFound) {
  auto u = ResolveSessionUser("", 3999999);
  ASSERT_EQ(u.status().code(), Code::kNotFound);
  EXPECT_NE(u.status().message().find("uid 3999999 has no passwd entry"),
            std::string::npos);
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(SessionUserTest, AddPasswdEntryAppendsOneLineForTheUid) {
  // Given a group-writable passwd as OpenShift images have, expect the
  // line appended after what was there, and the user sshd will look up.
  SecretDir dir;
  std::string passwd = dir.path() + "/passwd";
  std::ofstream(passwd) << "root:x:0:0:root:/root:/bin/bash\n";
  auto u = AddPasswdEntry(1000680000, 0, "/tmp/home", passwd);
  ASSERT_TRUE(u.ok()) << u.status().message();
  EXPECT_EQ(u->name, "default");
  EXPECT_EQ(u->uid, 1000680000u);
  EXPECT_EQ(u->gid, 0u);
  EXPECT_EQ(u->shell, "/bin/sh");
  EXPECT_EQ(Slurp(passwd),
            "root:x:0:0:root:/root:/bin/bash\n"
            "default:x:1000680000:0:k8s-agent-sshd session user:/tmp/home:"
            "/bin/sh\n");
  EXPECT_EQ(AddPasswdEntry(1000680000, 0, "", passwd)->home, "/");
}

TEST(SessionUserTest, UnwritablePasswdSaysWhatThePodMustAdd) {
  // Given a passwd that cannot be written (read-only root, image mode),
  // expect the line it would have added and the three ways to get it.
  auto u = AddPasswdEntry(1000680000, 0, "", "/no/such/dir/passwd");
  ASSERT_EQ(u.status().code(), Code::kFailedPrecondition);
  const std::string m = u.status().message();
  EXPECT_NE(m.find("default:x:1000680000:0:"), std::string::npos) << m;
  EXPECT_NE(m.find("chmod g=u /no/such/dir/passwd"), std::string::npos) << m;
  EXPECT_NE(m.find("subPath"), std::string::npos) << m;
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
