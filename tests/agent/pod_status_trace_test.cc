// SPDX-License-Identifier: Apache-2.0
#include "plugin/agent/pod_status_trace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "plugin/base/strings.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/status_matchers.h"

namespace k8s_agent {
namespace {

using ::testing::HasSubstr;

constexpr char kPod[] = R"({
  "metadata": {"name": "w-1", "uid": "u1",
               "creationTimestamp": "2026-12-01T00:00:00Z"},
  "spec": {"nodeName": "node-7", "containers": [{"name": "main"}]},
  "status": {
    "phase": "Running", "podIP": "10.0.0.7",
    "conditions": [
      {"type": "PodScheduled", "status": "True",
       "lastTransitionTime": "2026-12-01T00:00:01Z"},
      {"type": "Initialized", "status": "True",
       "lastTransitionTime": "2026-12-01T00:00:02Z"},
      {"type": "ContainersReady", "status": "False",
       "lastTransitionTime": "2026-12-01T00:00:02Z"},
      {"type": "Ready", "status": "False"}],
    "initContainerStatuses": [
      {"name": "init", "restartCount": 1,
       "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}],
    "containerStatuses": [
      {"name": "main", "restartCount": 2,
       "state": {"running": {"startedAt": "2026-12-01T00:00:09Z"}}},
      {"name": "side", "restartCount": 0,
       "state": {"waiting": {"reason": "ContainerCreating"}}}]}})";

TEST(PodStatusTraceTest, FieldsAreThePodsOwnTimeline) {
  auto pod = kube::Pod::FromJson(kPod);
  ASSERT_THAT(pod, IsOk());
  nlohmann::json f = PodStatusFields(*pod);
  EXPECT_EQ(f["created"], "2026-12-01T00:00:00Z");
  EXPECT_EQ(f["node"], "node-7");
  EXPECT_EQ(f["true_since"]["PodScheduled"], "2026-12-01T00:00:01Z");
  EXPECT_EQ(f["true_since"]["Initialized"], "2026-12-01T00:00:02Z");
  // Only conditions that are True carry a "since".
  EXPECT_FALSE(f["true_since"].contains("ContainersReady"));
  EXPECT_EQ(f["container_started"], "2026-12-01T00:00:09Z");
  EXPECT_EQ(f["restarts"], 3);
  EXPECT_EQ(f["waiting"], nlohmann::json::array({"ContainerCreating"}));
}

TEST(PodStatusTraceTest, WritesOnlyChanges) {
  char path[] = "/tmp/pod-status-trace.XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  FakeClock clock;
  auto tracer = Tracer::Open(path, &clock);
  ASSERT_THAT(tracer, IsOk());
  auto pod = kube::Pod::FromJson(kPod);
  ASSERT_THAT(pod, IsOk());
  PodStatusTrace trace;
  trace.Observe(*pod, "w-1", "w-1", &*tracer);
  trace.Observe(*pod, "w-1", "w-1", &*tracer);         // Same state: no line.
  pod->containers[2].waiting_reason = "ErrImagePull";  // "side"
  trace.Observe(*pod, "w-1", "w-1", &*tracer);
  auto text = ReadFileToString(path);
  unlink(path);
  ASSERT_THAT(text, IsOk());
  std::vector<std::string> lines = Split(*text, '\n');
  ASSERT_EQ(lines.size(), 3u);  // Two records and the empty tail.
  EXPECT_THAT(lines[0], HasSubstr(R"("event":"pod_status")"));
  EXPECT_THAT(lines[0], HasSubstr(R"("waiting":["ContainerCreating"])"));
  EXPECT_THAT(lines[1], HasSubstr(R"("waiting":["ErrImagePull"])"));
  EXPECT_THAT(lines[1], HasSubstr(R"("host":"w-1")"));
}

TEST(PodStatusTraceTest, DisabledTracerCostsNothing) {
  Tracer disabled;
  auto pod = kube::Pod::FromJson(kPod);
  ASSERT_THAT(pod, IsOk());
  PodStatusTrace trace;
  trace.Observe(*pod, "w-1", "w-1", &disabled);  // Must not crash or write.
  trace.Observe(*pod, "w-1", "w-1", nullptr);
}

}  // namespace
}  // namespace k8s_agent
