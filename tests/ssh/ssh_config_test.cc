// SPDX-License-Identifier: Apache-2.0
// ReadSshConfigs against OpenSSH 9.2's readconf.c semantics, on a fake
// file system: Host, Match, Include, IgnoreUnknown, the final pass.

#include "plugin/ssh/ssh_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "plugin/base/files.h"
#include "plugin/base/strings.h"
#include "tests/fakes/status_matchers.h"

namespace k8s_agent::ssh {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class SshConfigTest : public ::testing::Test {
 protected:
  SshConfigTest() {
    env_.local_user = "alice";
    env_.uid = 1000;
    env_.home = "/home/alice";
    env_.local_host = "launcher.example";
    env_.read_file = [this](const std::string& path) -> StatusOr<ConfigText> {
      auto it = files_.find(path);
      if (it == files_.end()) return NotFoundError(path + ": not found");
      ConfigText file{it->second};
      auto m = stats_.find(path);
      if (m != stats_.end()) std::tie(file.owner, file.mode) = m->second;
      return file;
    };
    env_.glob = [this](const std::string& pattern) {
      std::vector<std::string> out;  // std::map: sorted, as glob(3).
      for (const auto& [path, text] : files_) {
        if (MatchPattern(path, pattern)) out.push_back(path);
      }
      return out;
    };
    env_.run_exec = [this](const std::string& command) -> StatusOr<bool> {
      execs_.push_back(command);
      return command.find("true") != std::string::npos;
    };
  }

  // Reads the user file and the system file for `host`, over `cli`.
  StatusOr<SshOptions> Read(const std::string& host, SshOptions cli = {}) {
    notes_.clear();
    std::vector<ConfigFile> files = {{"/home/alice/.ssh/config", true, false},
                                     {"/etc/ssh/ssh_config", false, false}};
    Status s = ReadSshConfigs(files, host, env_, &cli, &notes_);
    if (!s.ok()) return s;
    return cli;
  }

  void User(const std::string& text) {
    files_["/home/alice/.ssh/config"] = text;
  }

  ConfigEnv env_;
  std::map<std::string, std::string> files_;
  /// Owner and st_mode by path; others are root's regular 0644 files.
  std::map<std::string, std::pair<unsigned, unsigned>> stats_;
  std::vector<std::string> execs_;
  std::vector<std::string> notes_;
};

TEST_F(SshConfigTest, HostBlocksAndPrecedence) {
  User(R"(# global
StrictHostKeyChecking=no
Host worker-* !worker-9
  User mpiuser
  Port 2222
  IdentityFile ~/.ssh/worker
Host *
  User nobody
  IdentityFile ~/.ssh/any
  ServerAliveInterval = 15
Host other
  Port 3
)");
  files_["/etc/ssh/ssh_config"] = "Host *\n  Port 7\n  User root\n";
  auto w = Read("worker-1");
  ASSERT_THAT(w.status(), IsOk());
  EXPECT_EQ(w->user, "mpiuser");
  EXPECT_EQ(w->port, 2222);
  EXPECT_EQ(w->strict_host_key_checking, StrictHostKeyChecking::kNo);
  EXPECT_EQ(w->server_alive_interval_s, 15);
  EXPECT_THAT(w->identity_files, ElementsAre("~/.ssh/worker", "~/.ssh/any"));
  auto n9 = Read("worker-9");
  ASSERT_THAT(n9.status(), IsOk());
  EXPECT_EQ(n9->user, "nobody");
  EXPECT_EQ(n9->port, 7);  // The system file fills what the user's left.
}

TEST_F(SshConfigTest, MatchHostSetsUserAndPort) {
  // The report: ssh logs in as u on 2206, the agent went as root to 22.
  User("Match host w1\n  User u\n  Port 2206\n");
  auto w1 = Read("w1");
  ASSERT_THAT(w1.status(), IsOk());
  EXPECT_EQ(w1->user, "u");
  EXPECT_EQ(w1->port, 2206);
  auto w2 = Read("w2");
  ASSERT_THAT(w2.status(), IsOk());
  EXPECT_FALSE(w2->user.has_value());
  EXPECT_FALSE(w2->port.has_value());
}

TEST_F(SshConfigTest, MatchHostSeesHostNameOriginalHostDoesNot) {
  User(R"(Host w1
  HostName w-1.workers
Match host w-1.*
  Port 1001
Match originalhost w1
  User orig
Match originalhost w-1.*
  User never
)");
  auto o = Read("w1");
  ASSERT_THAT(o.status(), IsOk());
  EXPECT_EQ(o->port, 1001);
  EXPECT_EQ(o->user, "orig");
}

TEST_F(SshConfigTest, MatchUserIsTheRemoteUserLocalUserOurs) {
  User(R"(Match user mpiuser
  Port 2222
Match localuser alice
  IdentityFile ~/.ssh/alice
Match !localuser alice
  IdentityFile ~/.ssh/never
)");
  SshOptions cli;
  cli.user = "mpiuser";  // -l mpiuser
  auto o = Read("w0", cli);
  ASSERT_THAT(o.status(), IsOk());
  EXPECT_EQ(o->port, 2222);
  EXPECT_THAT(o->identity_files, ElementsAre("~/.ssh/alice"));
  // Without -l the remote user is the local one.
  auto plain = Read("w0");
  ASSERT_THAT(plain.status(), IsOk());
  EXPECT_FALSE(plain->port.has_value());
  // User names compare case-sensitively, as in ssh.
  cli.user = "MPIUSER";
  EXPECT_FALSE(Read("w0", cli)->port.has_value());
}

TEST_F(SshConfigTest, MatchAllAndCriteriaCombineWithAnd) {
  User(R"(Match host w* user alice
  Port 11
Match all
  User everyone
)");
  auto o = Read("w0");
  EXPECT_EQ(o->port, 11);
  EXPECT_EQ(o->user, "everyone");
  User("Match host w* all\n");
  EXPECT_THAT(Read("w0"), StatusIs(Code::kInvalidArgument,
                                   "/home/alice/.ssh/config:1: Match all"));
}

TEST_F(SshConfigTest, FinalAndCanonicalMatchOnTheSecondPass) {
  User(R"(Match canonical
  Port 1
Match final
  User late
Host *
  User early-wins-over-nothing
)");
  // "Match final" asks for a second pass: canonical and final hold there.
  // First-value-wins: the Host * User from the first pass stays.
  auto o = Read("w0");
  ASSERT_THAT(o.status(), IsOk());
  EXPECT_EQ(o->port, 1);
  EXPECT_EQ(o->user, "early-wins-over-nothing");
  // Without final (or CanonicalizeHostname yes) there is one pass only.
  User("Match canonical\n  Port 1\n");
  EXPECT_FALSE(Read("w0")->port.has_value());
  User("CanonicalizeHostname yes\nMatch canonical\n  Port 1\n");
  EXPECT_EQ(Read("w0")->port, 1);
}

TEST_F(SshConfigTest, MatchExecRunsOnlyAfterEarlierCriteriaMatched) {
  User(R"(Match host nomatch exec "echo skipped"
  Port 1
Match host w* exec "test %h = w0 && true %n %p %r %u %%"
  Port 2
Match !exec "false"
  User u
)");
  auto o = Read("w0");
  ASSERT_THAT(o.status(), IsOk());
  EXPECT_EQ(o->port, 2);
  EXPECT_EQ(o->user, "u");
  EXPECT_THAT(execs_,
              ElementsAre("test w0 = w0 && true w0 22 alice alice %", "false"));
  User("Match exec \"x %C\"\n");
  EXPECT_THAT(Read("w0"),
              StatusIs(Code::kInvalidArgument, "token %C is not supported"));
}

// Stricter than ssh, which trusts a literal User or HostName: what a Match
// exec would hand a shell as %r or %h takes no shell metacharacters.
TEST_F(SshConfigTest, MatchExecGetsNoShellMetacharacters) {
  User("Host w0\n  User root;touch x\nMatch exec \"echo %r\"\n");
  EXPECT_THAT(Read("w0").status(),
              StatusIs(Code::kInvalidArgument,
                       "/home/alice/.ssh/config:2: User: remote user name "
                       "'root;touch x' contains invalid characters (it holds "
                       "';')"));
  User("Host w0\n  HostName w0$(touch x)\nMatch exec \"echo %h\"\n");
  EXPECT_THAT(Read("w0").status(),
              StatusIs(Code::kInvalidArgument,
                       "/home/alice/.ssh/config:3: Match exec %h: host name "
                       "'w0$(touch x)' contains invalid characters"));
  User("Host w0\n  HostKeyAlias a|b\nMatch exec \"echo %k\"\n");
  EXPECT_THAT(Read("w0").status(),
              StatusIs(Code::kInvalidArgument, "Match exec %k: host name"));
  SshOptions cli;
  cli.user = "`touch x`";
  User("Match exec \"echo %r\"\n");
  EXPECT_THAT(Read("w0", cli).status(),
              StatusIs(Code::kInvalidArgument, "Match exec %r: remote user"));
  EXPECT_THAT(execs_, ::testing::IsEmpty());
}

// ssh's read_config_file_depth(): ~/.ssh/config and every Include must be
// ours or root's and writable by no one else; only regular files are read.
TEST_F(SshConfigTest, ConfigOthersCouldWriteIsRefusedBeforeItsExecRuns) {
  const std::string user = "/home/alice/.ssh/config";
  auto read = [this, &user](unsigned owner, unsigned mode) {
    stats_[user] = {owner, S_IFREG | mode};
    std::vector<ConfigFile> files = {{user, true, false, "ssh config", true}};
    SshOptions options;
    return ReadSshConfigs(files, "w0", env_, &options, &notes_);
  };
  User("Match exec \"true\"\n  Port 7\n");
  EXPECT_THAT(read(1000, 0600), IsOk());
  EXPECT_THAT(read(0, 0644), IsOk());
  EXPECT_THAT(read(1000, 0664),
              StatusIs(Code::kFailedPrecondition,
                       "Bad owner or permissions on /home/alice/.ssh/config "
                       "(uid 1000, mode 0664)"));
  EXPECT_THAT(read(1000, 0602), StatusIs(Code::kFailedPrecondition));
  EXPECT_THAT(read(1001, 0600),
              StatusIs(Code::kFailedPrecondition, "(uid 1001, mode 0600)"));
  EXPECT_EQ(execs_.size(), 2u);  // Only the two accepted reads ran it.
  // Every Include is held to it, even from a file that is not (-F, the
  // system file), as ssh does.
  execs_.clear();
  files_["/etc/ssh/ssh_config"] = "Include /etc/ssh/inc.conf\n";
  files_["/etc/ssh/inc.conf"] = "Match exec \"true\"\n";
  stats_["/etc/ssh/inc.conf"] = {0, S_IFREG | 0666};
  std::vector<ConfigFile> system = {{"/etc/ssh/ssh_config", false, false}};
  SshOptions options;
  EXPECT_THAT(ReadSshConfigs(system, "w0", env_, &options, &notes_),
              StatusIs(Code::kFailedPrecondition,
                       "Bad owner or permissions on /etc/ssh/inc.conf"));
  // -F is not checked (as ssh), but a device never reads as a config.
  stats_["/etc/ssh/ssh_config"] = {1001, S_IFREG | 0666};
  files_["/etc/ssh/ssh_config"] = "Include /dev/zero\n";
  files_["/dev/zero"] = "";
  stats_["/dev/zero"] = {0, S_IFCHR | 0666};
  std::vector<ConfigFile> dash_f = {
      {"/etc/ssh/ssh_config", true, true, "-F", false}};
  EXPECT_THAT(ReadSshConfigs(dash_f, "w0", env_, &options, &notes_),
              StatusIs(Code::kFailedPrecondition,
                       "/dev/zero is not a regular file (a character "
                       "device)"));
  stats_["/dev/zero"] = {0, S_IFDIR | 0755};
  dash_f[0].path = "/dev/zero";
  EXPECT_THAT(ReadSshConfigs(dash_f, "w0", env_, &options, &notes_),
              StatusIs(Code::kFailedPrecondition, "(a directory)"));
  EXPECT_THAT(execs_, ::testing::IsEmpty());
}

// The machine's reader: the owner and mode come from the file itself, and
// a device or FIFO is returned unread (never waited on, never read).
TEST(SystemConfigEnvTest, ReadsOwnerAndModeAndNoDevice) {
  char templ[] = "/tmp/k8s-ssh-config-test.XXXXXX";
  std::string dir = mkdtemp(templ);
  ConfigEnv env = SystemConfigEnv(dir);
  std::string config = dir + "/config";
  ASSERT_TRUE(WriteFileAtomically(
                  config, "Match exec \"touch " + dir + "/ran\"\n", 0664)
                  .ok());
  StatusOr<ConfigText> text = env.read_file(config);
  ASSERT_THAT(text.status(), IsOk());
  EXPECT_EQ(text->mode, static_cast<unsigned>(S_IFREG | 0664));
  EXPECT_EQ(text->owner, geteuid());
  std::vector<std::string> notes;
  SshOptions options;
  EXPECT_THAT(ReadSshConfigs({{config, true, true, "--ssh-config", true}}, "w0",
                             env, &options, &notes),
              StatusIs(Code::kFailedPrecondition, "Bad owner or permissions"));
  EXPECT_NE(access((dir + "/ran").c_str(), F_OK), 0);
  StatusOr<ConfigText> zero = env.read_file("/dev/zero");
  ASSERT_THAT(zero.status(), IsOk());
  EXPECT_TRUE(S_ISCHR(zero->mode));
  EXPECT_EQ(zero->text, "");
  std::string fifo = dir + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  StatusOr<ConfigText> pipe = env.read_file(fifo);
  ASSERT_THAT(pipe.status(), IsOk());
  EXPECT_TRUE(S_ISFIFO(pipe->mode));
  std::filesystem::remove_all(dir);
}

TEST_F(SshConfigTest, UnknownCriterionOrKeywordNamesFileAndLine) {
  User("Host *\n  Port 22\nMatch tagged x\n");
  EXPECT_THAT(Read("w0"),
              StatusIs(Code::kInvalidArgument,
                       "/home/alice/.ssh/config:3: Match tagged: unsupported "
                       "criterion"));
  // A typo is an error even in a block for other hosts, as in ssh.
  User("Host other\n  Prot 22\n");
  EXPECT_THAT(Read("w0"),
              StatusIs(Code::kInvalidArgument,
                       "/home/alice/.ssh/config:2: Bad configuration option: "
                       "Prot"));
  User("Host *\n  Port many\n");
  EXPECT_THAT(Read("w0"), StatusIs(Code::kInvalidArgument,
                                   "/home/alice/.ssh/config:2: Port"));
}

TEST_F(SshConfigTest, IgnoreUnknownAndKeywordsWithoutEffect) {
  User(R"(IgnoreUnknown UseKeychain,AddKeys*
Host *
  UseKeychain yes
  ForwardAgent yes
  SendEnv LANG LC_*
)");
  auto o = Read("w0");
  ASSERT_THAT(o.status(), IsOk());
  EXPECT_THAT(Join(notes_, "\n"), HasSubstr("config:3: ignoring UseKeychain "
                                            "(IgnoreUnknown)"));
  EXPECT_THAT(Join(notes_, "\n"),
              HasSubstr("config:4: ignoring ForwardAgent: k8s-agent never "
                        "forwards anything"));
}

TEST_F(SshConfigTest, WhatCannotBeHonouredFailsOnlyWhereItApplies) {
  User("Host bastion\n  ProxyJump jump\nHost w*\n  ProxyCommand none\n");
  EXPECT_THAT(Read("w0").status(), IsOk());
  EXPECT_THAT(Read("bastion"),
              StatusIs(Code::kInvalidArgument,
                       "/home/alice/.ssh/config:2: ProxyJump jump cannot be "
                       "honoured: k8s-agent connects to the pod IP directly"));
}

TEST_F(SshConfigTest, IncludeResolvesRelativePathsAndGlobsInOrder) {
  // Debian's own layout: the system file includes ssh_config.d/*.conf.
  files_["/etc/ssh/ssh_config"] =
      "Include /etc/ssh/ssh_config.d/*.conf\nHost *\n  Port 9\n";
  files_["/etc/ssh/ssh_config.d/20-late.conf"] = "User late\nPort 20\n";
  files_["/etc/ssh/ssh_config.d/10-site.conf"] = "User site\n";
  User("Include extra\nInclude ~/nothing-*.conf\n");
  files_["/home/alice/.ssh/extra"] = "Host w*\n  IdentityFile ~/.ssh/x\n";
  auto o = Read("w0");
  ASSERT_THAT(o.status(), IsOk());
  EXPECT_EQ(o->user, "site");  // 10- before 20-.
  EXPECT_EQ(o->port, 20);
  EXPECT_THAT(o->identity_files, ElementsAre("~/.ssh/x"));
  // A relative Include in the system file is under /etc/ssh.
  files_["/etc/ssh/ssh_config"] = "Include ssh_config.d/10-site.conf\n";
  User("");
  EXPECT_EQ(Read("w0")->user, "site");
}

TEST_F(SshConfigTest, IncludeInABlockThatDoesNotApplyAppliesNothing) {
  User(R"(Host other
  Include inc
Port 5
)");
  files_["/home/alice/.ssh/inc"] = "Host *\n  User from-inc\n";
  auto o = Read("w0");
  ASSERT_THAT(o.status(), IsOk());
  EXPECT_FALSE(o->user.has_value());
  EXPECT_FALSE(o->port.has_value());  // Still inside "Host other".
  // An included Host line does not change the including file's block.
  User("Host w0\n  Include inc2\n  Port 6\n");
  files_["/home/alice/.ssh/inc2"] = "Host nothing\n";
  EXPECT_EQ(Read("w0")->port, 6);
  // And its lines are checked all the same.
  files_["/home/alice/.ssh/inc"] = "Bogus 1\n";
  User("Host other\n  Include inc\n");
  EXPECT_THAT(Read("w0"),
              StatusIs(Code::kInvalidArgument,
                       "/home/alice/.ssh/inc:1: Bad configuration"));
}

TEST_F(SshConfigTest, IncludeLoopsStopAtSixteenDeep) {
  User("Include config\n");
  EXPECT_THAT(Read("w0"),
              StatusIs(Code::kInvalidArgument, "nested more than 16 deep"));
}

TEST_F(SshConfigTest, AFileTheUserNamedMustExist) {
  SshOptions o;
  std::vector<std::string> notes;
  EXPECT_THAT(ReadSshConfigs({{"/nope", true, true}}, "w0", env_, &o, &notes),
              StatusIs(Code::kNotFound, "ssh config /nope: "));
  EXPECT_THAT(ReadSshConfigs({{"/nope", true, false}}, "w0", env_, &o, &notes),
              IsOk());
}

TEST_F(SshConfigTest, CommandLineIncludeIsRefused) {
  SshOptions o;
  std::string note;
  EXPECT_THAT(ApplySshSetting("Include", "x", &o, &note),
              StatusIs(Code::kInvalidArgument, "only works in an ssh_config"));
  EXPECT_THAT(ApplySshSetting("NoSuchKey", "x", &o, &note),
              StatusIs(Code::kInvalidArgument, "Bad configuration option"));
}

}  // namespace
}  // namespace k8s_agent::ssh
