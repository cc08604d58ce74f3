// SPDX-License-Identifier: Apache-2.0
// Pins the --trace field names: they are a file format, and traces written
// by older agents must still read (trace_fields.h).

#include "plugin/base/trace_fields.h"

#include <gtest/gtest.h>

#include <iterator>
#include <set>
#include <string>

namespace k8s_agent::trace_field {
namespace {

TEST(TraceFieldsTest, NamesAreTheFileFormat) {
  EXPECT_STREQ(kHost, "host");
  EXPECT_STREQ(kPod, "pod");
  EXPECT_STREQ(kEvent, "event");
  EXPECT_STREQ(kTMonoUs, "t_mono_us");
  EXPECT_STREQ(kTWallUs, "t_wall_us");
  EXPECT_STREQ(kPid, "pid");
  EXPECT_STREQ(kDetail, "detail");
  EXPECT_STREQ(kOn, "on");
  EXPECT_STREQ(kAttemptTMonoUs, "attempt_t_mono_us");
  EXPECT_STREQ(kUid, "uid");
  EXPECT_STREQ(kPhase, "phase");
  EXPECT_STREQ(kNode, "node");
  EXPECT_STREQ(kCreated, "created");
  EXPECT_STREQ(kTrueSince, "true_since");
  EXPECT_STREQ(kContainerStarted, "container_started");
  EXPECT_STREQ(kRestarts, "restarts");
  EXPECT_STREQ(kWaiting, "waiting");
  EXPECT_STREQ(kUnschedulable, "unschedulable");
}

TEST(TraceFieldsTest, TrueSinceKeysAreTheConditionTypes) {
  std::set<std::string> types(std::begin(kTrueSinceTypes),
                              std::end(kTrueSinceTypes));
  EXPECT_EQ(types, (std::set<std::string>{"PodScheduled", "Initialized",
                                          "ContainersReady", "Ready"}));
}

}  // namespace
}  // namespace k8s_agent::trace_field
