// SPDX-License-Identifier: Apache-2.0
#include "plugin/sshd/run_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include "gtest/gtest.h"
#include "plugin/base/files.h"
#include "plugin/base/strings.h"
#include "tests/sshd/secret_dir.h"

namespace k8s_agent::sshd {
namespace {

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

uid_t OwnerOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(stat(path.c_str(), &st), 0) << path;
  return st.st_uid;
}

JobKeys Keys() {
  JobKeys k;
  k.host_key = "HOST";
  k.host_public_key = "ssh-ed25519 AAAA";
  k.authorized_keys = "ssh-ed25519 AAAA\n";
  k.user_key = "USER";
  return k;
}

TEST(RunDirTest, PrivateCopiesWithTheModesSshdWants) {
  SecretDir parent;
  SessionUser me{"me", geteuid(), getegid(), "/", "/bin/sh"};
  auto run = MakeRunDir(parent.root(), Keys(), me, 2222);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(ModeOf(run->dir), 0700u);
  EXPECT_EQ(ModeOf(run->host_key), 0600u);
  EXPECT_EQ(*ReadFileToString(run->host_key), "HOST");
  EXPECT_EQ(ModeOf(run->authorized_keys), 0600u);
  EXPECT_EQ(*ReadFileToString(run->authorized_keys), "ssh-ed25519 AAAA\n");
  ASSERT_FALSE(run->client_config.empty());
  std::string user_dir = run->dir + "/user";
  EXPECT_EQ(ModeOf(user_dir), 0700u);
  EXPECT_EQ(*ReadFileToString(user_dir + "/id_job"), "USER");
  EXPECT_EQ(ModeOf(user_dir + "/id_job"), 0600u);
  EXPECT_EQ(*ReadFileToString(user_dir + "/known_hosts"),
            "*,[*]:2222 ssh-ed25519 AAAA\n");
}

TEST(RunDirTest, NoClientSettingsWithoutAPublicHostKey) {
  SecretDir parent;
  SessionUser me{"me", geteuid(), getegid(), "/", "/bin/sh"};
  JobKeys k = Keys();
  k.host_public_key.clear();
  auto run = MakeRunDir(parent.root(), k, me, 2222);
  ASSERT_TRUE(run.ok());
  EXPECT_TRUE(run->client_config.empty());
}

TEST(RunDirTest, AnotherUsersFilesBelongToThem) {
  if (geteuid() != 0) GTEST_SKIP() << "chown needs root";
  SecretDir parent;
  SessionUser nobody{"nobody", 65534, 65534, "/nonexistent", "/bin/sh"};
  auto run = MakeRunDir(parent.root(), Keys(), nobody, 2222);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(ModeOf(run->dir), 0711u);  // Passable, not listable.
  EXPECT_EQ(OwnerOf(run->host_key), 0u);
  EXPECT_EQ(OwnerOf(run->dir + "/user"), 65534u);
  EXPECT_EQ(OwnerOf(run->authorized_keys), 65534u);
  EXPECT_EQ(OwnerOf(run->client_config), 65534u);
}

// The session user owns user/ and, across a restart of a root container
// (PID 1: the old temporary name was predictable), plants symlinks where
// root writes and a directory where a file goes.
TEST(RunDirTest, WhatTheSessionUserLeftIsNeverWrittenThrough) {
  if (geteuid() != 0) GTEST_SKIP() << "serving another user needs root";
  SecretDir parent;
  SessionUser nobody{"nobody", 65534, 65534, "/nonexistent", "/bin/sh"};
  std::string dir = parent.root() + "/run";
  ASSERT_TRUE(UseRunDir(dir, Keys(), nobody, 2222).ok());
  std::string victim = parent.root() + "/shadow";
  ASSERT_TRUE(WriteFileAtomically(victim, "root:x:", 0640).ok());
  std::string user_dir = dir + "/user";
  for (const char* name : {"authorized_keys", "id_job", "known_hosts"}) {
    std::string temp =
        user_dir + "/" + name + ".tmp." + std::to_string(getpid());
    ASSERT_EQ(symlink(victim.c_str(), temp.c_str()), 0);
  }
  ASSERT_EQ(unlink((user_dir + "/config").c_str()), 0);
  ASSERT_EQ(mkdir((user_dir + "/config").c_str(), 0700), 0);
  ASSERT_EQ(symlink(victim.c_str(), (user_dir + "/config/x").c_str()), 0);
  auto run = UseRunDir(dir, Keys(), nobody, 2222);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(*ReadFileToString(victim), "root:x:");
  EXPECT_EQ(OwnerOf(victim), 0u);
  EXPECT_EQ(ModeOf(victim), 0640u);
  EXPECT_EQ(*ReadFileToString(run->authorized_keys), "ssh-ed25519 AAAA\n");
  EXPECT_EQ(OwnerOf(user_dir), 65534u);
  EXPECT_EQ(OwnerOf(run->client_config), 65534u);
  EXPECT_NE(
      access((user_dir + "/authorized_keys.tmp." + std::to_string(getpid()))
                 .c_str(),
             F_OK),
      0);
}

TEST(RunDirTest, ASymlinkAsTheNamedDirIsRefused) {
  SecretDir parent;
  SessionUser me{"me", geteuid(), getegid(), "/", "/bin/sh"};
  std::string real = parent.root() + "/real";
  ASSERT_EQ(mkdir(real.c_str(), 0700), 0);
  std::string link = parent.root() + "/run";
  ASSERT_EQ(symlink(real.c_str(), link.c_str()), 0);
  auto run = UseRunDir(link, Keys(), me, 2222);
  ASSERT_FALSE(run.ok());
  EXPECT_NE(run.status().message().find("symlink"), std::string::npos)
      << run.status().message();
  EXPECT_NE(access((real + "/ssh_host_key").c_str(), F_OK), 0);
}

TEST(RunDirTest, AParentOthersCanWriteIsWarnedOf) {
  if (geteuid() != 0) GTEST_SKIP() << "serving another user needs root";
  SecretDir parent;
  SessionUser nobody{"nobody", 65534, 65534, "/nonexistent", "/bin/sh"};
  std::string shared = parent.root() + "/emptydir";
  ASSERT_EQ(mkdir(shared.c_str(), 0700), 0);
  ASSERT_EQ(chmod(shared.c_str(), 0777), 0);
  auto run = UseRunDir(shared + "/run", Keys(), nobody, 2222);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_NE(run->warning.find("no sticky bit"), std::string::npos)
      << run->warning;
  ASSERT_EQ(chmod(shared.c_str(), 01777), 0);
  auto sticky = UseRunDir(shared + "/run", Keys(), nobody, 2222);
  ASSERT_TRUE(sticky.ok()) << sticky.status().message();
  EXPECT_EQ(sticky->warning, "");
}

// TMPDIR with a space: the directory is made there (sshd_config quotes it);
// with a double quote, nothing is made at all.
TEST(RunDirTest, ParentWithASpaceWorksOneWithAQuoteIsRefused) {
  SecretDir parent;
  SessionUser me{"me", geteuid(), getegid(), "/", "/bin/sh"};
  std::string spaced = parent.root() + "/my tmp";
  ASSERT_EQ(mkdir(spaced.c_str(), 0700), 0);
  auto run = MakeRunDir(spaced, Keys(), me, 2222);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->dir.rfind(spaced + "/k8s-agent-sshd.", 0), 0u) << run->dir;
  EXPECT_NE(ReadFileToString(run->client_config)
                ->find("IdentityFile \"" + spaced + "/"),
            std::string::npos);
  std::string quoted = parent.root() + "/a\"b";
  ASSERT_EQ(mkdir(quoted.c_str(), 0700), 0);
  auto refused = MakeRunDir(quoted, Keys(), me, 2222);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("TMPDIR " + quoted +
                                            " has a double quote"),
            std::string::npos)
      << refused.status().message();
  EXPECT_EQ(rmdir(quoted.c_str()), 0);  // Empty: nothing was made in it.
  auto named = UseRunDir(quoted + "/run", Keys(), me, 2222);
  ASSERT_FALSE(named.ok());
  EXPECT_NE(named.status().message().find("--run-dir"), std::string::npos);
}

// A relative TMPDIR or --run-dir is made absolute: sshd would look for a
// relative AuthorizedKeysFile in the user's home.
TEST(RunDirTest, RelativeDirsBecomeAbsolute) {
  SecretDir parent;
  SessionUser me{"me", geteuid(), getegid(), "/", "/bin/sh"};
  std::vector<char> cwd(4096);
  ASSERT_NE(getcwd(cwd.data(), cwd.size()), nullptr);
  ASSERT_EQ(chdir(parent.root().c_str()), 0);
  auto run = MakeRunDir(".", Keys(), me, 2222);
  auto named = UseRunDir("run", Keys(), me, 2222);
  ASSERT_EQ(chdir(cwd.data()), 0);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->authorized_keys.rfind(parent.root() + "/k8s-agent-sshd.", 0),
            0u)
      << run->authorized_keys;
  ASSERT_TRUE(named.ok()) << named.status().message();
  EXPECT_EQ(named->pid_file, parent.root() + "/run/sshd.pid");
}

TEST(RunDirTest, UnwritableParentIsNamed) {
  SessionUser me{"me", geteuid(), getegid(), "/", "/bin/sh"};
  auto run = MakeRunDir("/proc/self", Keys(), me, 2222);
  ASSERT_FALSE(run.ok());
  EXPECT_NE(run.status().message().find("set TMPDIR"), std::string::npos);
}

TEST(RunDirTest, NamedDirIsMadeOrMustBePrivate) {
  SecretDir parent;
  SessionUser me{"me", geteuid(), getegid(), "/", "/bin/sh"};
  std::string dir = parent.root() + "/run";
  auto run = UseRunDir(dir, Keys(), me, 2222);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->pid_file, dir + "/sshd.pid");
  EXPECT_EQ(ModeOf(dir), 0700u);
  // A restarted container reuses it: the files are replaced.
  JobKeys k = Keys();
  k.host_key = "NEW";
  ASSERT_TRUE(UseRunDir(dir, k, me, 2222).ok());
  EXPECT_EQ(*ReadFileToString(dir + "/ssh_host_key"), "NEW");
  ASSERT_EQ(chmod(dir.c_str(), 0775), 0);
  auto shared = UseRunDir(dir, Keys(), me, 2222);
  ASSERT_FALSE(shared.ok());
  EXPECT_NE(shared.status().message().find("no one else can write to"),
            std::string::npos);
  EXPECT_FALSE(UseRunDir(parent.root() + "/a/b", Keys(), me, 2222).ok());
}

}  // namespace
}  // namespace k8s_agent::sshd
