// SPDX-License-Identifier: Apache-2.0
// The set-up the sshd integration tests share: a test sshd on loopback with
// its host key in a known_hosts file under the alias "w0", a real EventLoop,
// and the libssh2 connector that dials it.

#ifndef K8S_AGENT_TESTS_INTEGRATION_SSH_SSHD_CLIENT_TEST_H_
#define K8S_AGENT_TESTS_INTEGRATION_SSH_SSHD_CLIENT_TEST_H_

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "plugin/base/event_loop.h"
#include "plugin/ssh/ssh_client.h"
#include "tests/fakes/status_matchers.h"
#include "tests/integration/ssh/sshd_client_options.h"
#include "tests/integration/ssh/sshd_fixture.h"

namespace k8s_agent::testing {

// A bound on each wait for the loop, so a hang fails the test.
constexpr auto kSshdStepTimeout = std::chrono::seconds(20);

class SshdClientTest : public ::testing::Test {
 protected:
  // A peer that closes the connection must not kill the test with SIGPIPE.
  void SetUp() override { ::signal(SIGPIPE, SIG_IGN); }

  // Starts the sshd and writes its known_hosts (alias "w0"); a failure is
  // fatal to the test. A non-empty login_user logs in as a user that exists
  // only in sshd's own mount namespace (SshdFixture::CreateWithLoginUser).
  void StartSshd(const SshdSetup& setup = {},
                 const std::string& login_user = "") {
    auto f = login_user.empty()
                 ? SshdFixture::Create(setup)
                 : SshdFixture::CreateWithLoginUser(setup, login_user);
    ASSERT_THAT(f.status(), IsOk());
    sshd_ = std::move(f).value();
    auto kh = sshd_->WriteKnownHosts("w0");
    ASSERT_THAT(kh.status(), IsOk());
    known_hosts_ = *kh;
  }

  // A connection to the sshd under `alias`, added to the loop.
  std::unique_ptr<ssh::SshConnection> Connect(const ssh::ResolvedSshOptions& o,
                                              const std::string& alias = "w0") {
    connector_ = ssh::NewLibssh2Connector(RealClock::Get());
    ssh::ResolvedSshOptions with_alias = o;
    with_alias.host_key_alias = alias;
    auto c =
        connector_->Connect(with_alias, "127.0.0.1", RealClock::Get()->Now());
    loop_.Add(c.get());
    return c;
  }

  // Runs the loop until `done`; false if `timeout` passed first.
  bool RunUntil(const std::function<bool()>& done,
                Duration timeout = kSshdStepTimeout) {
    auto deadline = RealClock::Get()->Now() + timeout;
    while (!done()) {
      if (RealClock::Get()->Now() > deadline) return false;
      EXPECT_THAT(loop_.RunOnce(), IsOk());
    }
    return true;
  }

  EventLoop loop_{RealClock::Get()};
  std::unique_ptr<SshdFixture> sshd_;
  std::string known_hosts_;
  std::unique_ptr<ssh::SshConnector> connector_;
};

}  // namespace k8s_agent::testing

#endif  // K8S_AGENT_TESTS_INTEGRATION_SSH_SSHD_CLIENT_TEST_H_
