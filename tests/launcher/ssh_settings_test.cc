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

std::optional<std::string> Root(unsigned) { return "root"; }

class SshSettingsTest : public ::testing::Test {
 protected:
  ssh::ConfigEnv Env() {
    ssh::ConfigEnv env;
    env.local_user = "root";
    env.home = "/root";
    env.read_file = [this](const std::string& path) -> StatusOr<std::string> {
      ++reads_[path];
      auto it = files_.find(path);
      if (it == files_.end()) return NotFoundError(path);
      return it->second;
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

}  // namespace
}  // namespace k8s_agent
