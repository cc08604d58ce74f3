// SPDX-License-Identifier: Apache-2.0
// PodResolver against a scripted API server and a fake clock: what it asks,
// which pod it names, and the one replacement policy, with no waiter.

#include "plugin/agent/pod_resolver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "plugin/base/log.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_http_transport.h"
#include "tests/fakes/fake_pods.h"
#include "tests/fakes/status_matchers.h"
#include "tests/fakes/waiter_pods.h"

namespace k8s_agent {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using State = PodResolver::State;
using waiter_pods::Event;
using waiter_pods::JobPod;
using waiter_pods::kDefaults;
using waiter_pods::List;
using waiter_pods::PodSpec;

// A pod as the resolver's owner saw it last (its watch's snapshot).
kube::Pod Snapshot(const PodSpec& p) {
  StatusOr<kube::Pod> pod =
      kube::Pod::FromJson(kube::PodJson(p, kDefaults).dump());
  EXPECT_THAT(pod, IsOk());
  return *pod;
}

class PodResolverTest : public ::testing::Test {
 protected:
  PodResolverTest() : client_(&http_, waiter_pods::Cluster()) {
    SetLogLevel(LogLevel::kError);
  }
  ~PodResolverTest() override { SetLogLevel(LogLevel::kWarning); }

  PodResolver& Make(const std::string& host, WaitPolicy policy = {}) {
    StatusOr<HostName> name = ParseHostName(host);
    EXPECT_THAT(name, IsOk());
    if (policy.ns.empty()) policy.ns = "default";
    resolver_ = std::make_unique<PodResolver>(
        *name, policy, &client_, &clock_, &tracer_, [this] { ++changes_; }, 1);
    resolver_->Start(clock_.Now());
    return *resolver_;
  }

  // Advances time and runs the resolver's timers, as its owner would.
  void Advance(Duration d) {
    clock_.Advance(d);
    if (resolver_->NextWake() <= clock_.Now()) resolver_->OnTimer(clock_.Now());
  }

  std::string Param(size_t i, const std::string& key) const {
    return kube::QueryParam(http_.request(i), key);
  }

  FakeClock clock_;
  kube::FakeHttpTransport http_;
  kube::KubeClient client_;
  Tracer tracer_;
  std::unique_ptr<PodResolver> resolver_;
  int changes_ = 0;
};

TEST_F(PodResolverTest, NameLookupNamesThePodOnceFromTheCachesVersion) {
  // Given a pod named HOST, expect one field-selected LIST from the watch
  // cache, one on_change, and the target (pod, list version) handed once.
  PodResolver& r = Make("w-0");
  ASSERT_EQ(http_.size(), 1u);
  EXPECT_EQ(Param(0, "fieldSelector"), "metadata.name%3Dw-0");
  EXPECT_EQ(Param(0, "resourceVersion"), "0");
  EXPECT_FALSE(r.answered());
  http_.Respond(0, 200, List({{.phase = "Running", .ip = "10.0.0.5"}}, "500"));
  EXPECT_EQ(changes_, 1);
  EXPECT_EQ(r.state(), State::kNamed);
  EXPECT_TRUE(r.answered());
  std::optional<PodResolver::Target> t = r.TakeTarget();
  ASSERT_TRUE(t.has_value());
  ASSERT_TRUE(t->pod.has_value());
  EXPECT_EQ(t->pod->pod_ip, "10.0.0.5");
  EXPECT_EQ(t->rv, "500");
  EXPECT_FALSE(r.TakeTarget().has_value());
  EXPECT_EQ(r.NextWake(), TimePoint::max());
}

TEST_F(PodResolverTest, HostnameOfNoGrammarIsMatchedAcrossListPages) {
  // Given HOST trainer (no controller's grammar) whose pod is on the
  // second page of the namespace LIST, expect both pages read (the second
  // with the first's continue token) and that pod named.
  PodResolver& r = Make("trainer");
  http_.Respond(0, 200, List({}, "4"));
  ASSERT_EQ(http_.size(), 2u);
  EXPECT_EQ(Param(1, "fieldSelector"), "");
  EXPECT_EQ(Param(1, "watch"), "");
  nlohmann::json page1 = nlohmann::json::parse(
      List({{.name = "job-1-xyz", .hostname = "job-1"}}, "5"));
  page1["metadata"]["continue"] = "next-page";
  http_.Respond(1, 200, page1.dump());
  EXPECT_EQ(r.state(), State::kLooking);
  ASSERT_EQ(http_.size(), 3u);
  EXPECT_EQ(Param(2, "continue"), "next-page");
  http_.Respond(2, 200,
                List({{.name = "trainer-abcde",
                       .phase = "Running",
                       .ip = "10.0.0.3",
                       .hostname = "trainer"}},
                     "5"));
  EXPECT_EQ(r.state(), State::kNamed);
  EXPECT_EQ(r.pod_name(), "trainer-abcde");
  std::optional<PodResolver::Target> t = r.TakeTarget();
  ASSERT_TRUE(t && t->pod);
  EXPECT_EQ(t->pod->name, "trainer-abcde");
}

TEST_F(PodResolverTest, NoMatchNamesHostToWaitForByName) {
  // Given no pod with HOST's name or hostname, expect HOST itself named
  // with no snapshot, to be watched from the list's version.
  PodResolver& r = Make("trainer");
  http_.Respond(0, 200, List({}, "4"));
  http_.Respond(1, 200, List({}, "6"));
  EXPECT_EQ(r.state(), State::kNamed);
  EXPECT_TRUE(r.namespace_empty());
  std::optional<PodResolver::Target> t = r.TakeTarget();
  ASSERT_TRUE(t.has_value());
  EXPECT_FALSE(t->pod.has_value());
  EXPECT_EQ(t->rv, "6");
  EXPECT_EQ(r.pod_name(), "trainer");
}

TEST_F(PodResolverTest, JobHostnameIsPickedFromTheLabelledWatch) {
  // Given HOST job-0 and, on the labelled watch, its Failed first attempt
  // and a Running retry, expect the retry picked and named; the Failed one
  // only passed over.
  PodResolver& r = Make("job-0");
  http_.Respond(0, 200, List({}, "40"));
  EXPECT_EQ(r.state(), State::kFinding);
  EXPECT_EQ(changes_, 1);
  ASSERT_EQ(http_.size(), 2u);
  EXPECT_EQ(Param(1, "watch"), "true");
  EXPECT_EQ(Param(1, "resourceVersion"), "0");
  EXPECT_THAT(r.finder_selector(), HasSubstr("job-completion-index=0"));
  EXPECT_FALSE(r.Pick(clock_.Now()).has_value());
  EXPECT_TRUE(r.missing());
  EXPECT_EQ(r.note(), "not created yet");
  http_.Headers(1, 200);
  http_.Data(
      1, Event("ADDED",
               JobPod("job-0-aaaaa",
                      {.phase = "Failed", .rv = "20", .terminated = "Error"})) +
             Event("ADDED",
                   JobPod("job-0-bbbbb",
                          {.phase = "Running", .ip = "10.0.0.6", .rv = "21"})));
  EXPECT_GE(changes_, 2);
  std::optional<kube::Pod> pod = r.Pick(clock_.Now());
  ASSERT_TRUE(pod.has_value());
  EXPECT_EQ(pod->name, "job-0-bbbbb");
  EXPECT_EQ(r.pod_name(), "job-0-bbbbb");
  EXPECT_FALSE(r.missing());
  EXPECT_EQ(http_.size(), 2u);
}

TEST_F(PodResolverTest, NameWatchIsDueOnceASecondAfterTheLabelledWatchOpened) {
  // Given the labelled watch queued (no answer yet), expect no name watch
  // however long that takes; once it answers, one name watch from the name
  // lookup's version after name_watch_after, and never a second.
  PodResolver& r = Make("w-3");
  http_.Respond(0, 200, List({}, "40"));
  Advance(seconds(5));
  EXPECT_FALSE(r.TakeNameWatch(clock_.Now()).has_value());
  http_.Headers(1, 200);
  Advance(milliseconds(999));
  EXPECT_FALSE(r.TakeNameWatch(clock_.Now()).has_value());
  Advance(milliseconds(1));
  EXPECT_EQ(r.TakeNameWatch(clock_.Now()), std::optional<std::string>("40"));
  EXPECT_FALSE(r.TakeNameWatch(clock_.Now()).has_value());
}

TEST_F(PodResolverTest, LabelledWatchAnsweringEmptyListsTheNamespaceOnce) {
  // Given HOST node-1 (a Job's grammar) whose pod carries no Job labels,
  // expect one namespace LIST as soon as the labelled watch has answered
  // with no pod for name_watch_after, not after not_found_grace; the pod
  // it finds by spec.hostname is named, and no second LIST follows.
  WaitPolicy policy;
  policy.not_found_grace = seconds(10);
  PodResolver& r = Make("node-1", policy);
  http_.Respond(0, 200, List({}, "40"));
  http_.Headers(1, 200);
  Advance(milliseconds(999));
  EXPECT_EQ(http_.size(), 2u);
  Advance(milliseconds(1));
  ASSERT_EQ(http_.size(), 3u);
  EXPECT_EQ(Param(2, "labelSelector"), "");
  EXPECT_EQ(Param(2, "watch"), "");
  http_.Respond(2, 200,
                List({{.name = "mpi-node-1",
                       .phase = "Running",
                       .ip = "10.0.0.11",
                       .hostname = "node-1",
                       .controller = ""}},
                     "45"));
  EXPECT_EQ(r.state(), State::kNamed);
  EXPECT_EQ(r.pod_name(), "mpi-node-1");
  Advance(seconds(20));
  EXPECT_EQ(http_.size(), 3u);
}

TEST_F(PodResolverTest, BarePodGoneFailsAtOnce) {
  // Given a pod no controller owns, expect its deletion to fail the host
  // at once, saying nothing will recreate it.
  PodResolver& r = Make("w-0");
  http_.Respond(0, 200, List({{.controller = ""}}, "500"));
  r.Saw(Snapshot({.controller = ""}));
  r.Departed(nullptr, clock_.Now());
  ASSERT_EQ(r.state(), State::kFailed);
  EXPECT_THAT(r.status(), StatusIs(Code::kFailedPrecondition,
                                   "pod default/w-0 was deleted and no "
                                   "controller owns it"));
}

TEST_F(PodResolverTest, ControlledPodDeletedIsAwaitedForTheGraceThenFails) {
  // Given a StatefulSet's pod found by name and then deleted, expect the
  // replacement awaited on the owner's watch (no call) for
  // replacement_grace, then a failure naming the controller.
  WaitPolicy policy;
  policy.replacement_grace = seconds(30);
  PodResolver& r = Make("w-0", policy);
  http_.Respond(0, 200, List({{}}, "500"));
  r.Saw(Snapshot({}));
  r.Departed(nullptr, clock_.Now());
  EXPECT_EQ(r.state(), State::kNamed);
  EXPECT_EQ(r.note(), "deleted; waiting for StatefulSet/w to replace it");
  EXPECT_EQ(r.NextWake(), clock_.Now() + seconds(30));
  Advance(seconds(29));
  EXPECT_EQ(r.state(), State::kNamed);
  Advance(seconds(1));
  ASSERT_EQ(r.state(), State::kFailed);
  EXPECT_THAT(r.status(), StatusIs(Code::kFailedPrecondition,
                                   "was deleted and not replaced within 30.0s "
                                   "(is its controller StatefulSet/w gone?"));
  EXPECT_EQ(http_.size(), 1u);
}

TEST_F(PodResolverTest, ReplacementSeenEndsTheGrace) {
  // Given a deleted pod's replacement seen within the grace, expect no
  // failure when the grace would have passed.
  WaitPolicy policy;
  policy.replacement_grace = seconds(30);
  PodResolver& r = Make("w-0", policy);
  http_.Respond(0, 200, List({{}}, "500"));
  r.Saw(Snapshot({}));
  r.Departed(nullptr, clock_.Now());
  Advance(seconds(10));
  r.Saw(Snapshot({.uid = "uid-2"}));
  EXPECT_EQ(r.NextWake(), TimePoint::max());
  Advance(seconds(30));
  EXPECT_EQ(r.state(), State::kNamed);
}

TEST_F(PodResolverTest, PodFoundByHostnameThatEndsIsLookedUpAgain) {
  // Given HOST trainer resolved by spec.hostname to a Job's pod that turns
  // Failed, expect it taken as a departure: a namespace LIST at once that
  // skips the old pod, then the retry named.
  PodResolver& r = Make("trainer");
  PodSpec old{.name = "job-0-aaaaa",
              .uid = "uid-a",
              .hostname = "trainer",
              .controller = "Job/job"};
  http_.Respond(0, 200, List({}, "4"));
  http_.Respond(1, 200, List({old}, "5"));
  ASSERT_TRUE(r.TakeTarget().has_value());
  PodSpec failed = old;
  failed.phase = "Failed";
  failed.terminated = "Error";
  kube::Pod ended = Snapshot(failed);
  r.Saw(ended);
  EXPECT_TRUE(r.ReplacesEnded(ended));
  r.Departed(&ended, clock_.Now());
  EXPECT_EQ(r.state(), State::kLooking);
  EXPECT_THAT(r.note(), HasSubstr("looking for Job/job's replacement with "
                                  "hostname trainer"));
  ASSERT_EQ(http_.size(), 3u);
  EXPECT_EQ(Param(2, "fieldSelector"), "");
  http_.Respond(2, 200,
                List({old,
                      {.name = "job-0-bbbbb",
                       .phase = "Running",
                       .ip = "10.0.0.9",
                       .uid = "uid-b",
                       .hostname = "trainer",
                       .controller = "Job/job"}},
                     "9"));
  EXPECT_EQ(r.state(), State::kNamed);
  EXPECT_EQ(r.pod_name(), "job-0-bbbbb");
  EXPECT_TRUE(r.TakeTarget().has_value());
}

TEST_F(PodResolverTest, PodFoundByNameThatEndsIsNotAwaited) {
  // A pod found by its own name: a new pod of that name comes only from a
  // StatefulSet, which deletes the old one first, so an ended one is final.
  PodResolver& r = Make("w-0");
  http_.Respond(0, 200, List({{}}, "500"));
  kube::Pod ended = Snapshot({.phase = "Failed", .terminated = "Error"});
  EXPECT_FALSE(r.ReplacesEnded(ended));
}

TEST_F(PodResolverTest, FailedJobAttemptOnTheLabelledWatchIsAwaitedThenFails) {
  // Given only the Failed attempt on the labelled watch, expect the retry
  // awaited on that watch, and after the grace a failure with its reason.
  WaitPolicy policy;
  policy.replacement_grace = seconds(30);
  PodResolver& r = Make("job-0", policy);
  http_.Respond(0, 200, List({}, "40"));
  http_.Headers(1, 200);
  http_.Data(1, Event("ADDED", JobPod("job-0-aaaaa", {.phase = "Failed",
                                                      .rv = "20",
                                                      .terminated = "Error"})));
  EXPECT_FALSE(r.Pick(clock_.Now()).has_value());
  EXPECT_EQ(r.state(), State::kFinding);
  EXPECT_THAT(r.note(), HasSubstr("waiting for Job/job's replacement with "
                                  "hostname job-0"));
  EXPECT_FALSE(r.missing());
  Advance(seconds(30));
  ASSERT_EQ(r.state(), State::kFailed);
  EXPECT_THAT(r.status().message(),
              HasSubstr("pod default/job-0-aaaaa is Failed; container main "
                        "Error (exit code 1); no replacement with hostname "
                        "job-0 appeared within 30.0s"));
  EXPECT_EQ(http_.size(), 2u);
}

TEST_F(PodResolverTest, LookupErrorsBackOffAndTheOutageIsTracked) {
  // Given the lookup refused by an overloaded server, expect a retry after
  // a backoff (not at once), the outage on the tracker, and the answer
  // clearing it.
  PodResolver& r = Make("w-0");
  http_.Respond(0, 503, "");
  EXPECT_EQ(r.state(), State::kLooking);
  EXPECT_EQ(http_.size(), 1u);
  ASSERT_NE(r.TroubledApi(nullptr), nullptr);
  TimePoint retry = r.NextWake();
  EXPECT_GT(retry, clock_.Now());
  Advance(retry - clock_.Now());
  ASSERT_EQ(http_.size(), 2u);
  EXPECT_EQ(Param(1, "fieldSelector"), "metadata.name%3Dw-0");
  http_.Respond(1, 200, List({{}}, "500"));
  EXPECT_EQ(r.state(), State::kNamed);
  EXPECT_EQ(r.TroubledApi(nullptr), nullptr);
}

TEST_F(PodResolverTest, SeveralLivePodsForAnIpAreAnError) {
  PodResolver& r = Make("10.0.0.3");
  ASSERT_EQ(http_.size(), 1u);
  EXPECT_EQ(Param(0, "fieldSelector"), "");
  http_.Respond(0, 200,
                List({{.name = "a", .phase = "Running", .ip = "10.0.0.3"},
                      {.name = "b", .phase = "Running", .ip = "10.0.0.3"}},
                     "7"));
  ASSERT_EQ(r.state(), State::kFailed);
  EXPECT_THAT(r.status().message(), HasSubstr("matches 2 pods"));
  EXPECT_THAT(r.status().message(), Not(HasSubstr("kubectl")));
}

}  // namespace
}  // namespace k8s_agent
