// SPDX-License-Identifier: Apache-2.0
// HostWaiter scenarios against a scripted API server, scripted SSH
// attempts and a fake clock: every transition, and the API call counts.

#include "plugin/agent/host_waiter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "plugin/base/log.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_http_transport.h"
#include "tests/fakes/fake_pods.h"
#include "tests/fakes/fake_ssh_connector.h"
#include "tests/fakes/log_capture.h"
#include "tests/fakes/status_matchers.h"
#include "tests/fakes/waiter_pods.h"

namespace k8s_agent {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using State = HostWaiter::State;
using SshState = ssh::SshConnection::State;

using waiter_pods::Event;
using waiter_pods::JobPod;
using waiter_pods::kDefaults;
using waiter_pods::List;
using waiter_pods::PodSpec;

// The answer to a host's lookup (a field-selected LIST) that finds `p`; the
// list's version is the cache's, newer than the pod's own.
std::string Found(const PodSpec& p) { return List({p}, "500"); }

class HostWaiterTest : public ::testing::Test {
 protected:
  // Progress lines are part of the product, not of these tests' output.
  HostWaiterTest() : client_(&http_, waiter_pods::Cluster()) {
    SetLogLevel(LogLevel::kError);
  }
  ~HostWaiterTest() override { SetLogLevel(LogLevel::kWarning); }

  HostWaiter& Make(const std::string& host, WaitPolicy policy = {}) {
    StatusOr<HostName> name = ParseHostName(host);
    EXPECT_THAT(name, IsOk());
    if (policy.ns.empty()) policy.ns = "default";
    waiter_ = std::make_unique<HostWaiter>(*name, policy, &client_, &ssh_,
                                           &clock_, &tracer_, 1);
    waiter_->Start(clock_.Now());
    return *waiter_;
  }

  // Advances time and runs the waiter's timers, as the loop would.
  void Advance(Duration d) {
    clock_.Advance(d);
    if (waiter_->NextWake() <= clock_.Now()) waiter_->OnTimer(clock_.Now());
  }

  std::string Path(size_t i) const { return http_.request(i).path; }

  // The API server down: every call the waiter makes fails with `error`
  // (Unavailable) while time passes, until the waiter gives up.
  void ApiDownUntilDone(const std::string& error) {
    for (int i = 0; i < 1000 && !waiter_->done(); ++i) {
      size_t last = http_.last_index();
      if (http_.active(last)) http_.Done(last, UnavailableError(error));
      Advance(waiter_->NextWake() - clock_.Now());
    }
    ASSERT_TRUE(waiter_->done());
  }

  FakeClock clock_;
  kube::FakeHttpTransport http_;
  kube::KubeClient client_;
  ssh::FakeSshConnector ssh_;
  Tracer tracer_;
  std::unique_ptr<HostWaiter> waiter_;
};

TEST_F(HostWaiterTest, ReadyPodCostsOneApiCallAndOneHandshake) {
  // Given a Running pod with an IP and sshd up, expect one LIST of that
  // name from the watch cache, no watch, and the connection handed over.
  ssh_.Succeed();
  HostWaiter& w = Make("w-0");
  ASSERT_EQ(http_.size(), 1u);
  EXPECT_EQ(Path(0),
            "/api/v1/namespaces/default/pods?fieldSelector=metadata.name%3Dw-0"
            "&resourceVersion=0");
  http_.Respond(0, 200, Found({.phase = "Running", .ip = "10.0.0.5"}));
  EXPECT_EQ(w.state(), State::kReady);
  EXPECT_EQ(http_.size(), 1u);
  ASSERT_EQ(ssh_.attempts.size(), 1u);
  EXPECT_EQ(ssh_.attempts[0]->ip, "10.0.0.5");
  EXPECT_NE(w.TakeConnection(), nullptr);
}

TEST_F(HostWaiterTest, PendingPodIsWatchedFromTheListsVersion) {
  // Given a Pending pod that turns Running, expect LIST + one WATCH from
  // the list's (cluster-wide, current) resourceVersion, not the pod's own
  // old one, then the watch cancelled once SSH is ready.
  ssh_.Succeed();
  HostWaiter& w = Make("w-0");
  http_.Respond(0, 200, Found({.rv = "41"}));
  EXPECT_EQ(w.state(), State::kWaitingForPod);
  ASSERT_EQ(http_.size(), 2u);
  EXPECT_THAT(Path(1), HasSubstr("fieldSelector=metadata.name%3Dw-0"));
  EXPECT_THAT(Path(1), HasSubstr("resourceVersion=500"));
  EXPECT_THAT(Path(1), HasSubstr("watch=true"));
  http_.Headers(1, 200);
  http_.Data(
      1, Event("MODIFIED", {.phase = "Running", .ip = "10.0.0.7", .rv = "42"}));
  EXPECT_EQ(w.state(), State::kReady);
  EXPECT_EQ(ssh_.attempts[0]->ip, "10.0.0.7");
  EXPECT_EQ(http_.size(), 2u);
  std::vector<pollfd> fds;
  w.CollectFds(&fds);  // The loop's next iteration retires the watch.
  EXPECT_TRUE(http_.cancelled(1)) << "watch must end once ready";
}

TEST_F(HostWaiterTest, PodNotCreatedYetCostsTwoListsAndTwoWatches) {
  // Given no pod named w-9 (a StatefulSet's, created late), expect the
  // watch of the pods a Job would label for hostname w-9 (from the cache's
  // state: rv 0), and a second later the watch by name from the lookup's
  // version, which sees the pod come, beside one namespace LIST for the
  // hostname (a pod without the labels): 4 calls, both watches ended once
  // ready.
  ssh_.Succeed();
  HostWaiter& w = Make("w-9");
  http_.Respond(0, 200, List({}, "76"));
  ASSERT_EQ(http_.size(), 2u);
  EXPECT_EQ(kube::QueryParam(http_.request(1), "labelSelector"),
            "batch.kubernetes.io%2Fjob-name%3Dw%2C"
            "batch.kubernetes.io%2Fjob-completion-index%3D9");
  EXPECT_EQ(kube::QueryParam(http_.request(1), "resourceVersion"), "0");
  EXPECT_EQ(kube::QueryParam(http_.request(1), "watch"), "true");
  http_.Headers(1, 200);
  EXPECT_EQ(w.state(), State::kWaitingForPod);
  Advance(milliseconds(999));
  EXPECT_EQ(http_.size(), 2u);
  Advance(milliseconds(1));
  ASSERT_EQ(http_.size(), 4u);
  EXPECT_THAT(Path(2), HasSubstr("fieldSelector=metadata.name%3Dw-9"));
  EXPECT_EQ(kube::QueryParam(http_.request(2), "resourceVersion"), "76");
  EXPECT_EQ(kube::QueryParam(http_.request(3), "labelSelector"), "");
  EXPECT_EQ(kube::QueryParam(http_.request(3), "watch"), "");
  http_.Respond(3, 200, List({{.name = "other", .hostname = "other"}}, "77"));
  EXPECT_EQ(w.state(), State::kWaitingForPod);
  http_.Headers(2, 200);
  http_.Data(
      2,
      Event("ADDED",
            {.name = "w-9", .phase = "Running", .ip = "10.0.0.9", .rv = "78"}));
  EXPECT_EQ(w.state(), State::kReady);
  EXPECT_EQ(w.pod_name(), "w-9");
  EXPECT_EQ(http_.size(), 4u);
  std::vector<pollfd> fds;
  w.CollectFds(&fds);
  EXPECT_TRUE(http_.cancelled(1));
  EXPECT_TRUE(http_.cancelled(2));
}

TEST_F(HostWaiterTest, LookupAnsweredWithAnotherPodIsNotTakenForIt) {
  // Given a name lookup that returns some other pod (a server or proxy that
  // ignores the field selector), expect it not to count as w-0: the wait
  // goes on to the labelled watch, and no SSH attempt is made to that pod.
  ssh_.Succeed();
  HostWaiter& w = Make("w-0");
  http_.Respond(0, 200,
                Found({.name = "w-9", .phase = "Running", .ip = "10.0.0.9"}));
  EXPECT_EQ(w.state(), State::kWaitingForPod);
  ASSERT_EQ(http_.size(), 2u);
  EXPECT_THAT(Path(1), Not(HasSubstr("fieldSelector")));
  EXPECT_THAT(Path(1), HasSubstr("watch=true"));
  EXPECT_TRUE(ssh_.attempts.empty());
}

TEST_F(HostWaiterTest, HostnameOfNoGrammarIsMatchedByANamespaceList) {
  // Given a pod named trainer-abcde with spec.hostname trainer (a Job's
  // pod template sets it), expect HOST trainer, which no controller's
  // hostname grammar fits, to be matched by a namespace-wide LIST.
  ssh_.Succeed();
  HostWaiter& w = Make("trainer");
  http_.Respond(0, 200, List({}, "4"));
  ASSERT_EQ(http_.size(), 2u);
  EXPECT_EQ(kube::QueryParam(http_.request(1), "labelSelector"), "");
  EXPECT_EQ(kube::QueryParam(http_.request(1), "watch"), "");
  http_.Respond(1, 200,
                List({{.name = "trainer-abcde",
                       .phase = "Running",
                       .ip = "10.0.0.3",
                       .hostname = "trainer"},
                      {.name = "job-1-xyz", .hostname = "job-1"}},
                     "5"));
  EXPECT_EQ(w.state(), State::kReady);
  EXPECT_EQ(w.pod_name(), "trainer-abcde");
}

// ---- A Job's hostname: the labelled watch ----------------------------------

TEST_F(HostWaiterTest, JobHostnameIsFoundByTheLabelledWatchInTwoCalls) {
  // Given HOST job-0.job (a JobSet's or Indexed Job's hostname with its
  // subdomain) and its Pending pod job-0-abcde, expect the name lookup,
  // then one watch of the pods labelled for Job "job" index 0 that finds
  // it and follows it to Running: 2 calls, no namespace-wide LIST.
  ssh_.Succeed();
  HostWaiter& w = Make("job-0.job");
  http_.Respond(0, 200, List({}, "40"));
  ASSERT_EQ(http_.size(), 2u);
  http_.Headers(1, 200);
  PodSpec pending = JobPod("job-0-abcde", {.rv = "30"});
  pending.subdomain = "job";
  http_.Data(1, Event("ADDED", pending));
  EXPECT_EQ(w.state(), State::kWaitingForPod);
  EXPECT_EQ(w.pod_name(), "job-0-abcde");
  Advance(seconds(5));  // No name watch: the pod was found.
  EXPECT_EQ(http_.size(), 2u);
  PodSpec running = pending;
  running.phase = "Running";
  running.ip = "10.0.0.4";
  running.rv = "41";
  http_.Data(1, Event("MODIFIED", running));
  EXPECT_EQ(w.state(), State::kReady);
  EXPECT_EQ(ssh_.attempts.back()->ip, "10.0.0.4");
  EXPECT_EQ(http_.size(), 2u);
}

TEST_F(HostWaiterTest, NameWatchWaitsUntilTheLabelledWatchIsAnswered) {
  // Given the labelled watch not answered yet (queued by API priority and
  // fairness, or refused with 429 and retried), expect no name watch
  // beside it: only a second after the server answered does silence mean
  // that no Job pod has HOST's hostname.
  HostWaiter& w = Make("w-3");
  http_.Respond(0, 200, List({}, "40"));
  ASSERT_EQ(http_.size(), 2u);
  Advance(seconds(5));
  EXPECT_EQ(http_.size(), 2u);
  http_.Headers(1, 200);
  Advance(milliseconds(999));
  EXPECT_EQ(http_.size(), 2u);
  Advance(milliseconds(1));
  ASSERT_EQ(http_.size(), 4u);  // The name watch and the namespace LIST.
  EXPECT_THAT(Path(2), HasSubstr("fieldSelector=metadata.name%3Dw-3"));
  EXPECT_EQ(kube::QueryParam(http_.request(3), "watch"), "");
  EXPECT_EQ(w.state(), State::kWaitingForPod);
}

TEST_F(HostWaiterTest, JobsFailedAttemptIsPassedOverForItsRetryOnOneWatch) {
  // Given the Failed first attempt of index 0, expect a wait for the Job's
  // retry on the same watch (no further call), then the retry used.
  ssh_.Succeed();
  HostWaiter& w = Make("job-0");
  http_.Respond(0, 200, List({}, "40"));
  http_.Headers(1, 200);
  http_.Data(1, Event("ADDED", JobPod("job-0-aaaaa", {.phase = "Failed",
                                                      .rv = "20",
                                                      .terminated = "Error"})));
  EXPECT_EQ(w.state(), State::kWaitingForPod);
  Advance(seconds(10));
  EXPECT_EQ(w.state(), State::kWaitingForPod);
  http_.Data(1, Event("ADDED", JobPod("job-0-bbbbb", {.phase = "Running",
                                                      .ip = "10.0.0.6",
                                                      .rv = "42"})));
  EXPECT_EQ(w.state(), State::kReady);
  EXPECT_EQ(w.pod_name(), "job-0-bbbbb");
  EXPECT_EQ(http_.size(), 2u);
}

TEST_F(HostWaiterTest, JobNotRetryingFailsAfterGraceNamingTheFailedAttempt) {
  // Given only the Failed attempt and no retry (backoffLimit reached),
  // expect failure after replacement_grace naming the pod and its reason.
  WaitPolicy policy;
  policy.replacement_grace = seconds(30);
  HostWaiter& w = Make("job-0", policy);
  http_.Respond(0, 200, List({}, "40"));
  http_.Headers(1, 200);
  http_.Data(1, Event("ADDED", JobPod("job-0-aaaaa", {.phase = "Failed",
                                                      .rv = "20",
                                                      .terminated = "Error"})));
  Advance(seconds(29));
  EXPECT_EQ(w.state(), State::kWaitingForPod);
  Advance(seconds(1));
  ASSERT_EQ(w.state(), State::kFailed);
  EXPECT_THAT(w.status().message(),
              HasSubstr("pod default/job-0-aaaaa is Failed; container main "
                        "Error (exit code 1); no replacement with hostname "
                        "job-0 appeared within 30.0s"));
  EXPECT_EQ(http_.size(), 2u);
}

TEST_F(HostWaiterTest, TwoLiveJobPodsForOneHostnameAreAnError) {
  ssh_.Succeed();
  HostWaiter& w = Make("job-0");
  http_.Respond(0, 200, List({}, "40"));
  http_.Headers(1, 200);
  http_.Data(1, Event("ADDED", JobPod("job-0-bbbbb", {.rv = "21"})) +
                    Event("ADDED", JobPod("job-0-ccccc", {.rv = "22"})));
  ASSERT_EQ(w.state(), State::kFailed);
  EXPECT_THAT(w.status().message(),
              HasSubstr("matches 2 pods in namespace default: job-0-bbbbb, "
                        "job-0-ccccc"));
}

TEST_F(HostWaiterTest, JobPodDeletedIsWaitedForOnTheSameWatch) {
  // Given the followed Job pod deleted, expect its replacement awaited on
  // the same watch and used; nothing is listed again.
  ssh_.Succeed();
  HostWaiter& w = Make("job-0");
  http_.Respond(0, 200, List({}, "40"));
  http_.Headers(1, 200);
  http_.Data(1, Event("ADDED", JobPod("job-0-aaaaa", {.rv = "21"})));
  http_.Data(1, Event("DELETED", JobPod("job-0-aaaaa", {.rv = "22"})));
  EXPECT_EQ(w.state(), State::kWaitingForPod);
  Advance(seconds(5));
  http_.Data(1, Event("ADDED", JobPod("job-0-bbbbb", {.phase = "Running",
                                                      .ip = "10.0.0.7",
                                                      .rv = "23"})));
  EXPECT_EQ(w.state(), State::kReady);
  EXPECT_EQ(w.pod_name(), "job-0-bbbbb");
  EXPECT_EQ(http_.size(), 2u);
}

TEST_F(HostWaiterTest, UnlabelledJobPodIsFoundByTheNamespaceList) {
  // Given a cluster older than 1.28 (a Job's pods carry no completion
  // index label), expect the labelled watch to answer with nothing, then
  // a second later the name watch and one namespace-wide LIST that finds
  // the pod by spec.hostname, followed by name from there.
  ssh_.Succeed();
  HostWaiter& w = Make("job-0");
  http_.Respond(0, 200, List({}, "40"));
  http_.Headers(1, 200);
  Advance(seconds(1));
  ASSERT_EQ(http_.size(), 4u);
  EXPECT_THAT(Path(2), HasSubstr("fieldSelector=metadata.name%3Djob-0"));
  http_.Headers(2, 200);
  EXPECT_EQ(kube::QueryParam(http_.request(3), "labelSelector"), "");
  EXPECT_EQ(kube::QueryParam(http_.request(3), "watch"), "");
  http_.Respond(3, 200,
                List({{.name = "job-0-abcde",
                       .phase = "Running",
                       .ip = "10.0.0.8",
                       .hostname = "job-0",
                       .controller = "Job/job"}},
                     "45"));
  EXPECT_EQ(w.state(), State::kReady);
  EXPECT_EQ(w.pod_name(), "job-0-abcde");
  std::vector<pollfd> fds;
  w.CollectFds(&fds);
  EXPECT_TRUE(http_.cancelled(1));
  EXPECT_TRUE(http_.cancelled(2));
}

TEST_F(HostWaiterTest, UnlabelledPodWithAJobsHostnameIsListedOnceWatchIsEmpty) {
  // Given a hand-written pod mpi-node-1 with spec.hostname node-1 and no
  // Job labels, and a --timeout of 5 s, expect the namespace LIST as soon
  // as the labelled watch has answered without a pod (beside the name
  // watch), not after not_found_grace (10 s, past the timeout): the pod
  // is used, not reported "not created yet".
  ssh_.Succeed();
  WaitPolicy policy;
  policy.timeout = seconds(5);
  HostWaiter& w = Make("node-1", policy);
  http_.Respond(0, 200, List({}, "40"));
  ASSERT_EQ(http_.size(), 2u);
  EXPECT_THAT(kube::QueryParam(http_.request(1), "labelSelector"),
              HasSubstr("job-completion-index%3D1"));
  http_.Headers(1, 200);
  TimePoint opened = clock_.Now();
  while (!w.done() && http_.size() < 4) {
    Advance(w.NextWake() - clock_.Now());
  }
  ASSERT_EQ(http_.size(), 4u) << w.status().message();
  EXPECT_EQ(clock_.Now() - opened, seconds(1));
  EXPECT_THAT(Path(2), HasSubstr("fieldSelector=metadata.name%3Dnode-1"));
  EXPECT_EQ(kube::QueryParam(http_.request(3), "labelSelector"), "");
  EXPECT_EQ(kube::QueryParam(http_.request(3), "watch"), "");
  http_.Respond(3, 200,
                List({{.name = "mpi-node-1",
                       .phase = "Running",
                       .ip = "10.0.0.11",
                       .hostname = "node-1",
                       .controller = ""}},
                     "45"));
  EXPECT_EQ(w.state(), State::kReady);
  EXPECT_EQ(w.pod_name(), "mpi-node-1");
  EXPECT_EQ(ssh_.attempts.back()->ip, "10.0.0.11");
}

TEST_F(HostWaiterTest, IpLiteralMatchesPodIpAndAmbiguityIsAnError) {
  HostWaiter& w = Make("10.0.0.3");
  ASSERT_EQ(http_.size(), 1u);
  EXPECT_THAT(Path(0), HasSubstr("/pods?"));
  http_.Respond(0, 200,
                List({{.name = "a", .phase = "Running", .ip = "10.0.0.3"},
                      {.name = "b", .phase = "Running", .ip = "10.0.0.3"}},
                     "5"));
  EXPECT_EQ(w.state(), State::kFailed);
  EXPECT_THAT(w.status(), StatusIs(Code::kFailedPrecondition, "a, b"));
}

TEST_F(HostWaiterTest, FailedPhaseFailsFastWithReason) {
  HostWaiter& w = Make("w-0");
  http_.Respond(0, 200, Found({}));
  http_.Headers(1, 200);
  PodSpec failed{.phase = "Failed", .rv = "11"};
  nlohmann::json pod = kube::PodJson(failed, kDefaults);
  pod["status"]["reason"] = "Evicted";
  pod["status"]["message"] = "low on memory";
  http_.Data(
      1, nlohmann::json({{"type", "MODIFIED"}, {"object", pod}}).dump() + "\n");
  EXPECT_EQ(w.state(), State::kFailed);
  EXPECT_THAT(w.status(), StatusIs(Code::kFailedPrecondition,
                                   "pod default/w-0 is Failed: Evicted: low "
                                   "on memory"));
  EXPECT_TRUE(ssh_.attempts.empty());
}

TEST_F(HostWaiterTest, ImagePullBackOffFailsFastAndIsConfigurable) {
  HostWaiter& w = Make("w-0");
  http_.Respond(0, 200, Found({.waiting = "ImagePullBackOff"}));
  EXPECT_EQ(w.state(), State::kFailed);
  EXPECT_THAT(w.status(),
              StatusIs(Code::kFailedPrecondition,
                       "container main is waiting: ImagePullBackOff: boom"));

  WaitPolicy lenient;
  lenient.fatal_reasons = {"CrashLoopBackOff"};
  HostWaiter& w2 = Make("w-0", lenient);
  http_.Respond(http_.last_index(), 200,
                Found({.waiting = "ImagePullBackOff"}));
  EXPECT_EQ(w2.state(), State::kWaitingForPod);
}

TEST_F(HostWaiterTest, UnschedulableIsReportedButWaitedOn) {
  HostWaiter& w = Make("w-0");
  http_.Respond(0, 200, Found({.unschedulable = "0/3 nodes"}));
  EXPECT_EQ(w.state(), State::kWaitingForPod);
  EXPECT_TRUE(http_.active(1));
}

TEST_F(HostWaiterTest, RunningBeforeSshdRetriesQuicklyThenSucceeds) {
  // Given a Running pod whose sshd refuses twice, expect retries after
  // backoffs of tens of milliseconds, then ready on the third attempt.
  ssh_.Refuse(2);
  ssh_.Succeed();
  HostWaiter& w = Make("w-0");
  http_.Respond(0, 200, Found({.phase = "Running", .ip = "10.0.0.5"}));
  EXPECT_EQ(w.state(), State::kBackoff);
  Duration first_wait = w.NextWake() - clock_.Now();
  EXPECT_GT(first_wait, Duration::zero());
  EXPECT_LE(first_wait, milliseconds(10));
  Advance(first_wait);
  EXPECT_EQ(w.state(), State::kBackoff);
  EXPECT_EQ(ssh_.attempts.size(), 2u);
  Advance(w.NextWake() - clock_.Now());
  EXPECT_EQ(w.state(), State::kReady);
  EXPECT_EQ(w.ssh_attempts(), 3);
  // The first refusal starts a watch (from the lookup's version): the
  // snapshot may be stale.
  ASSERT_EQ(http_.size(), 2u);
  EXPECT_THAT(Path(1), HasSubstr("resourceVersion=500"));
  std::vector<pollfd> fds;
  w.CollectFds(&fds);
  EXPECT_TRUE(http_.cancelled(1)) << "watch must end once ready";
}

TEST_F(HostWaiterTest, FailuresOtherThanRefusedBackOffFurther) {
  // Given a listener that resets every handshake (not a refused connect),
  // expect the delay to keep growing past the 25 ms refused-connect cap,
  // to the trouble cap, instead of ~50 connections a second.
  for (int i = 0; i < 20; ++i) {
    ssh_.script.push_back(
        {SshState::kFailed,
         UnavailableError("Connection reset by 10.0.0.5 port 22 during SSH "
                          "handshake")});
  }
  HostWaiter& w = Make("w-0");
  http_.Respond(0, 200, Found({.phase = "Running", .ip = "10.0.0.5"}));
  Duration wait{};
  for (int i = 0; i < 8; ++i) {
    ASSERT_EQ(w.state(), State::kBackoff);
    wait = w.NextWake() - clock_.Now();
    Advance(wait);
  }
  EXPECT_GT(wait, milliseconds(500));
  EXPECT_LE(wait, seconds(2));
  EXPECT_EQ(ssh_.attempts.size(), 9u);
}

TEST_F(HostWaiterTest, StaleRunningSnapshotIsFollowedAfterARefusal) {
  // Given a lookup that says Running at an old IP whose sshd is gone, when the
  // pod is then deleted and recreated at a new IP, expect the agent to
  // learn it from the watch that the first refusal started.
  ssh_.Refuse(1);
  HostWaiter& w = Make("w-1");
  http_.Respond(
      0, 200,
      Found(
          {.name = "w-1", .phase = "Running", .ip = "10.0.0.11", .rv = "20"}));
  ASSERT_EQ(http_.size(), 2u);
  http_.Headers(1, 200);
  http_.Data(1, Event("DELETED", {.name = "w-1",
                                  .phase = "Running",
                                  .ip = "10.0.0.11",
                                  .rv = "21"}));
  http_.Data(
      1,
      Event("ADDED",
            {.name = "w-1", .phase = "Pending", .uid = "uid-2", .rv = "22"}));
  EXPECT_EQ(w.state(), State::kWaitingForPod);
  ssh_.Succeed();
  http_.Data(1, Event("MODIFIED", {.name = "w-1",
                                   .phase = "Running",
                                   .ip = "10.0.0.21",
                                   .uid = "uid-2",
                                   .rv = "23"}));
  EXPECT_EQ(w.state(), State::kReady);
  EXPECT_EQ(ssh_.attempts.back()->ip, "10.0.0.21");
}

TEST_F(HostWaiterTest, HostKeyMismatchIsNotRetried) {
  ssh_.script.push_back(
      {SshState::kFailed, FailedPreconditionError("host key mismatch")});
  HostWaiter& w = Make("w-0");
  http_.Respond(0, 200, Found({.phase = "Running", .ip = "10.0.0.5"}));
  EXPECT_EQ(w.state(), State::kFailed);
  EXPECT_THAT(w.status(), StatusIs(Code::kFailedPrecondition,
                                   "ssh to pod default/w-0 at 10.0.0.5: host "
                                   "key mismatch"));
  EXPECT_EQ(ssh_.attempts.size(), 1u);
}

TEST_F(HostWaiterTest, ReplacedPodAbandonsTheOldProbe) {
  // Given a probe hanging on the old IP, when the pod is replaced (new UID
  // and IP), expect the old attempt destroyed and a probe of the new IP.
  HostWaiter& w = Make("w-0");
  http_.Respond(0, 200, Found({}));
  http_.Headers(1, 200);
  http_.Data(
      1, Event("MODIFIED", {.phase = "Running", .ip = "10.0.0.5", .rv = "11"}));
  ASSERT_EQ(ssh_.attempts.size(), 1u);
  EXPECT_EQ(w.state(), State::kProbing);
  http_.Data(
      1, Event("DELETED", {.phase = "Running", .ip = "10.0.0.5", .rv = "12"}));
  EXPECT_TRUE(ssh_.attempts[0]->destroyed);
  ssh_.Succeed();
  http_.Data(1, Event("ADDED", {.phase = "Running",
                                .ip = "10.0.0.6",
                                .uid = "uid-2",
                                .rv = "13"}));
  ASSERT_EQ(ssh_.attempts.size(), 2u);
  EXPECT_EQ(ssh_.attempts[1]->ip, "10.0.0.6");
  EXPECT_EQ(w.state(), State::kReady);
}

TEST_F(HostWaiterTest, BarePodBeingDeletedFailsAtOnce) {
  // Given a pod no controller owns, when the server marks it deleted
  // (MODIFIED with deletionTimestamp), expect failure at once naming it.
  HostWaiter& w = Make("w-0");
  http_.Respond(0, 200, Found({.controller = ""}));
  http_.Headers(1, 200);
  http_.Data(
      1, Event("MODIFIED", {.rv = "501", .controller = "", .deleting = true}));
  EXPECT_EQ(w.state(), State::kFailed);
  EXPECT_THAT(w.status(),
              StatusIs(Code::kFailedPrecondition,
                       "pod default/w-0 is being deleted and no controller "
                       "owns it"));
}

TEST_F(HostWaiterTest, BarePodDeletedFailsAtOnce) {
  // Given a bare pod whose DELETED arrives without a warning MODIFIED
  // (missed while the watch was down), expect the same failure.
  HostWaiter& w = Make("w-0");
  http_.Respond(0, 200, Found({.controller = ""}));
  http_.Headers(1, 200);
  http_.Data(1, Event("DELETED", {.rv = "501", .controller = ""}));
  EXPECT_EQ(w.state(), State::kFailed);
  EXPECT_THAT(w.status(), StatusIs(Code::kFailedPrecondition,
                                   "was deleted and no controller owns it"));
}

TEST_F(HostWaiterTest, ControlledPodTerminatingThenDeletedWaitsForReplacement) {
  // Given a StatefulSet's pod: MODIFIED with deletionTimestamp, DELETED,
  // then ADDED with a new uid and IP: expect a wait, then the new pod used.
  ssh_.Succeed();
  HostWaiter& w = Make("w-0");
  http_.Respond(0, 200, Found({}));
  http_.Headers(1, 200);
  http_.Data(1, Event("MODIFIED", {.rv = "501", .deleting = true}));
  EXPECT_EQ(w.state(), State::kWaitingForPod);
  http_.Data(1, Event("DELETED", {.rv = "502", .deleting = true}));
  EXPECT_EQ(w.state(), State::kWaitingForPod);
  Advance(seconds(10));
  EXPECT_EQ(w.state(), State::kWaitingForPod);
  http_.Data(1, Event("ADDED", {.phase = "Running",
                                .ip = "10.0.0.8",
                                .uid = "uid-2",
                                .rv = "503"}));
  EXPECT_EQ(w.state(), State::kReady);
  EXPECT_EQ(ssh_.attempts.back()->ip, "10.0.0.8");
}

TEST_F(HostWaiterTest, JobPodFoundByHostnameIsFollowedToItsReplacement) {
  // Given HOST trainer resolved by spec.hostname to a Job's pod, when that
  // pod is deleted, expect HOST resolved again (the replacement has a new
  // name): a list that finds only the terminating pod, a later one that
  // finds the new pod, then SSH to its IP.
  ssh_.Succeed();
  HostWaiter& w = Make("trainer");
  PodSpec old{.name = "job-0-abcde",
              .uid = "uid-1",
              .rv = "4",
              .hostname = "trainer",
              .controller = "Job/job"};
  http_.Respond(0, 200, List({}, "5"));
  http_.Respond(1, 200, List({old}, "5"));
  EXPECT_EQ(w.pod_name(), "job-0-abcde");
  ASSERT_EQ(http_.size(), 3u);
  EXPECT_THAT(Path(2), HasSubstr("metadata.name%3Djob-0-abcde"));
  http_.Headers(2, 200);
  old.rv = "6";
  http_.Data(2, Event("DELETED", old));
  EXPECT_EQ(w.state(), State::kResolving);
  ASSERT_EQ(http_.size(), 4u);
  EXPECT_THAT(Path(3), Not(HasSubstr("fieldSelector")));
  http_.Respond(3, 200, List({old}, "6"));  // A cache that lags a little.
  EXPECT_EQ(http_.size(), 4u);
  Advance(w.NextWake() - clock_.Now());
  ASSERT_EQ(http_.size(), 5u);
  http_.Respond(4, 200,
                List({{.name = "job-0-fghij",
                       .phase = "Running",
                       .ip = "10.0.0.9",
                       .uid = "uid-2",
                       .rv = "8",
                       .hostname = "trainer",
                       .controller = "Job/job"}},
                     "9"));
  EXPECT_EQ(w.state(), State::kReady);
  EXPECT_EQ(w.pod_name(), "job-0-fghij");
  EXPECT_EQ(ssh_.attempts.back()->ip, "10.0.0.9");
}

TEST_F(HostWaiterTest, JobPodNotReplacedFailsAfterGrace) {
  WaitPolicy policy;
  policy.replacement_grace = seconds(30);
  HostWaiter& w = Make("trainer", policy);
  PodSpec old{
      .name = "job-0-abcde", .hostname = "trainer", .controller = "Job/j"};
  http_.Respond(0, 200, List({}, "5"));
  http_.Respond(1, 200, List({old}, "5"));
  http_.Headers(2, 200);
  http_.Data(2, Event("DELETED", old));
  for (int i = 0; i < 100 && !w.done(); ++i) {
    if (http_.active(http_.last_index())) {
      http_.Respond(http_.last_index(), 200, List({}, "7"));
    }
    Advance(w.NextWake() - clock_.Now());
  }
  EXPECT_THAT(w.status(), StatusIs(Code::kFailedPrecondition,
                                   "was deleted and not replaced within 30.0s "
                                   "(is its controller Job/j gone?"));
  EXPECT_LE(http_.size(), 15u) << "polls with backoff, not in a loop";
}

// ---- A retried index: terminal pods next to live ones ---------

// An Indexed Job's pods for index 0: the Failed first attempt and its
// replacement share spec.hostname trainer.
const PodSpec kFailedAttempt{.name = "job-0-aaaaa",
                             .phase = "Failed",
                             .uid = "uid-a",
                             .hostname = "trainer",
                             .controller = "Job/job",
                             .terminated = "Error",
                             .created = "2026-12-01T10:00:00Z"};
PodSpec Retry(const std::string& phase, const std::string& ip = "") {
  return {.name = "job-0-bbbbb",
          .phase = phase,
          .ip = ip,
          .uid = "uid-b",
          .hostname = "trainer",
          .controller = "Job/job",
          .created = "2026-12-01T10:00:05Z"};
}

TEST_F(HostWaiterTest, FailedAttemptNextToARunningRetryUsesTheRetry) {
  // Given HOST trainer matching a Failed pod and a Running one by hostname,
  // expect the Running pod used (not "matches 2 pods"), and -v naming the
  // Failed pod that was passed over.
  ssh_.Succeed();
  SetLogLevel(LogLevel::kInfo);
  std::string log = CaptureLog([&] {
    Make("trainer");
    http_.Respond(0, 200, List({}, "4"));
    http_.Respond(1, 200,
                  List({kFailedAttempt, Retry("Running", "10.0.0.4")}, "5"));
  });
  ASSERT_EQ(waiter_->state(), State::kReady);
  EXPECT_EQ(waiter_->pod_name(), "job-0-bbbbb");
  EXPECT_EQ(ssh_.attempts.back()->ip, "10.0.0.4");
  EXPECT_THAT(log, HasSubstr("passing over pod job-0-aaaaa: Failed"));
}

TEST_F(HostWaiterTest, FailedAttemptNextToAPendingRetryWaitsForTheRetry) {
  // Given a Failed pod and a Pending one sharing the hostname, expect a
  // watch of the Pending pod, and SSH once it runs.
  ssh_.Succeed();
  HostWaiter& w = Make("trainer");
  http_.Respond(0, 200, List({}, "4"));
  http_.Respond(1, 200, List({kFailedAttempt, Retry("Pending")}, "5"));
  EXPECT_EQ(w.state(), State::kWaitingForPod);
  EXPECT_EQ(w.pod_name(), "job-0-bbbbb");
  ASSERT_EQ(http_.size(), 3u);
  EXPECT_THAT(Path(2), HasSubstr("metadata.name%3Djob-0-bbbbb"));
  EXPECT_THAT(Path(2), HasSubstr("watch=true"));
  http_.Headers(2, 200);
  PodSpec running = Retry("Running", "10.0.0.4");
  running.rv = "6";
  http_.Data(2, Event("MODIFIED", running));
  ASSERT_EQ(w.state(), State::kReady);
  EXPECT_EQ(ssh_.attempts.back()->ip, "10.0.0.4");
}

TEST_F(HostWaiterTest, OnlyAFailedJobPodWaitsForTheReplacement) {
  // Given only the Failed attempt (a Job owns it), expect no failure but
  // HOST looked up again after a backoff, then the replacement used.
  ssh_.Succeed();
  HostWaiter& w = Make("trainer");
  http_.Respond(0, 200, List({}, "4"));
  http_.Respond(1, 200, List({kFailedAttempt}, "5"));
  EXPECT_EQ(w.state(), State::kResolving);
  EXPECT_EQ(http_.size(), 2u) << "no watch of the Failed pod";
  EXPECT_TRUE(ssh_.attempts.empty());
  Advance(w.NextWake() - clock_.Now());
  ASSERT_EQ(http_.size(), 3u);
  EXPECT_THAT(Path(2), Not(HasSubstr("fieldSelector")));
  http_.Respond(2, 200,
                List({kFailedAttempt, Retry("Running", "10.0.0.4")}, "7"));
  EXPECT_EQ(w.state(), State::kReady);
  EXPECT_EQ(w.pod_name(), "job-0-bbbbb");
}

TEST_F(HostWaiterTest,
       OnlyAFailedJobPodNotReplacedFailsAfterGraceWithItsReason) {
  // Given only the Failed attempt, and no replacement in any later list,
  // expect a failure after replacement_grace (not before) naming the
  // Failed pod, why it failed, and the wait.
  WaitPolicy policy;
  policy.replacement_grace = seconds(30);
  HostWaiter& w = Make("trainer", policy);
  http_.Respond(0, 200, List({}, "4"));
  TimePoint t0 = clock_.Now();
  for (int i = 0; i < 100 && !w.done(); ++i) {
    if (http_.active(http_.last_index())) {
      http_.Respond(http_.last_index(), 200, List({kFailedAttempt}, "5"));
    }
    if (!w.done()) Advance(w.NextWake() - clock_.Now());
  }
  EXPECT_EQ(w.state(), State::kFailed);
  EXPECT_EQ(clock_.Now() - t0, seconds(30));
  EXPECT_THAT(w.status(),
              StatusIs(Code::kFailedPrecondition,
                       "pod default/job-0-aaaaa is Failed; container main "
                       "Error (exit code 1); no replacement with hostname "
                       "trainer appeared within 30.0s"));
  EXPECT_THAT(w.status().message(), HasSubstr("Job/job"));
  EXPECT_LE(http_.size(), 15u) << "polls with backoff, not in a loop";
}

TEST_F(HostWaiterTest, BareTerminalPodsFailAtOnceNamingTheNewest) {
  // Given two Failed bare pods sharing the hostname (nothing replaces a
  // bare pod), expect an immediate failure naming the newer one.
  HostWaiter& w = Make("trainer");
  http_.Respond(0, 200, List({}, "4"));
  PodSpec older = kFailedAttempt;
  older.controller = "";
  PodSpec newer = Retry("Failed");
  newer.controller = "";
  newer.reason = "Evicted";
  http_.Respond(1, 200, List({older, newer}, "5"));
  EXPECT_EQ(w.state(), State::kFailed);
  EXPECT_THAT(w.status(), StatusIs(Code::kFailedPrecondition,
                                   "pod default/job-0-bbbbb is Failed: "
                                   "Evicted"));
  EXPECT_EQ(http_.size(), 2u);
}

TEST_F(HostWaiterTest, FollowedJobPodThatFailsIsReplaced) {
  // Given HOST resolved by hostname to a Job's Pending pod, when that pod
  // turns Failed, expect HOST resolved again (as after a deletion) rather
  // than a failure, and the replacement used.
  ssh_.Succeed();
  HostWaiter& w = Make("trainer");
  PodSpec first = kFailedAttempt;
  first.phase = "Pending";
  first.terminated = "";
  first.rv = "4";
  http_.Respond(0, 200, List({}, "4"));
  http_.Respond(1, 200, List({first}, "5"));
  ASSERT_EQ(http_.size(), 3u);
  http_.Headers(2, 200);
  PodSpec failed = kFailedAttempt;
  failed.rv = "6";
  http_.Data(2, Event("MODIFIED", failed));
  EXPECT_EQ(w.state(), State::kResolving);
  ASSERT_EQ(http_.size(), 4u);
  EXPECT_THAT(Path(3), Not(HasSubstr("fieldSelector")));
  http_.Respond(3, 200,
                List({kFailedAttempt, Retry("Running", "10.0.0.4")}, "7"));
  EXPECT_EQ(w.state(), State::kReady);
  EXPECT_EQ(w.pod_name(), "job-0-bbbbb");
}

TEST_F(HostWaiterTest, TwoLivePodsAreStillAmbiguousBesideAFailedOne) {
  // Given two Running pods and a Failed one sharing the hostname, expect
  // the ambiguity error counting and naming only the live two.
  HostWaiter& w = Make("trainer");
  http_.Respond(0, 200, List({}, "4"));
  PodSpec other = Retry("Running", "10.0.0.5");
  other.name = "job-0-ccccc";
  other.uid = "uid-c";
  http_.Respond(
      1, 200, List({kFailedAttempt, Retry("Running", "10.0.0.4"), other}, "5"));
  EXPECT_EQ(w.state(), State::kFailed);
  EXPECT_THAT(w.status(),
              StatusIs(Code::kFailedPrecondition,
                       "matches 2 pods in namespace default: job-0-bbbbb, "
                       "job-0-ccccc"));
}

TEST_F(HostWaiterTest, IpKeptBySucceededPodNextToRunningOneUsesTheRunning) {
  // Given an IP a Succeeded pod still reports and a Running pod now has,
  // expect the Running pod used, as ssh IP would reach it.
  ssh_.Succeed();
  HostWaiter& w = Make("10.0.0.3");
  http_.Respond(0, 200,
                List({{.name = "done",
                       .phase = "Succeeded",
                       .ip = "10.0.0.3",
                       .terminated = "Completed"},
                      {.name = "w-1", .phase = "Running", .ip = "10.0.0.3"}},
                     "5"));
  EXPECT_EQ(w.state(), State::kReady);
  EXPECT_EQ(w.pod_name(), "w-1");
}

TEST_F(HostWaiterTest, IpOnlyTerminalPodsHaveFailsNamingThem) {
  // Given an IP only an Evicted pod reports, expect "no live pod has IP"
  // naming that pod and its phase, at once.
  HostWaiter& w = Make("10.0.0.3");
  http_.Respond(0, 200,
                List({{.name = "gone",
                       .phase = "Failed",
                       .ip = "10.0.0.3",
                       .reason = "Evicted"}},
                     "5"));
  EXPECT_EQ(w.state(), State::kFailed);
  EXPECT_THAT(w.status(),
              StatusIs(Code::kFailedPrecondition,
                       "no live pod in namespace default has IP 10.0.0.3: "
                       "pod gone is Failed: Evicted"));
}

TEST_F(HostWaiterTest, SlowFirstProbeStartsTheWatchFromTheLookupsVersion) {
  // Given a lookup that says Running and a probe that hangs (a silent TCP
  // listener at the pod IP), expect no watch while a handshake could still
  // be quick, then a watch from the lookup list's version, and a new IP acted
  // on at once instead of after ConnectTimeout.
  HostWaiter& w = Make("w-0");
  http_.Respond(0, 200,
                Found({.phase = "Running", .ip = "10.0.0.5", .rv = "30"}));
  ASSERT_EQ(ssh_.attempts.size(), 1u);
  EXPECT_EQ(w.state(), State::kProbing);
  EXPECT_LE(w.NextWake(), clock_.Now() + seconds(1));
  Advance(milliseconds(999));
  EXPECT_EQ(http_.size(), 1u) << "a quick handshake needs no watch";
  Advance(milliseconds(1));
  ASSERT_EQ(http_.size(), 2u);
  EXPECT_THAT(Path(1), HasSubstr("watch=true"));
  EXPECT_THAT(Path(1), HasSubstr("resourceVersion=500"));
  EXPECT_EQ(w.state(), State::kProbing);
  EXPECT_FALSE(ssh_.attempts[0]->destroyed) << "the probe goes on meanwhile";
  ssh_.Succeed();
  http_.Headers(1, 200);
  http_.Data(
      1, Event("MODIFIED", {.phase = "Running", .ip = "10.0.0.6", .rv = "31"}));
  EXPECT_TRUE(ssh_.attempts[0]->destroyed);
  ASSERT_EQ(ssh_.attempts.size(), 2u);
  EXPECT_EQ(ssh_.attempts[1]->ip, "10.0.0.6");
  EXPECT_EQ(w.state(), State::kReady);
}

TEST_F(HostWaiterTest, FailedOrDeletedDuringTheFirstProbeIsSeenAtOnce) {
  // Given a hanging first probe, when the pod fails, expect the failure
  // from the watch without waiting for the probe.
  HostWaiter& w = Make("w-0");
  http_.Respond(0, 200, Found({.phase = "Running", .ip = "10.0.0.5"}));
  Advance(seconds(1));
  ASSERT_EQ(http_.size(), 2u);
  http_.Headers(1, 200);
  http_.Data(1, Event("MODIFIED", {.phase = "Failed", .rv = "11"}));
  EXPECT_EQ(w.state(), State::kFailed);
  EXPECT_THAT(w.status(), StatusIs(Code::kFailedPrecondition, "is Failed"));
  EXPECT_TRUE(ssh_.attempts[0]->destroyed);

  // And when it is deleted, expect the probe abandoned.
  HostWaiter& w2 = Make("w-0");
  size_t get = http_.last_index();
  http_.Respond(get, 200, Found({.phase = "Running", .ip = "10.0.0.5"}));
  Advance(seconds(1));
  ASSERT_EQ(http_.size(), get + 2);
  http_.Headers(get + 1, 200);
  http_.Data(
      get + 1,
      Event("DELETED", {.phase = "Running", .ip = "10.0.0.5", .rv = "12"}));
  EXPECT_TRUE(ssh_.attempts.back()->destroyed);
  EXPECT_EQ(w2.state(), State::kWaitingForPod);
}

TEST_F(HostWaiterTest, ApiOutageIsReportedAsSuchNotAsPodState) {
  // Given a Pending pod being watched, when the API server stops answering,
  // expect the progress line and the timeout to blame the API server (for
  // how long, the last error), not the pod; and an answer to clear it.
  WaitPolicy policy;
  policy.timeout = seconds(60);
  HostWaiter& w = Make("w-0", policy);
  http_.Respond(0, 200, Found({.waiting = "ContainerCreating"}));
  ASSERT_EQ(http_.size(), 2u);
  http_.Done(1, UnavailableError("GET https://10.96.0.1/...: Connection "
                                 "refused"));
  ApiDownUntilDone("Connection refused");  // Re-watches keep failing.
  EXPECT_EQ(w.state(), State::kFailed);
  EXPECT_THAT(w.status(),
              StatusIs(Code::kDeadlineExceeded,
                       "waiting for pod default/w-0: no usable answer from "
                       "the API server for "));
  // (After three broken watches in a row the retry is a LIST.)
  EXPECT_THAT(w.status().message(),
              HasSubstr("pods in default: Connection refused"));
  EXPECT_THAT(w.status().message(),
              HasSubstr("last known: Pending: ContainerCreating"));
  EXPECT_THAT(w.status().message(),
              HasSubstr("check that the API server https://10.96.0.1:443 is "
                        "up and reachable"));
  EXPECT_THAT(w.status().message(), Not(HasSubstr("kubectl describe pod")));
}

TEST_F(HostWaiterTest, ApiAnswerClearsTheOutage) {
  WaitPolicy policy;
  policy.timeout = seconds(60);
  HostWaiter& w = Make("w-0", policy);
  http_.Respond(0, 200, Found({.waiting = "ContainerCreating"}));
  http_.Done(1, UnavailableError("Connection refused"));
  Advance(w.NextWake() - clock_.Now());
  size_t last = http_.last_index();
  ASSERT_TRUE(http_.active(last));
  http_.Headers(last, 200);
  http_.Data(last,
             Event("MODIFIED", {.rv = "11", .waiting = "ContainerCreating"}));
  while (!w.done()) Advance(w.NextWake() - clock_.Now());
  EXPECT_THAT(w.status(), StatusIs(Code::kDeadlineExceeded,
                                   "w-0: Pending: ContainerCreating for"));
  EXPECT_THAT(w.status().message(), Not(HasSubstr("API server")));
}

TEST_F(HostWaiterTest, ApiDownFromTheStartSaysSoNotPodMissing) {
  // Given an API server that never answers the lookup, expect the timeout to
  // say so, and never "does not exist" or a pod state.
  WaitPolicy policy;
  policy.timeout = seconds(20);
  HostWaiter& w = Make("w-0", policy);
  ApiDownUntilDone("get pods in default: Connection refused");
  EXPECT_THAT(w.status(), StatusIs(Code::kDeadlineExceeded,
                                   "no usable answer from the API server for"));
  EXPECT_THAT(w.status().message(), HasSubstr("the pod was not read yet"));
}

TEST_F(HostWaiterTest, ApiServerThatNeverAnsweredFailsAfterItsOwnBudget) {
  // Given an API server that refuses every connection from the start (a
  // wrong --server), expect the wait to end after the first-answer budget
  // (30 s), not the 10 min --timeout, naming the server, the failure and
  // what to check.
  HostWaiter& w = Make("w-0");
  ApiDownUntilDone(
      "list pods in default: GET https://10.96.0.1:443/api/v1/...: "
      "Couldn't connect to server: Failed to connect to 10.96.0.1 port 443: "
      "Connection refused");
  EXPECT_EQ(w.state(), State::kFailed);
  EXPECT_LE(clock_.Now() - FakeClock().Now(), seconds(31));
  EXPECT_THAT(w.status(), StatusIs(Code::kUnavailable,
                                   "the API server https://10.96.0.1:443 never "
                                   "answered within 30.0s (connection "
                                   "refused: "));
  EXPECT_THAT(w.status().message(),
              HasSubstr("check --server, KUBERNETES_SERVICE_HOST"));
  EXPECT_THAT(w.status().message(), HasSubstr("--api-first-answer-timeout"));
}

TEST_F(HostWaiterTest, FirstAnswerBudgetIsSettable) {
  WaitPolicy policy;
  policy.api_first_answer_timeout = seconds(2);
  HostWaiter& w = Make("w-0", policy);
  EXPECT_EQ(w.NextWake(), clock_.Now() + seconds(2));
  Advance(seconds(2));  // The lookup still hangs: no error yet.
  EXPECT_EQ(w.state(), State::kFailed);
  EXPECT_THAT(w.status(), StatusIs(Code::kUnavailable,
                                   "never answered within 2.0s (no response"));
}

TEST_F(HostWaiterTest, OutageAfterAnAnswerGetsTheWholeTimeout) {
  // Given a server that answered once, expect an outage to be waited out
  // up to --timeout (as before), not cut at the first-answer budget.
  WaitPolicy policy;
  policy.timeout = seconds(120);
  HostWaiter& w = Make("w-0", policy);
  http_.Headers(0, 200);  // The server answers (the real transport: bytes).
  http_.Done(0, UnavailableError("connection reset"));
  ApiDownUntilDone("Connection refused");
  EXPECT_THAT(w.status(),
              StatusIs(Code::kDeadlineExceeded, "timed out after 2m0s"));
}

TEST_F(HostWaiterTest, SlowLookupSaysNoAnswerYetNotThatThePodIsMissing) {
  // Given a lookup LIST that takes 25 s to answer, expect progress lines
  // to say the API server has not answered yet, never "does not exist
  // yet" before any answer; then, after the answer (no pod at all in the
  // namespace), the not-found hint after not_found_grace names the
  // namespace. (HOST is no pod name and fits no Job grammar: the second
  // call is a namespace-wide LIST.)
  HostWaiter& w = Make("launcher");
  std::string log = CaptureLog([&] {
    SetLogLevel(LogLevel::kWarning);
    for (int i = 0; i < 25; ++i) Advance(seconds(1));
    SetLogLevel(LogLevel::kError);
  });
  EXPECT_THAT(log, Not(HasSubstr("does not exist")));
  EXPECT_THAT(log, HasSubstr("waiting for pod default/launcher: no answer yet "
                             "from the API server (5.0s)"));
  ASSERT_EQ(http_.size(), 1u);
  http_.Respond(0, 200, List({}, "500"));
  ASSERT_EQ(http_.size(), 2u);
  http_.Respond(1, 200, List({}, "500"));
  ASSERT_EQ(http_.size(), 3u);  // The watch for its creation.
  EXPECT_EQ(w.state(), State::kWaitingForPod);
  log = CaptureLog([&] {
    SetLogLevel(LogLevel::kWarning);
    for (int i = 0; i < 12; ++i) Advance(seconds(1));
    SetLogLevel(LogLevel::kError);
  });
  EXPECT_THAT(log, HasSubstr("does not exist yet after 35"));
  EXPECT_THAT(log, HasSubstr("namespace default holds no pods at all: is "
                             "the namespace right?"));
}

TEST_F(HostWaiterTest, OversizedEventIsNamedInTheFinalMessage) {
  // Given a watch event over the 16 MiB limit (a 20 MB pod), expect the
  // failure to name that cause, not "Pending": too large is not retried
  // (kTooLarge, api_retry.h), since the same pod would be as large again.
  WaitPolicy policy;
  policy.timeout = seconds(30);
  HostWaiter& w = Make("w-0", policy);
  http_.Respond(0, 200, Found({.waiting = "ContainerCreating"}));
  http_.Headers(1, 200);
  std::string huge = R"({"type":"MODIFIED","object":{"metadata":{"name":"w-0",)"
                     R"("annotations":{"a":")" +
                     std::string(20u << 20, 'x');
  http_.Data(1, huge);
  EXPECT_EQ(w.state(), State::kFailed);
  EXPECT_THAT(w.status(), StatusIs(Code::kTooLarge,
                                   "watch event larger than 16777216 bytes"));
  EXPECT_THAT(w.status().message(), Not(HasSubstr("Pending")));
}

TEST_F(HostWaiterTest, DeletedAndNotReplacedFailsAfterGrace) {
  WaitPolicy policy;
  policy.replacement_grace = seconds(30);
  HostWaiter& w = Make("w-0", policy);
  http_.Respond(0, 200, Found({}));
  http_.Headers(1, 200);
  http_.Data(1, Event("DELETED", {.rv = "12"}));
  EXPECT_EQ(w.state(), State::kWaitingForPod);
  Advance(seconds(29));
  EXPECT_EQ(w.state(), State::kWaitingForPod);
  Advance(seconds(1));
  EXPECT_EQ(w.state(), State::kFailed);
  EXPECT_THAT(w.status(),
              StatusIs(Code::kFailedPrecondition, "deleted and not replaced"));
  EXPECT_THAT(w.status().message(), HasSubstr("StatefulSet/w"));
}

TEST_F(HostWaiterTest, TimeoutNamesTheLastStateSeen) {
  WaitPolicy policy;
  policy.timeout = std::chrono::minutes(10);
  // The scripted watch stays open and healthy but, unlike a real server,
  // sends no bookmarks: keep the silence under the watch idle limit.
  policy.watch_idle_timeout = std::chrono::minutes(20);
  HostWaiter& w = Make("w-0", policy);
  http_.Respond(0, 200, Found({.waiting = "ContainerCreating"}));
  for (int i = 0; i < 30 && !w.done(); ++i) Advance(seconds(30));
  EXPECT_EQ(w.state(), State::kFailed);
  EXPECT_THAT(w.status(),
              StatusIs(Code::kDeadlineExceeded,
                       "timed out after 10m0s waiting for pod default/w-0: "
                       "Pending: ContainerCreating for 10m0s"));
}

TEST_F(HostWaiterTest, TimeoutWhileSshRefusesCountsAttempts) {
  WaitPolicy policy;
  policy.timeout = seconds(5);
  ssh_.Refuse(1000);
  HostWaiter& w = Make("w-0", policy);
  http_.Respond(0, 200, Found({.phase = "Running", .ip = "10.1.2.3"}));
  while (!w.done()) Advance(w.NextWake() - clock_.Now());
  EXPECT_THAT(w.status(), StatusIs(Code::kDeadlineExceeded,
                                   "Running at 10.1.2.3 but ssh is not ready"));
  EXPECT_THAT(w.status().message(), HasSubstr("Connection refused"));
  EXPECT_GT(w.ssh_attempts(), 10);
}

TEST_F(HostWaiterTest, WaitForReadyRequiresTheReadyCondition) {
  WaitPolicy policy;
  policy.require_ready = true;
  ssh_.Succeed();
  HostWaiter& w = Make("w-0", policy);
  http_.Respond(0, 200, Found({.phase = "Running", .ip = "10.0.0.5"}));
  EXPECT_EQ(w.state(), State::kWaitingForPod);
  http_.Headers(1, 200);
  http_.Data(
      1,
      Event("MODIFIED",
            {.phase = "Running", .ip = "10.0.0.5", .rv = "11", .ready = true}));
  EXPECT_EQ(w.state(), State::kReady);
}

TEST_F(HostWaiterTest, IdleWaiterSleepsUntilItsNextDeadline) {
  // A waiting host must never ask the loop for an immediate wakeup.
  HostWaiter& w = Make("w-0");
  http_.Respond(0, 200, Found({}));
  EXPECT_GT(w.NextWake(), clock_.Now() + seconds(1));
}

constexpr char kForbidden[] =
    R"({"kind":"Status","code":403,"reason":"Forbidden","details":)"
    R"({"name":"w-0","kind":"pods"},"message":"pods \"w-0\" is forbidden"})";

TEST_F(HostWaiterTest, RbacErrorIsRetriedForSecondsThenFails) {
  // Given 403 on every lookup, expect a few quick retries within the short
  // window, then the RBAC failure naming the Role file.
  HostWaiter& w = Make("w-0");
  TimePoint t0 = clock_.Now();
  for (size_t i = 0; !w.done() && i < 50; ++i) {
    ASSERT_EQ(http_.size(), i + 1);
    http_.Respond(i, 403, kForbidden);
    if (!w.done()) Advance(w.NextWake() - clock_.Now());
  }
  EXPECT_EQ(w.state(), State::kFailed);
  EXPECT_THAT(w.status(), StatusIs(Code::kPermissionDenied, "role.yaml"));
  EXPECT_GE(http_.size(), 4u);
  EXPECT_LE(clock_.Now() - t0, kube::ApiRetryPolicy::kForbiddenWindow);
}

TEST_F(HostWaiterTest, OneForbiddenRightAfterAServerStartIsRetried) {
  ssh_.Succeed();
  HostWaiter& w = Make("w-0");
  http_.Respond(0, 403, kForbidden);
  EXPECT_EQ(w.state(), State::kResolving);
  Advance(w.NextWake() - clock_.Now());
  ASSERT_EQ(http_.size(), 2u);
  http_.Respond(1, 200, Found({.phase = "Running", .ip = "10.0.0.5"}));
  EXPECT_EQ(w.state(), State::kReady);
}

TEST_F(HostWaiterTest, UnauthorizedLookupReloadsTheTokenOnce) {
  // The same rule as the watch: one re-read of a rotated token, then fail.
  HostWaiter& w = Make("w-0");
  http_.Respond(0, 401, R"({"kind":"Status","code":401})");
  EXPECT_EQ(http_.token_invalidations(), 1);
  ASSERT_EQ(http_.size(), 2u);
  http_.Respond(1, 401, R"({"kind":"Status","code":401})");
  EXPECT_EQ(w.state(), State::kFailed);
  EXPECT_THAT(w.status(),
              StatusIs(Code::kUnauthenticated, "reloading the credential"));
}

TEST_F(HostWaiterTest, TooLargeAnswerFailsWithoutRetry) {
  HostWaiter& w = Make("w-0");
  http_.Headers(0, 200);
  std::string mib(1u << 20, ' ');
  for (int i = 0; i < 65; ++i) http_.Data(0, mib);
  http_.Done(0);
  EXPECT_EQ(w.state(), State::kFailed);
  EXPECT_THAT(w.status(), StatusIs(Code::kTooLarge));
  EXPECT_EQ(http_.size(), 1u);
}

TEST_F(HostWaiterTest, ServerErrorsAreRetriedWithBackoff) {
  ssh_.Succeed();
  HostWaiter& w = Make("w-0");
  http_.Respond(0, 503, R"({"kind":"Status","code":503})");
  EXPECT_EQ(w.state(), State::kResolving);
  EXPECT_EQ(http_.size(), 1u);
  Advance(w.NextWake() - clock_.Now());
  ASSERT_EQ(http_.size(), 2u);
  http_.Respond(1, 200, Found({.phase = "Running", .ip = "10.0.0.5"}));
  EXPECT_EQ(w.state(), State::kReady);
}

// ---- Dual-stack pods and sidecars
// ---------------------------------------------

// A lookup's answer for one Running pod, edited as a test needs.
std::string FoundRunning(const std::function<void(nlohmann::json*)>& edit) {
  nlohmann::json pod =
      kube::PodJson({.phase = "Running", .ip = "10.0.0.5"}, kDefaults);
  edit(&pod);
  return nlohmann::json({{"kind", "PodList"},
                         {"metadata", {{"resourceVersion", "500"}}},
                         {"items", {pod}}})
      .dump();
}

void AddSidecar(nlohmann::json* pod, const std::string& waiting) {
  (*pod)["status"]["containerStatuses"].push_back(
      {{"name", "sidecar"},
       {"ready", false},
       {"restartCount", 7},
       {"image", "x"},
       {"imageID", "x"},
       {"state",
        {{"waiting", {{"reason", waiting}, {"message", "back-off 5m0s"}}}}}});
}

TEST_F(HostWaiterTest, DualStackTriesTheNextPodIpAfterAConnectError) {
  // Given podIPs IPv6 first and sshd listening on IPv4 only, expect the
  // IPv6 connect refused, then the IPv4 address in the same attempt, and
  // the log naming the address that answered.
  ssh_.Refuse(1);
  ssh_.Succeed();
  SetLogLevel(LogLevel::kInfo);
  std::string log = CaptureLog([&] {
    Make("w-0");
    http_.Respond(0, 200, FoundRunning([](nlohmann::json* pod) {
                    (*pod)["status"]["podIP"] = "fd00:7::10";
                    (*pod)["status"]["podIPs"] = {{{"ip", "fd00:7::10"}},
                                                  {{"ip", "10.0.0.5"}}};
                  }));
  });
  ASSERT_EQ(waiter_->state(), State::kReady);
  ASSERT_EQ(ssh_.attempts.size(), 2u);
  EXPECT_EQ(ssh_.attempts[0]->ip, "fd00:7::10");
  EXPECT_EQ(ssh_.attempts[1]->ip, "10.0.0.5");
  EXPECT_EQ(waiter_->pod_ip(), "10.0.0.5");
  EXPECT_EQ(waiter_->ssh_attempts(), 1);
  EXPECT_THAT(log, HasSubstr("ssh to 10.0.0.5:22 ready"));
  EXPECT_NE(waiter_->TakeConnection(), nullptr);
}

TEST_F(HostWaiterTest, IPv6AddressIsBracketedInMessages) {
  ssh_.Succeed();
  SetLogLevel(LogLevel::kInfo);
  std::string log = CaptureLog([&] {
    Make("w-0");
    http_.Respond(0, 200, FoundRunning([](nlohmann::json* pod) {
                    (*pod)["status"]["podIP"] = "fd00:7::10";
                    (*pod)["status"]["podIPs"] = {{{"ip", "fd00:7::10"}}};
                  }));
  });
  ASSERT_EQ(waiter_->state(), State::kReady);
  EXPECT_THAT(log, HasSubstr("ssh to [fd00:7::10]:22 ready"));
}

TEST_F(HostWaiterTest, SidecarInCrashLoopDoesNotFailALaunchSshAnswers) {
  // Given a Running pod whose sidecar is in CrashLoopBackOff while sshd
  // answers, expect the launch to go ahead, saying so at -v.
  ssh_.Succeed();
  SetLogLevel(LogLevel::kInfo);
  std::string log = CaptureLog([&] {
    Make("w-0");
    http_.Respond(0, 200, FoundRunning([](nlohmann::json* pod) {
                    AddSidecar(pod, "CrashLoopBackOff");
                  }));
  });
  ASSERT_EQ(waiter_->state(), State::kReady) << waiter_->status().ToString();
  EXPECT_THAT(log, HasSubstr("container sidecar is waiting: CrashLoopBackOff"));
  EXPECT_THAT(log, HasSubstr("ssh answers"));
}

TEST_F(HostWaiterTest, SidecarInCrashLoopFailsWhenSshNeverAnswers) {
  // Given the same pod with nothing listening on port 22, expect a failure
  // naming the sidecar's CrashLoopBackOff within the grace, not before
  // the probe had its chance and not at the overall timeout.
  ssh_.Refuse(100000);
  HostWaiter& w = Make("w-0", {.fatal_probe_grace = seconds(10)});
  http_.Respond(0, 200, FoundRunning([](nlohmann::json* pod) {
                  AddSidecar(pod, "CrashLoopBackOff");
                }));
  EXPECT_FALSE(w.done());
  const TimePoint start = clock_.Now();
  while (!w.done() && clock_.Now() - start < seconds(60)) {
    TimePoint wake = w.NextWake();
    ASSERT_GT(wake, clock_.Now()) << "the waiter would spin";
    Advance(wake - clock_.Now());
  }
  ASSERT_EQ(w.state(), State::kFailed);
  EXPECT_GE(clock_.Now() - start, seconds(10));
  EXPECT_LE(clock_.Now() - start, seconds(11));
  EXPECT_THAT(w.status(),
              StatusIs(Code::kFailedPrecondition,
                       "container sidecar is waiting: CrashLoopBackOff"));
  EXPECT_GT(ssh_.attempts.size(), 1u);
}

TEST_F(HostWaiterTest, CrashLoopingNativeSidecarDoesNotFailALaunchSshAnswers) {
  // Given a Running pod whose native sidecar (an init container with
  // restartPolicy Always, Kubernetes 1.33) is in CrashLoopBackOff while
  // sshd answers, expect the launch, as for a classic sidecar.
  ssh_.Succeed();
  SetLogLevel(LogLevel::kInfo);
  std::string log = CaptureLog([&] {
    Make("w-0");
    http_.Respond(
        0, 200, FoundRunning([](nlohmann::json* pod) {
          (*pod)["spec"]["initContainers"] = {
              {{"name", "log-shipper"}, {"restartPolicy", "Always"}}};
          (*pod)["status"]["initContainerStatuses"] = {
              {{"name", "log-shipper"},
               {"started", false},
               {"restartCount", 6},
               {"state", {{"waiting", {{"reason", "CrashLoopBackOff"}}}}}}};
        }));
  });
  ASSERT_EQ(waiter_->state(), State::kReady) << waiter_->status().ToString();
  EXPECT_THAT(log, HasSubstr("launching although sidecar container "
                             "log-shipper is waiting: CrashLoopBackOff"));
}

// ---- A Job's replacement beside its terminating pod --------------------

// HOST trainer: a Job's pod found by spec.hostname, and its replacement.
const PodSpec kDying{.name = "job-0-old",
                     .phase = "Running",
                     .ip = "10.0.0.1",
                     .uid = "uid-old",
                     .rv = "4",
                     .hostname = "trainer",
                     .controller = "Job/job",
                     .deleting = true};
const PodSpec kReplacement{.name = "job-0-new",
                           .phase = "Running",
                           .ip = "10.0.0.2",
                           .uid = "uid-new",
                           .rv = "8",
                           .hostname = "trainer",
                           .controller = "Job/job"};

TEST_F(HostWaiterTest, TerminatingPodIsNeverTakenItsReplacementIs) {
  // Given only a terminating pod with HOST's hostname (still Running, its
  // IP answering), expect no probe of it and no watch of its name, HOST
  // listed again, and the replacement that shows there used.
  ssh_.Succeed();
  SetLogLevel(LogLevel::kInfo);
  std::string log = CaptureLog([&] {
    HostWaiter& w = Make("trainer");
    http_.Respond(0, 200, List({}, "5"));
    http_.Respond(1, 200, List({kDying}, "5"));
    EXPECT_EQ(w.state(), State::kResolving);
    EXPECT_EQ(http_.size(), 2u) << "no watch of the dying pod's name";
    EXPECT_TRUE(ssh_.attempts.empty());
    Advance(w.NextWake() - clock_.Now());
    ASSERT_EQ(http_.size(), 3u);
    EXPECT_THAT(Path(2), Not(HasSubstr("fieldSelector")));
    http_.Respond(2, 200, List({kDying, kReplacement}, "9"));
    EXPECT_EQ(w.state(), State::kReady);
    EXPECT_EQ(w.pod_name(), "job-0-new");
  });
  ASSERT_EQ(ssh_.attempts.size(), 1u);
  EXPECT_EQ(ssh_.attempts[0]->ip, "10.0.0.2");
  EXPECT_THAT(log, HasSubstr("pod default/job-0-old is terminating (Running "
                             "at 10.0.0.1): not launching there"));
  EXPECT_THAT(log, HasSubstr("using pod job-0-new; passing over pod "
                             "job-0-old"));
}

TEST_F(HostWaiterTest,
       FollowedPodThatStartsTerminatingIsLeftForItsReplacement) {
  // Given HOST trainer followed by name (Pending) when its pod is marked
  // deleted, expect HOST listed again at once, not a wait for DELETED, and
  // the replacement listed beside the dying pod used.
  ssh_.Succeed();
  HostWaiter& w = Make("trainer");
  PodSpec pending = kDying;
  pending.phase = "Pending";
  pending.ip = "";
  pending.deleting = false;
  http_.Respond(0, 200, List({}, "5"));
  http_.Respond(1, 200, List({pending}, "5"));
  ASSERT_EQ(http_.size(), 3u);
  EXPECT_THAT(Path(2), HasSubstr("metadata.name%3Djob-0-old"));
  http_.Headers(2, 200);
  PodSpec dying = kDying;
  dying.rv = "6";
  http_.Data(2, Event("MODIFIED", dying));
  EXPECT_EQ(w.state(), State::kResolving);
  ASSERT_EQ(http_.size(), 4u);
  EXPECT_THAT(Path(3), Not(HasSubstr("fieldSelector")));
  http_.Respond(3, 200, List({dying, kReplacement}, "9"));
  EXPECT_EQ(w.state(), State::kReady);
  EXPECT_EQ(w.pod_name(), "job-0-new");
  ASSERT_EQ(ssh_.attempts.size(), 1u);
  EXPECT_EQ(ssh_.attempts[0]->ip, "10.0.0.2");
}

TEST_F(HostWaiterTest, TerminatingPodWithoutReplacementTimesOutNamingIt) {
  // Given a terminating pod that stays and no replacement, expect a wait
  // to --timeout (no replacement_grace: it is not gone), polled with
  // backoff, and the message naming the dying pod and what was awaited.
  WaitPolicy policy;
  policy.timeout = seconds(60);
  policy.replacement_grace = seconds(5);
  HostWaiter& w = Make("trainer", policy);
  http_.Respond(0, 200, List({}, "5"));
  for (int i = 0; i < 1000 && !w.done(); ++i) {
    if (http_.active(http_.last_index())) {
      http_.Respond(http_.last_index(), 200, List({kDying}, "7"));
    }
    Advance(w.NextWake() - clock_.Now());
  }
  EXPECT_TRUE(ssh_.attempts.empty());
  EXPECT_THAT(w.status(),
              StatusIs(Code::kDeadlineExceeded,
                       "timed out after 1m0s waiting for pod "
                       "default/job-0-old: terminating; looking for Job/job's "
                       "replacement with hostname trainer"));
  EXPECT_LE(http_.size(), 20u) << "polls with backoff, not in a loop";
}

TEST_F(HostWaiterTest, TerminatingPodThatGoesStartsTheReplacementGrace) {
  // Given the dying pod gone from a later list with no replacement, expect
  // replacement_grace from then, and the failure it ends in.
  WaitPolicy policy;
  policy.replacement_grace = seconds(10);
  HostWaiter& w = Make("trainer", policy);
  http_.Respond(0, 200, List({}, "5"));
  http_.Respond(1, 200, List({kDying}, "5"));
  Advance(w.NextWake() - clock_.Now());
  http_.Respond(2, 200, List({}, "8"));
  const TimePoint gone = clock_.Now();
  for (int i = 0; i < 100 && !w.done(); ++i) {
    if (http_.active(http_.last_index())) {
      http_.Respond(http_.last_index(), 200, List({}, "9"));
    }
    Advance(w.NextWake() - clock_.Now());
  }
  EXPECT_THAT(w.status(), StatusIs(Code::kFailedPrecondition,
                                   "pod default/job-0-old was deleted and not "
                                   "replaced within 10.0s"));
  EXPECT_LE(clock_.Now() - gone, seconds(11));
}

}  // namespace
}  // namespace k8s_agent
