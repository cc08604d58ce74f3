// SPDX-License-Identifier: Apache-2.0
// PickTarget: live pods win among those answering to HOST; the newest
// ended pod comes first.

#include "plugin/agent/pod_target.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace k8s_agent
