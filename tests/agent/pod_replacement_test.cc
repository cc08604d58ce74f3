// SPDX-License-Identifier: Apache-2.0
// PodReplacement: when a pod that went fails the host, how long its
// replacement is awaited, and the words for each case.

#include "plugin/agent/pod_replacement.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plugin/base/log.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_pods.h"
#include "tests/fakes/status_matchers.h"

namespace k8s_agent {
namespace {

using ::testing::HasSubstr;

kube::Pod MakePod(const kube::FakePod& p) {
  StatusOr<kube::Pod> pod = kube::Pod::FromJson(kube::PodJson(p).dump());
  EXPECT_THAT(pod, IsOk());
  return *pod;
}

class PodReplacementTest : public ::testing::Test {
 protected:
  PodReplacementTest() : replacement_(Host(), Policy()) {
    SetLogLevel(LogLevel::kError);
  }
  ~PodReplacementTest() override { SetLogLevel(LogLevel::kWarning); }

  static HostName Host() { return *ParseHostName("job-0"); }
  static WaitPolicy Policy() {
    WaitPolicy p;
    p.ns = "default";
    p.replacement_grace = std::chrono::seconds(30);
    return p;
  }

  FakeClock clock_;
  PodReplacement replacement_;
};

TEST_F(PodReplacementTest, WithoutAControllerEveryDepartureIsFinal) {
  // Deleted, being deleted, ended: each fails at once, saying why.
  replacement_.Saw(MakePod({.name = "p"}));
  EXPECT_THAT(replacement_.Went(nullptr, "pod default/p", clock_.Now()),
              StatusIs(Code::kFailedPrecondition,
                       "pod default/p was deleted and no controller owns"));
  kube::Pod deleting = MakePod({.name = "p"});
  deleting.deleting = true;
  EXPECT_THAT(replacement_.Went(&deleting, "pod default/p", clock_.Now()),
              StatusIs(Code::kFailedPrecondition, "is being deleted"));
  kube::Pod failed = MakePod({.name = "p", .phase = "Failed"});
  EXPECT_THAT(replacement_.Went(&failed, "pod default/p", clock_.Now()),
              StatusIs(Code::kFailedPrecondition, "is Failed"));
  EXPECT_EQ(replacement_.due(), TimePoint::max());
}

TEST_F(PodReplacementTest, TerminatingRunsNoClockUntilItIsGone) {
  kube::Pod deleting = MakePod({.name = "p", .controller = "Job/job"});
  deleting.deleting = true;
  EXPECT_THAT(replacement_.Went(&deleting, "pod default/p", clock_.Now()),
              IsOk());
  EXPECT_TRUE(replacement_.terminating());
  EXPECT_EQ(replacement_.due(), TimePoint::max());
  EXPECT_EQ(replacement_.Note(PodReplacement::Where::kLabelledWatch),
            "terminating; waiting for Job/job's replacement with hostname "
            "job-0");
}

TEST_F(PodReplacementTest, GraceRunsFromTheFirstSightAndASightEndsIt) {
  // Given a controlled pod deleted, expect the grace from then (a second
  // report does not restart it), its message, and a new pod ending it.
  replacement_.Saw(MakePod({.name = "w-0", .controller = "StatefulSet/w"}));
  TimePoint t0 = clock_.Now();
  EXPECT_THAT(replacement_.Went(nullptr, "pod default/w-0", t0), IsOk());
  clock_.Advance(std::chrono::seconds(10));
  EXPECT_THAT(replacement_.Went(nullptr, "pod default/w-0", clock_.Now()),
              IsOk());
  EXPECT_EQ(replacement_.due(), t0 + std::chrono::seconds(30));
  EXPECT_EQ(replacement_.Note(PodReplacement::Where::kNameWatch),
            "deleted; waiting for StatefulSet/w to replace it");
  EXPECT_THAT(replacement_.NotReplaced("pod default/w-0"),
              StatusIs(Code::kFailedPrecondition,
                       "pod default/w-0 was deleted and not replaced within "
                       "30.0s (is its controller StatefulSet/w gone?"));
  replacement_.Saw(MakePod({.name = "w-0", .uid = "uid-2"}));
  EXPECT_EQ(replacement_.due(), TimePoint::max());
}

TEST_F(PodReplacementTest, AnEndedPodsReasonIsInTheWords) {
  kube::Pod failed = MakePod({.name = "job-0-a",
                              .phase = "Failed",
                              .controller = "Job/job",
                              .terminated = "Error"});
  EXPECT_THAT(replacement_.Went(&failed, "pod default/job-0-a", clock_.Now()),
              IsOk());
  EXPECT_THAT(replacement_.Note(PodReplacement::Where::kListAgain),
              HasSubstr("Failed; container main Error (exit code 1); looking "
                        "for Job/job's replacement with hostname job-0"));
  EXPECT_THAT(replacement_.NotReplaced("pod default/job-0-a").message(),
              HasSubstr("is Failed; container main Error (exit code 1); no "
                        "replacement with hostname job-0 appeared within "
                        "30.0s"));
}

}  // namespace
}  // namespace k8s_agent
