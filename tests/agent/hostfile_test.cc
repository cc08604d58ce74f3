// SPDX-License-Identifier: Apache-2.0
// --hostfile: ordering, slots, output formats, and the collector against a
// scripted API server, scripted SSH attempts and a fake clock.

#include "plugin/agent/hostfile.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "plugin/base/log.h"
#include "plugin/base/strings.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_http_transport.h"
#include "tests/fakes/fake_pods.h"
#include "tests/fakes/fake_ssh_connector.h"
#include "tests/fakes/log_capture.h"
#include "tests/fakes/status_matchers.h"

namespace k8s_agent {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using SshState = ssh::SshConnection::State;

// ---- Pure helpers
// -------------------------------------------------------------

TEST(FormatHostfileTest, OpenMpiAndHorovod) {
  std::vector<HostEntry> entries = {{"w-0", 4}, {"w-1", 2}};
  EXPECT_EQ(FormatHostfile(entries, HostfileFormat::kOpenMpi),
            "w-0 slots=4\nw-1 slots=2\n");
  EXPECT_EQ(FormatHostfile(entries, HostfileFormat::kHorovod),
            "w-0:4\nw-1:2\n");
  std::vector<HostEntry> bare = {{"w-0", 0}};
  EXPECT_EQ(FormatHostfile(bare, HostfileFormat::kOpenMpi), "w-0\n");
  EXPECT_EQ(FormatHostfile(bare, HostfileFormat::kHorovod), "w-0\n");
  EXPECT_EQ(FormatHostfile({}, HostfileFormat::kOpenMpi), "");
}

// ---- The collector
// ------------------------------------------------------------

// The listed workers: Running with an IP, labelled as the selector asks.
using PodSpec = kube::FakePod;
const PodSpec kDefaults = {
    .phase = "Running", .ip = "10.0.0.1", .labels = {{"role", "worker"}}};

std::string List(const std::vector<PodSpec>& pods, const std::string& rv) {
  return kube::PodListJson(pods, rv, kDefaults);
}

std::string Event(const char* type, const PodSpec& p) {
  return kube::WatchEventLine(type, p, kDefaults);
}

class HostfileCollectorTest : public ::testing::Test {
 protected:
  HostfileCollectorTest() : client_(&http_, kube::ClusterConfig{}) {}

  HostfileCollector& Make(HostfileOptions options) {
    options.ns = "default";
    options.label_selector = "role=worker";
    collector_ = std::make_unique<HostfileCollector>(options, &client_, &ssh_,
                                                     &clock_, 3);
    collector_->Start(clock_.Now());
    return *collector_;
  }
  // Plays the loop: timers if due, then the fd-collection step that frees
  // parked calls.
  void Advance(Duration d) {
    clock_.Advance(d);
    if (collector_->NextWake() <= clock_.Now()) {
      collector_->OnTimer(clock_.Now());
    }
    std::vector<pollfd> fds;
    collector_->CollectFds(&fds);
  }
  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    for (const HostEntry& e : collector_->entries()) names.push_back(e.name);
    return names;
  }

  FakeClock clock_;
  kube::FakeHttpTransport http_;
  kube::KubeClient client_;
  ssh::FakeSshConnector ssh_;
  std::unique_ptr<HostfileCollector> collector_;
};

TEST_F(HostfileCollectorTest, OneListRunningPodsWithIpInOrdinalOrder) {
  HostfileCollector& c = Make({});
  ASSERT_EQ(http_.size(), 1u);
  EXPECT_EQ(kube::QueryParam(http_.request(0), "labelSelector"),
            "role%3Dworker");
  EXPECT_EQ(kube::QueryParam(http_.request(0), "watch"), "");
  http_.Respond(0, 200,
                List({{.name = "w-10"},
                      {.name = "w-2"},
                      {.name = "w-1", .phase = "Pending", .ip = ""},
                      {.name = "w-3", .deleting = true},
                      {.name = "w-4", .ip = ""},
                      {.name = "w-5", .phase = "Succeeded"}},
                     "50"));
  ASSERT_TRUE(c.done());
  EXPECT_THAT(c.status(), IsOk());
  EXPECT_THAT(Names(), ElementsAre("w-2", "w-10"));
  EXPECT_EQ(c.entries()[0].slots, 0);  // No --slots: no slots field.
  EXPECT_EQ(http_.size(), 1u);         // No watch without --wait-for-count.
  EXPECT_TRUE(ssh_.attempts.empty());
}

TEST_F(HostfileCollectorTest, FixedSlots) {
  HostfileCollector& c = Make({.slots = 4});
  http_.Respond(0, 200, List({{.name = "w-0"}}, "5"));
  ASSERT_TRUE(c.done());
  ASSERT_EQ(c.entries().size(), 1u);
  EXPECT_EQ(c.entries()[0].slots, 4);
}

TEST_F(HostfileCollectorTest, SlotsFromResourceSkipsPodsWithout) {
  HostfileCollector& c = Make({.slots_from_resource = "nvidia.com/gpu"});
  http_.Respond(0, 200,
                List({{.name = "w-0", .gpus = "8"},
                      {.name = "w-1"},
                      {.name = "w-2", .gpus = "0"},
                      {.name = "w-3", .gpus = "2"}},
                     "5"));
  ASSERT_TRUE(c.done());
  ASSERT_THAT(Names(), ElementsAre("w-0", "w-3"));
  EXPECT_EQ(c.entries()[0].slots, 8);
  EXPECT_EQ(c.entries()[1].slots, 2);
}

TEST_F(HostfileCollectorTest, RetryableListErrorsAreRetriedForbiddenFails) {
  HostfileCollector& c = Make({});
  http_.Respond(0, 503, "");
  EXPECT_FALSE(c.done());
  Advance(seconds(5));
  // 403s are retried for a few seconds (RBAC warming up), then fail.
  for (size_t i = 1; !c.done() && i < 50; ++i) {
    ASSERT_EQ(http_.size(), i + 1);
    http_.Respond(i, 403,
                  R"({"kind":"Status","code":403,"reason":"Forbidden",)"
                  R"("message":"pods is forbidden"})");
    if (!c.done()) Advance(seconds(1));
  }
  ASSERT_TRUE(c.done());
  EXPECT_GE(http_.size(), 4u);
  EXPECT_THAT(c.status(), StatusIs(Code::kPermissionDenied,
                                   "listing pods "
                                   "matching "
                                   "role=worker"));
}

TEST_F(HostfileCollectorTest, WaitForCountFollowsTheWatch) {
  HostfileCollector& c = Make({.wait_for_count = 3});
  http_.Respond(
      0, 200,
      List({{.name = "w-0"}, {.name = "w-1", .phase = "Pending", .ip = ""}},
           "50"));
  EXPECT_FALSE(c.done());
  ASSERT_EQ(http_.size(), 2u);
  const kube::HttpRequest& watch = http_.request(1);
  EXPECT_EQ(kube::QueryParam(watch, "watch"), "true");
  EXPECT_EQ(kube::QueryParam(watch, "resourceVersion"), "50");
  EXPECT_EQ(kube::QueryParam(watch, "labelSelector"), "role%3Dworker");
  http_.Headers(1, 200);
  http_.Data(1, Event("MODIFIED", {.name = "w-1", .rv = "51"}));
  EXPECT_FALSE(c.done());
  http_.Data(1,
             Event("ADDED",
                   {.name = "w-2", .phase = "Pending", .ip = "", .rv = "52"}));
  EXPECT_FALSE(c.done());
  http_.Data(1, Event("MODIFIED", {.name = "w-2", .rv = "53"}));
  ASSERT_TRUE(c.done());
  EXPECT_THAT(c.status(), IsOk());
  EXPECT_THAT(Names(), ElementsAre("w-0", "w-1", "w-2"));
  std::vector<pollfd> fds;
  c.CollectFds(&fds);  // The loop's next turn frees the parked watcher.
  EXPECT_TRUE(http_.cancelled(1));
  EXPECT_EQ(http_.size(), 2u);  // One list, one watch: no polling.
}

TEST_F(HostfileCollectorTest, WaitForCountAlreadyMetNeedsNoEvents) {
  HostfileCollector& c = Make({.wait_for_count = 1});
  http_.Respond(0, 200, List({{.name = "w-0"}, {.name = "w-1"}}, "50"));
  ASSERT_TRUE(c.done());
  EXPECT_THAT(Names(), ElementsAre("w-0", "w-1"));  // All that qualify.
}

TEST_F(HostfileCollectorTest, DeletedPodStopsCounting) {
  HostfileCollector& c = Make({.wait_for_count = 2});
  http_.Respond(0, 200, List({{.name = "w-0"}}, "50"));
  http_.Headers(1, 200);
  http_.Data(1, Event("DELETED", {.name = "w-0", .rv = "51"}));
  http_.Data(1, Event("ADDED", {.name = "w-1", .rv = "52"}));
  EXPECT_FALSE(c.done());
  http_.Data(1, Event("ADDED", {.name = "w-0", .uid = "new", .rv = "53"}));
  ASSERT_TRUE(c.done());
  EXPECT_THAT(Names(), ElementsAre("w-0", "w-1"));
}

TEST_F(HostfileCollectorTest, TimeoutNamesCountAndWhyPodsAreNotReady) {
  HostfileCollector& c = Make({.wait_for_count = 3, .timeout = seconds(30)});
  http_.Respond(0, 200,
                List({{.name = "w-0"},
                      {.name = "w-1",
                       .phase = "Pending",
                       .ip = "",
                       .waiting = "ContainerCreating"}},
                     "50"));
  http_.Headers(1, 200);
  Advance(seconds(10));
  EXPECT_FALSE(c.done());
  Advance(seconds(20));
  ASSERT_TRUE(c.done());
  EXPECT_THAT(
      c.status(),
      StatusIs(Code::kDeadlineExceeded,
               "timed out after 30.0s waiting for 3 pods matching role=worker "
               "in namespace default: 1 of 3 qualify, only 2 pod(s) exist; "
               "not ready: w-1: Pending: ContainerCreating (raise --timeout"));
  std::vector<pollfd> fds;
  c.CollectFds(&fds);
  EXPECT_TRUE(http_.cancelled(1));
}

TEST_F(HostfileCollectorTest, TerminalPodsDoNotCountAsExisting) {
  // Given 3 wanted, 2 Running and an Indexed Job's Failed attempt, expect
  // the timeout to say only 2 pods exist and that the Failed one was passed
  // over, not that it is "not ready" (it will never be).
  HostfileCollector& c = Make({.wait_for_count = 3, .timeout = seconds(30)});
  http_.Respond(0, 200,
                List({{.name = "w-0"},
                      {.name = "w-1"},
                      {.name = "w-2-aaaaa",
                       .phase = "Failed",
                       .ip = "",
                       .terminated = "Error"}},
                     "50"));
  http_.Headers(1, 200);
  Advance(seconds(30));
  ASSERT_TRUE(c.done());
  EXPECT_THAT(c.status(),
              StatusIs(Code::kDeadlineExceeded,
                       "2 of 3 qualify, only 2 pod(s) exist; passed over "
                       "(ended or terminating): w-2-aaaaa: Failed (raise "
                       "--timeout"));
}

TEST_F(HostfileCollectorTest, SshReadyListsOnlyPodsThatAnswer) {
  ssh_.Succeed();
  ssh_.Refuse(1);
  HostfileCollector& c =
      Make({.ssh_ready = true, .ssh_for = [](const std::string& host) {
              ssh::ResolvedSshOptions o;
              o.port = host == "w-0" ? 2222 : 2200;
              o.host_key_alias = host;
              return StatusOr<ssh::ResolvedSshOptions>(o);
            }});
  http_.Respond(0, 200,
                List({{.name = "w-0", .ip = "10.0.0.1"},
                      {.name = "w-1", .ip = "10.0.0.2"},
                      {.name = "w-2", .phase = "Pending", .ip = ""}},
                     "5"));
  ASSERT_TRUE(c.done());
  EXPECT_THAT(c.status(), IsOk());
  EXPECT_THAT(Names(), ElementsAre("w-0"));
  ASSERT_EQ(ssh_.attempts.size(), 2u);  // One attempt each, none for w-2.
  EXPECT_EQ(ssh_.attempts[0]->ip, "10.0.0.1");
  EXPECT_EQ(ssh_.attempts[1]->ip, "10.0.0.2");
  // Each pod's own settings: ssh_config is read per host.
  EXPECT_EQ(ssh_.attempts[0]->port, 2222);
  EXPECT_EQ(ssh_.attempts[1]->port, 2200);
  EXPECT_TRUE(ssh_.attempts[0]->destroyed);  // Closed after the check.
}

TEST_F(HostfileCollectorTest, BadSshSettingsForOnePodFailAtOnce) {
  // Given ssh settings that cannot be resolved for the first pod (a bad
  // ssh_config Match), expect one failure naming it, and the collector's
  // walk over the pods to stop there (the failure drops the watcher that
  // holds them: ASan sees any step further).
  ssh_.Succeed();
  HostfileCollector& c =
      Make({.ssh_ready = true, .ssh_for = [](const std::string& host) {
              return StatusOr<ssh::ResolvedSshOptions>(
                  InvalidArgumentError("ssh_config: bad Match for " + host));
            }});
  http_.Respond(0, 200,
                List({{.name = "w-0", .ip = "10.0.0.1"},
                      {.name = "w-1", .ip = "10.0.0.2"}},
                     "5"));
  ASSERT_TRUE(c.done());
  EXPECT_THAT(c.status(), StatusIs(Code::kInvalidArgument,
                                   "pod w-0: ssh_config: bad Match for w-0"));
  EXPECT_TRUE(ssh_.attempts.empty());
}

TEST_F(HostfileCollectorTest, SshReadyNamesLeftOutPodsWithoutVerbose) {
  // Given sshd throttling one pod's handshake (MaxStartups closes it),
  // expect that pod left out with a warning at the default level, naming
  // it and the cause; a Pending pod stays an -v note.
  ssh_.Succeed();
  ssh_.script.push_back(
      {ssh::SshConnection::State::kFailed,
       UnavailableError("Connection closed by 10.0.0.2 port 22 during SSH "
                        "handshake")});
  SetLogLevel(LogLevel::kWarning);
  HostfileCollector* c = nullptr;
  std::string log = CaptureLog([&] {
    c = &Make({.ssh_ready = true});
    http_.Respond(0, 200,
                  List({{.name = "w-0", .ip = "10.0.0.1"},
                        {.name = "w-1", .ip = "10.0.0.2"},
                        {.name = "w-2", .phase = "Pending", .ip = ""}},
                       "5"));
  });
  ASSERT_TRUE(c->done());
  EXPECT_THAT(Names(), ElementsAre("w-0"));
  EXPECT_THAT(log, HasSubstr("leaving out pod w-1: Running at 10.0.0.2 but "
                             "ssh failed: Connection closed by 10.0.0.2"));
  EXPECT_THAT(log, Not(HasSubstr("w-2")));
}

TEST_F(HostfileCollectorTest, SshReadyWaitsForPendingAttempts) {
  HostfileCollector& c = Make({.ssh_ready = true});
  http_.Respond(0, 200, List({{.name = "w-0"}}, "5"));
  ASSERT_EQ(ssh_.attempts.size(), 1u);
  EXPECT_FALSE(c.done());  // The handshake is still in flight.
  // A real connection changes state inside its OnFdReady/OnTimer; the fake
  // has no fds, so run the collector's timer step by hand.
  ssh_.attempts[0]->state = SshState::kReady;
  c.OnTimer(clock_.Now());
  ASSERT_TRUE(c.done());
  EXPECT_THAT(Names(), ElementsAre("w-0"));
}

TEST_F(HostfileCollectorTest, SshReadyWithCountRetriesRefusedUntilReady) {
  ssh_.Refuse(2);
  ssh_.Succeed();
  HostfileCollector& c = Make({.ssh_ready = true, .wait_for_count = 1});
  http_.Respond(0, 200, List({{.name = "w-0"}}, "5"));
  EXPECT_FALSE(c.done());
  for (int i = 0; i < 50 && !c.done(); ++i) Advance(milliseconds(100));
  ASSERT_TRUE(c.done());
  EXPECT_THAT(Names(), ElementsAre("w-0"));
  EXPECT_EQ(ssh_.attempts.size(), 3u);
}

TEST_F(HostfileCollectorTest, SshReadyRetriesAThrottlingSshdSlowly) {
  // Given sshd closing every handshake (MaxStartups), not refusing the
  // connect, expect --ssh-ready --wait-for-count to retry on the slow
  // backoff (50 ms doubling to 2 s), not the 5-25 ms meant for a refused
  // connect: a handful of attempts in 5 s, never two within 25 ms.
  for (int i = 0; i < 1000; ++i) {
    ssh_.script.push_back(
        {SshState::kFailed,
         UnavailableError("Connection closed by 10.0.0.1 port 22 during SSH "
                          "handshake")});
  }
  HostfileCollector& c =
      Make({.ssh_ready = true, .wait_for_count = 1, .timeout = seconds(60)});
  http_.Respond(0, 200, List({{.name = "w-0"}}, "5"));
  ASSERT_EQ(ssh_.attempts.size(), 1u);
  std::vector<TimePoint> at = {clock_.Now()};
  const TimePoint end = clock_.Now() + seconds(5);
  while (clock_.Now() < end && !c.done()) {
    TimePoint wake = c.NextWake();
    ASSERT_GT(wake, clock_.Now()) << "the collector would spin";
    Advance(std::min(wake, end) - clock_.Now());
    while (at.size() < ssh_.attempts.size()) at.push_back(clock_.Now());
  }
  EXPECT_FALSE(c.done());
  EXPECT_GE(at.size(), 4u);
  EXPECT_LE(at.size(), 12u);
  for (size_t i = 1; i < at.size(); ++i) {
    EXPECT_GE(at[i] - at[i - 1], milliseconds(25)) << "retry " << i;
  }
}

TEST_F(HostfileCollectorTest, SshRejectionIsNotRetriedAndIsReported) {
  ssh_.script.push_back(
      {SshState::kFailed,
       FailedPreconditionError("host key for w-0 does not match")});
  HostfileCollector& c =
      Make({.ssh_ready = true, .wait_for_count = 1, .timeout = seconds(2)});
  http_.Respond(0, 200, List({{.name = "w-0", .ip = "10.0.0.7"}}, "5"));
  for (int i = 0; i < 30 && !c.done(); ++i) Advance(milliseconds(100));
  ASSERT_TRUE(c.done());
  EXPECT_EQ(ssh_.attempts.size(), 1u);
  EXPECT_THAT(c.status(),
              StatusIs(Code::kDeadlineExceeded,
                       "w-0: Running at 10.0.0.7 but ssh failed: host key for "
                       "w-0 does not match"));
}

TEST_F(HostfileCollectorTest, ConcurrentProbesAreCapped) {
  HostfileCollector& c = Make({.ssh_ready = true});
  std::vector<PodSpec> pods;
  for (int i = 0; i < 40; ++i)
    pods.push_back({.name = "w-" + std::to_string(i)});
  http_.Respond(0, 200, List(pods, "5"));
  EXPECT_EQ(ssh_.attempts.size(), 32u);   // The rest wait for a slot.
  EXPECT_GT(c.NextWake(), clock_.Now());  // Waiting, not spinning.
  ssh_.attempts[0]->state = SshState::kReady;
  c.OnTimer(clock_.Now());
  EXPECT_EQ(ssh_.attempts.size(), 33u);
  for (auto& a : ssh_.attempts) a->state = SshState::kReady;
  while (!c.done() && ssh_.attempts.size() < 60) {
    c.OnTimer(clock_.Now());
    for (auto& a : ssh_.attempts) a->state = SshState::kReady;
  }
  ASSERT_TRUE(c.done());
  EXPECT_EQ(c.entries().size(), 40u);
  EXPECT_EQ(c.entries()[39].name, "w-39");
}

TEST_F(HostfileCollectorTest, ReplacedPodIsProbedAgain) {
  ssh_.Refuse(1);
  HostfileCollector& c = Make({.ssh_ready = true, .wait_for_count = 1});
  http_.Respond(0, 200, List({{.name = "w-0", .ip = "10.0.0.1"}}, "5"));
  http_.Headers(1, 200);
  ssh_.Succeed();
  http_.Data(1,
             Event("MODIFIED",
                   {.name = "w-0", .ip = "10.0.0.9", .uid = "u2", .rv = "6"}));
  ASSERT_TRUE(c.done());
  ASSERT_EQ(ssh_.attempts.size(), 2u);
  EXPECT_EQ(ssh_.attempts[1]->ip, "10.0.0.9");
}

}  // namespace
}  // namespace k8s_agent
