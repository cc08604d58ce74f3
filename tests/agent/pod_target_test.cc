// SPDX-License-Identifier: Apache-2.0
// PickTarget: live pods win among those answering to HOST; the newest
// ended pod comes first.

#include "plugin/agent/pod_target.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "plugin/agent/fatal_reasons.h"
#include "tests/fakes/fake_pods.h"
#include "tests/fakes/status_matchers.h"

namespace k8s_agent {
namespace {

using ::testing::ElementsAre;

kube::Pod MakePod(const kube::FakePod& spec) {
  StatusOr<kube::Pod> pod = kube::Pod::FromJson(kube::PodJson(spec).dump());
  EXPECT_THAT(pod, IsOk());
  return *pod;
}

HostName Host(const std::string& text) {
  StatusOr<HostName> host = ParseHostName(text);
  EXPECT_THAT(host, IsOk());
  return *host;
}

std::vector<std::string> Names(const std::vector<const kube::Pod*>& pods) {
  std::vector<std::string> names;
  for (const kube::Pod* p : pods) names.push_back(p->name);
  return names;
}

TEST(PodTargetTest, LiveMeansNeitherEndedNorDeleting) {
  EXPECT_TRUE(IsLive(MakePod({.phase = "Pending"})));
  EXPECT_TRUE(IsLive(MakePod({.phase = "Running"})));
  EXPECT_TRUE(IsLive(MakePod({.phase = "Unknown"})));
  EXPECT_FALSE(IsLive(MakePod({.phase = "Failed"})));
  EXPECT_FALSE(IsLive(MakePod({.phase = "Succeeded"})));
  EXPECT_FALSE(IsLive(MakePod({.phase = "Running", .deleting = true})));
  EXPECT_TRUE(IsTerminal(MakePod({.phase = "Succeeded"})));
  EXPECT_FALSE(IsTerminal(MakePod({.phase = "Running", .deleting = true})));
}

TEST(PodTargetTest, LivePodsWinAndEndedOnesComeNewestFirst) {
  // Given three attempts of index 0 (two Failed, one Pending) and another
  // index, expect the Pending one live and the Failed ones passed over,
  // the newer first, whatever the list's order.
  std::vector<kube::Pod> pods = {
      MakePod({.name = "j-0-a",
               .phase = "Failed",
               .hostname = "j-0",
               .created = "2026-12-01T10:00:00Z"}),
      MakePod({.name = "j-0-b",
               .phase = "Failed",
               .hostname = "j-0",
               .created = "2026-12-01T10:01:00Z"}),
      MakePod({.name = "j-0-c", .hostname = "j-0"}),
      MakePod({.name = "j-1-a", .hostname = "j-1"}),
  };
  TargetPick pick = PickTarget(Host("j-0"), pods, "");
  EXPECT_THAT(Names(pick.live), ElementsAre("j-0-c"));
  EXPECT_THAT(Names(pick.passed_over), ElementsAre("j-0-b", "j-0-a"));
}

TEST(PodTargetTest, SubdomainAndSkippedUidNarrowTheMatch) {
  std::vector<kube::Pod> pods = {
      MakePod({.name = "a", .uid = "u-a", .hostname = "j-0"}),
      MakePod({.name = "b", .uid = "u-b", .hostname = "j-0"}),
  };
  pods[1].subdomain = "other";
  EXPECT_THAT(Names(PickTarget(Host("j-0"), pods, "").live),
              ElementsAre("a", "b"));
  EXPECT_THAT(Names(PickTarget(Host("j-0"), pods, "u-a").live),
              ElementsAre("b"));
  EXPECT_THAT(Names(PickTarget(Host("j-0.other"), pods, "").live),
              ElementsAre("b"));
}

TEST(PodTargetTest, AnIpKeptByAnEndedPodGoesToTheLiveOne) {
  // Given a Succeeded pod still reporting 10.0.0.3 and a Running pod that
  // has it now (as its second IP), expect the Running one live.
  std::vector<kube::Pod> pods = {
      MakePod({.name = "done", .phase = "Succeeded", .ip = "10.0.0.3"}),
      MakePod({.name = "now", .phase = "Running", .ip = "10.0.0.9"}),
  };
  pods[1].pod_ips.push_back("10.0.0.3");
  TargetPick pick = PickTarget(Host("10.0.0.3"), pods, "");
  EXPECT_THAT(Names(pick.live), ElementsAre("now"));
  EXPECT_THAT(Names(pick.passed_over), ElementsAre("done"));
}

TEST(PodTargetTest, FatalStateNamesTheReasonAndTheContainer) {
  kube::Pod failed = MakePod({.name = "j-0-a",
                              .phase = "Failed",
                              .reason = "Evicted",
                              .terminated = "Error"});
  EXPECT_EQ(TerminalDetail(failed),
            ": Evicted; container main Error (exit code 1)");
  EXPECT_THAT(FatalPodState(failed, "pod ns/j-0-a", "ns", {}),
              StatusIs(Code::kFailedPrecondition,
                       "pod ns/j-0-a is Failed: Evicted; container main "
                       "Error (exit code 1) (it will never run the command; "
                       "see kubectl describe pod -n ns j-0-a)"));
  EXPECT_THAT(FatalPodState(MakePod({.waiting = "ErrImagePull"}), "pod ns/w",
                            "ns", {"ErrImagePull"}),
              StatusIs(Code::kFailedPrecondition, "check the image name"));
  EXPECT_THAT(
      FatalPodState(MakePod({.waiting = "ErrImageNeverPull"}), "pod ns/w", "ns",
                    DefaultFatalReasons()),
      StatusIs(Code::kFailedPrecondition,
               "container main is waiting: ErrImageNeverPull: boom (load the "
               "image onto the node"));
  EXPECT_THAT(FatalPodState(MakePod({}), "pod ns/w", "ns", {}), IsOk());
}

// ---- Native sidecars (Kubernetes 1.33) and init containers -------------

// `spec` with init containers added: each {name, restartPolicy ("Always"
// for a native sidecar), state ("running", "completed" or a waiting reason
// after a crash), started}.
struct Init {
  std::string name;
  std::string restart_policy;
  std::string state;
  bool started = false;
};
kube::Pod WithInits(const kube::FakePod& spec, const std::vector<Init>& inits,
                    bool initialized) {
  nlohmann::json pod = kube::PodJson(spec);
  for (const Init& i : inits) {
    nlohmann::json c = {{"name", i.name}};
    if (!i.restart_policy.empty()) c["restartPolicy"] = i.restart_policy;
    pod["spec"]["initContainers"].push_back(c);
    nlohmann::json st = {{"name", i.name}, {"started", i.started}};
    if (i.state == "running") {
      st["state"] = {{"running", {{"startedAt", "2026-12-01T10:00:00Z"}}}};
    } else if (i.state == "completed") {
      st["state"] = {
          {"terminated", {{"reason", "Completed"}, {"exitCode", 0}}}};
    } else {
      st["state"] = {{"waiting", {{"reason", i.state}}}};
      st["lastState"] = {
          {"terminated", {{"reason", "Error"}, {"exitCode", 1}}}};
    }
    pod["status"]["initContainerStatuses"].push_back(st);
  }
  if (initialized) {
    pod["status"]["conditions"].push_back(
        {{"type", "Initialized"},
         {"status", "True"},
         {"lastTransitionTime", "2026-12-01T10:00:01Z"}});
  }
  StatusOr<kube::Pod> parsed = kube::Pod::FromJson(pod.dump());
  EXPECT_THAT(parsed, IsOk());
  return *parsed;
}

TEST(PodTargetTest, CrashLoopingNativeSidecarWaitsOnSshLikeAClassicOne) {
  // Given a Running pod whose native sidecar log-shipper crash-loops beside
  // a running main container, expect the same verdict as for a classic
  // sidecar: fatal only unless ssh answers, named as a sidecar.
  kube::Pod pod = WithInits({.phase = "Running", .ip = "10.0.0.5"},
                            {{.name = "log-shipper",
                              .restart_policy = "Always",
                              .state = "CrashLoopBackOff"}},
                            true);
  EXPECT_EQ(FatalUnlessSshAnswers(pod, DefaultFatalReasons()),
            "sidecar container log-shipper is waiting: CrashLoopBackOff");
  EXPECT_THAT(
      FatalPodState(pod, "pod default/w-0", "default", DefaultFatalReasons()),
      StatusIs(Code::kFailedPrecondition,
               "sidecar container log-shipper is waiting: "
               "CrashLoopBackOff; it last exited with code 1 (Error)"));
}

TEST(PodTargetTest, FailingRegularInitContainerIsFatalAtOnce) {
  // Given a regular init container in CrashLoopBackOff (its pod Pending,
  // or Running again after a sandbox restart), expect no wait on ssh: the
  // main containers do not start before it completes.
  for (const char* phase : {"Pending", "Running"}) {
    kube::Pod pod =
        WithInits({.phase = phase, .ip = "10.0.0.5"},
                  {{.name = "fetch-data", .state = "CrashLoopBackOff"}}, false);
    EXPECT_EQ(FatalUnlessSshAnswers(pod, DefaultFatalReasons()), "") << phase;
    EXPECT_THAT(
        FatalPodState(pod, "pod default/w-0", "default", DefaultFatalReasons()),
        StatusIs(Code::kFailedPrecondition,
                 "init container fetch-data is waiting: "
                 "CrashLoopBackOff"))
        << phase;
  }
}

TEST(PodTargetTest, RunningOrStartedSidecarIsNoUnfinishedInit) {
  // Given a Pending pod: a sidecar that runs (or has started) is done with
  // initialising; a regular init container still running is what the pod
  // waits on; a sidecar not yet started blocks what follows it.
  Init sidecar{.name = "log-shipper",
               .restart_policy = "Always",
               .state = "running",
               .started = true};
  Init setup{.name = "setup", .state = "running"};
  kube::FakePod pending{.phase = "Pending", .waiting = "PodInitializing"};
  EXPECT_EQ(UnfinishedInit(WithInits(pending, {sidecar, setup}, false)),
            "init container setup");
  EXPECT_EQ(PodSummary(WithInits(pending, {sidecar, setup}, false)),
            "Pending: PodInitializing (init container setup not finished)");
  setup.state = "completed";
  EXPECT_EQ(UnfinishedInit(WithInits(pending, {sidecar, setup}, false)), "");
  EXPECT_EQ(UnfinishedInit(WithInits(pending, {sidecar, setup}, true)), "");
  sidecar.started = false;
  sidecar.state = "ContainerCreating";
  EXPECT_EQ(UnfinishedInit(WithInits(pending, {sidecar, setup}, false)),
            "sidecar container log-shipper");
  // Once Initialized, a sidecar that crashed since (started resets) is not
  // "unfinished": the main containers run.
  EXPECT_EQ(UnfinishedInit(WithInits(pending, {sidecar, setup}, true)), "");
}

TEST(PodTargetTest, SkippedPodStillAnsweringIsReported) {
  // The pod that went (skip_uid) still has HOST's hostname: PickTarget says
  // so, so that a terminating pod is not taken for gone.
  std::vector<kube::Pod> pods = {
      MakePod({.name = "t-old",
               .uid = "u-old",
               .hostname = "trainer",
               .deleting = true}),
      MakePod({.name = "other", .uid = "u-x", .hostname = "other"})};
  TargetPick pick = PickTarget(Host("trainer"), pods, "u-old");
  EXPECT_TRUE(pick.skipped);
  EXPECT_TRUE(pick.live.empty());
  EXPECT_TRUE(pick.passed_over.empty());
  EXPECT_FALSE(PickTarget(Host("trainer"), pods, "u-gone").skipped);
}

}  // namespace
}  // namespace k8s_agent
