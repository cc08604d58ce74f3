// SPDX-License-Identifier: Apache-2.0
// Each host gets the ssh settings ssh would use for it: --wait-only and
// --hostfile span hosts, and Host / Match blocks differ between them.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "launcher/options.h"
#include "plugin/base/strings.h"
#include "tests/fakes/status_matchers.h"

namespace k8s_agent {
namespace {

using ::testing::ElementsAre;

std::optional<std::string> Root(unsigned) { return "root"; }

class SshSettingsTest : public ::testing::Test {
 protected:
  ssh::ConfigEnv Env() {
    ssh::ConfigEnv env;
    env.local_user = "root";
    env.home = "/root";
    env.read_file =
        [this](const std::string& path) -> StatusOr<ssh::ConfigText> {
      ++reads_[path];
      auto it = files_.find(path);
      if (it == files_.end()) return NotFoundError(path);
      return ssh::ConfigText{it->second};
    };
    env.glob = [](const std::string&) { return std::vector<std::string>(); };
    env.run_exec = [](const std::string&) -> StatusOr<bool> { return false; };
    return env;
  }

  std::map<std::string, std::string> files_ = {
      {"/root/.ssh/config",
       "Host w-0\n  Port 2200\nMatch host w-1\n  User mpiuser\n  Port "
       "2201\n"},
      {"/etc/ssh/ssh_config", "Host *\n  Port 22\n  HostKeyAlias all\n"},
      {"/etc/mpi/ssh_config", "Host *\n  Port 2222\n  User only\n"}};
  std::map<std::string, int> reads_;
};

TEST_F(SshSettingsTest, EveryHostReadsItsOwnBlocks) {
  Options options;
  options.ssh.identity_files = {"/dev/null"};
  ssh::SshSettingsFor settings = SshSettingsFromOptions(options, Env(), &Root);
  StatusOr<ssh::ResolvedSshOptions> w0 = settings("w-0");
  StatusOr<ssh::ResolvedSshOptions> w1 = settings("w-1");
  StatusOr<ssh::ResolvedSshOptions> w2 = settings("w-2");
  ASSERT_THAT(w0.status(), IsOk());
  ASSERT_THAT(w1.status(), IsOk());
  ASSERT_THAT(w2.status(), IsOk());
  EXPECT_EQ(w0->port, 2200);
  EXPECT_EQ(w0->user, "root");
  EXPECT_EQ(w1->port, 2201);
  EXPECT_EQ(w1->user, "mpiuser");
  EXPECT_EQ(w2->port, 22);
  EXPECT_EQ(w2->host_key_alias, "all");
  // Read once per host, then remembered.
  (void)settings("w-0");
  EXPECT_EQ(reads_["/root/.ssh/config"], 3);
}

TEST_F(SshSettingsTest, DashFReadsThatFileAlone) {
  Options options;
  options.ssh_config_only = "/etc/mpi/ssh_config";
  StatusOr<ssh::ResolvedSshOptions> w0 =
      SshSettingsFromOptions(options, Env(), &Root)("w-0");
  ASSERT_THAT(w0.status(), IsOk());
  EXPECT_EQ(w0->port, 2222);
  EXPECT_EQ(w0->user, "only");
  EXPECT_EQ(reads_.count("/root/.ssh/config"), 0u);
  EXPECT_EQ(reads_.count("/etc/ssh/ssh_config"), 0u);
  options.ssh_config_only = "/missing";
  EXPECT_THAT(SshSettingsFromOptions(options, Env(), &Root)("w-0"),
              StatusIs(Code::kNotFound, "-F /missing: "));
  options.ssh_config_only = "none";
  EXPECT_EQ(SshSettingsFromOptions(options, Env(), &Root)("w-0")->port, 22);
}

TEST_F(SshSettingsTest, CommandLineComesFirst) {
  Options options;
  options.ssh.port = 7;
  EXPECT_EQ(SshSettingsFromOptions(options, Env(), &Root)("w-1")->port, 7);
  EXPECT_EQ(SshSettingsFromOptions(options, Env(), &Root)("w-1")->user,
            "mpiuser");
}

// ~/.ssh/config, or the file --ssh-config puts in its place, is checked
// as ssh checks ~/.ssh/config; -F and the system file are not.
TEST_F(SshSettingsTest, TheUsersFileIsPermissionChecked) {
  Options options;
  std::vector<ssh::ConfigFile> files = SshConfigFiles(options, "/root");
  ASSERT_EQ(files.size(), 2u);
  EXPECT_TRUE(files[0].check_permissions);
  EXPECT_FALSE(files[1].check_permissions);
  options.ssh_config_file = "/etc/mpi/user_config";
  EXPECT_TRUE(SshConfigFiles(options, "/root")[0].check_permissions);
  options.ssh_config_only = "/etc/mpi/ssh_config";
  EXPECT_FALSE(SshConfigFiles(options, "/root")[0].check_permissions);
}

// A user name with shell metacharacters, from -l, USER@HOST or -o User
// (a hostfile's user@ or plm_rsh_args), is refused before any config is
// read, so %r in a Match exec never runs it.
TEST_F(SshSettingsTest, ShellMetacharactersInTheUserAreRefusedFirst) {
  files_["/root/.ssh/config"] = "Match exec \"echo %r\"\n";
  std::vector<std::string> ran;
  auto env = Env();
  env.run_exec = [&ran](const std::string& c) -> StatusOr<bool> {
    ran.push_back(c);
    return false;
  };
  auto parse = [](std::vector<std::string> args) {
    args.insert(args.end(), {"hostname"});
    return ParseOptions(args, {}, [](const std::string& path) {
      return StatusOr<std::string>(NotFoundError(path));
    });
  };
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"-l", "root$(touch x)", "w0"},
           {"root;touch x@w0"},
           {"-o", "User=`touch x`", "w0"},
           {"-l", "-oProxyCommand=x", "w0"}}) {
    StatusOr<Options> options = parse(args);
    ASSERT_THAT(options.status(), IsOk()) << args[0];
    StatusOr<ssh::ResolvedSshOptions> w0 =
        SshSettingsFromOptions(*options, env, &Root)("w0");
    EXPECT_THAT(w0.status(), StatusIs(Code::kInvalidArgument,
                                      "contains invalid characters (it "))
        << args[0];
    EXPECT_THAT(w0.status().message(), ::testing::HasSubstr("-l, USER@HOST"));
  }
  EXPECT_THAT(ran, ::testing::IsEmpty());
  EXPECT_EQ(reads_.count("/root/.ssh/config"), 0u);
  // What ssh takes still works, and the exec then runs.
  StatusOr<Options> fine = parse({"-l", "DOMAIN\\mpi user", "w0"});
  ASSERT_THAT(fine.status(), IsOk());
  ASSERT_THAT(SshSettingsFromOptions(*fine, env, &Root)("w0").status(), IsOk());
  EXPECT_THAT(ran, ElementsAre("echo DOMAIN\\mpi user"));
}

TEST_F(SshSettingsTest, ShellMetacharactersInTheHostAreRefusedFirst) {
  files_["/root/.ssh/config"] = "Match exec \"echo %h\"\n";
  bool ran = false;
  auto env = Env();
  env.run_exec = [&ran](const std::string&) -> StatusOr<bool> {
    ran = true;
    return false;
  };
  Options options;
  for (const char* host :
       {"w0;touch x", "w0$(id)", "-oProxyCommand=x", "a b"}) {
    EXPECT_THAT(SshSettingsFromOptions(options, env, &Root)(host).status(),
                StatusIs(Code::kInvalidArgument, "HOST: host name '"))
        << host;
  }
  EXPECT_FALSE(ran);
}

}  // namespace
}  // namespace k8s_agent
