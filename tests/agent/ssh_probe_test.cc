// SPDX-License-Identifier: Apache-2.0
// SshProbe against scripted attempts and a fake clock: which failures are
// retried how soon, and the dual-stack walk over a pod's IPs.

#include "plugin/agent/ssh_probe.h"

#include <gtest/gtest.h>

#include "plugin/kube/api_retry.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_ssh_connector.h"

namespace k8s_agent {
namespace {

using State = SshProbe::State;
using SshState = ssh::SshConnection::State;

TEST(SshProbeTest, EveryCodeIsRetriedAsTheOneClassifierSays) {
  // The probe and the API retry policy read the same table: the probe
  // retries exactly kBackoff, and the API fails exactly kNone and kFail.
  FakeClock clock;
  for (int i = 0; i <= static_cast<int>(Code::kInternal); ++i) {
    Code code = static_cast<Code>(i);
    if (code == Code::kOk) continue;  // Not a failure: ClassifyForRetry.
    RetryClass c = ClassifyForRetry(code);
    ssh::FakeSshConnector ssh;
    ssh.script.push_back({SshState::kFailed, Status(code, "x")});
    SshProbe probe(&ssh, "w-0", 1);
    probe.SetTarget("uid", {"10.0.0.1"});
    probe.Start({}, clock.Now());
    EXPECT_EQ(probe.state() == State::kBackoff, c == RetryClass::kBackoff)
        << CodeName(code);
    EXPECT_EQ(probe.state() == State::kFailed, c != RetryClass::kBackoff)
        << CodeName(code);
    kube::ApiRetryPolicy api(1);
    EXPECT_EQ(api.Decide(Status(code, "x"), clock.Now()).action ==
                  kube::ApiAction::kFail,
              c == RetryClass::kFail)
        << CodeName(code);
  }
}

// The delay after one failed attempt with `outcome`.
Duration FirstRetryDelay(const ssh::FakeSshConnector::Outcome& outcome) {
  FakeClock clock;
  ssh::FakeSshConnector ssh;
  ssh.script.push_back(outcome);
  SshProbe probe(&ssh, "w-0", 7);
  probe.SetTarget("uid", {"10.0.0.1"});
  probe.Start({}, clock.Now());
  EXPECT_EQ(probe.state(), State::kBackoff);
  return probe.retry_at() - clock.Now();
}

TEST(SshProbeTest, RefusedRetriesFastEverythingElseSlowly) {
  EXPECT_LE(
      FirstRetryDelay({SshState::kFailed,
                       UnavailableError("connect: Connection refused"), true}),
      milliseconds(5));
  Duration closed = FirstRetryDelay(
      {SshState::kFailed,
       UnavailableError("Connection closed by 10.0.0.1 port 22 during SSH "
                        "handshake")});
  EXPECT_GE(closed, milliseconds(25));
  EXPECT_LE(closed, milliseconds(50));
}

TEST(SshProbeTest, ConnectErrorMovesToTheNextIpWithinOneAttempt) {
  FakeClock clock;
  ssh::FakeSshConnector ssh;
  ssh.Refuse(1);
  ssh.Succeed();
  SshProbe probe(&ssh, "w-0", 1);
  probe.SetTarget("uid", {"fd00:7::10", "10.0.0.5"});
  probe.Start({}, clock.Now());
  ASSERT_EQ(probe.state(), State::kReady);
  EXPECT_EQ(probe.ip(), "10.0.0.5");
  EXPECT_EQ(probe.attempts(), 1);
  EXPECT_EQ(probe.failures(), 0);
  ASSERT_EQ(ssh.attempts.size(), 2u);
  EXPECT_EQ(ssh.attempts[0]->ip, "fd00:7::10");
}

TEST(SshProbeTest, AHandshakeFailureDoesNotMoveToTheNextIp) {
  // Something answered there: the attempt failed, and the next starts
  // again from the first address after the slow backoff.
  FakeClock clock;
  ssh::FakeSshConnector ssh;
  ssh.script.push_back(
      {SshState::kFailed, UnavailableError("Connection reset by peer")});
  SshProbe probe(&ssh, "w-0", 1);
  probe.SetTarget("uid", {"fd00:7::10", "10.0.0.5"});
  probe.Start({}, clock.Now());
  EXPECT_EQ(probe.state(), State::kBackoff);
  EXPECT_EQ(ssh.attempts.size(), 1u);
  EXPECT_EQ(probe.failures(), 1);
}

TEST(SshProbeTest, AllIpsRefusedIsOneFailedAttempt) {
  FakeClock clock;
  ssh::FakeSshConnector ssh;
  ssh.Refuse(2);
  SshProbe probe(&ssh, "w-0", 1);
  probe.SetTarget("uid", {"fd00:7::10", "10.0.0.5"});
  probe.Start({}, clock.Now());
  EXPECT_EQ(probe.state(), State::kBackoff);
  EXPECT_EQ(probe.failures(), 1);
  EXPECT_LE(probe.retry_at() - clock.Now(), milliseconds(5));
  EXPECT_FALSE(probe.SetTarget("uid", {"fd00:7::10", "10.0.0.5"}));
  EXPECT_TRUE(probe.SetTarget("uid", {"10.0.0.9"}));
  EXPECT_EQ(probe.failures(), 0);
  EXPECT_TRUE(probe.due(clock.Now()));
}

}  // namespace
}  // namespace k8s_agent
