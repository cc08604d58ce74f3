// SPDX-License-Identifier: Apache-2.0
// Pod::FromJson and PodList::FromJson against golden files.

#include "plugin/kube/pod.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plugin/base/strings.h"
#include "tests/fakes/status_matchers.h"

namespace k8s_agent::kube {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

std::string Golden(const std::string& name) {
  auto text = ReadFileToString(std::string(K8S_TESTDATA_DIR) + "/" + name);
  EXPECT_THAT(text, IsOk());
  return text.ok() ? *text : "";
}

TEST(PodTest, NativeSidecarIsAnInitContainerWithRestartPolicyAlways) {
  // Given a 1.33 pod: a regular init container that Completed and a native
  // sidecar (restartPolicy Always) in CrashLoopBackOff that started once,
  // expect both as init containers, only the second a sidecar, and the
  // sidecar's started flag and last exit read.
  auto pod = Pod::FromJson(R"({"metadata":{"name":"w-0"},
    "spec":{"initContainers":[{"name":"setup"},
                              {"name":"log-shipper","restartPolicy":"Always"}],
            "containers":[{"name":"main"}]},
    "status":{"phase":"Running","initContainerStatuses":[
      {"name":"setup","ready":true,"started":false,
       "state":{"terminated":{"reason":"Completed","exitCode":0}}},
      {"name":"log-shipper","ready":false,"started":false,"restartCount":6,
       "state":{"waiting":{"reason":"CrashLoopBackOff"}},
       "lastState":{"terminated":{"reason":"Error","exitCode":2}}}],
     "containerStatuses":[{"name":"main","ready":true,"started":true,
       "state":{"running":{"startedAt":"2026-12-01T10:00:00Z"}}}]}})");
  ASSERT_THAT(pod, IsOk());
  ASSERT_EQ(pod->containers.size(), 3u);
  EXPECT_TRUE(pod->containers[0].init);
  EXPECT_FALSE(pod->containers[0].sidecar);
  EXPECT_TRUE(pod->containers[1].init);
  EXPECT_TRUE(pod->containers[1].sidecar);
  EXPECT_FALSE(pod->containers[1].started);
  EXPECT_EQ(pod->containers[1].terminated_exit_code, 2);
  EXPECT_FALSE(pod->containers[2].sidecar) << "a main container of that name";
  EXPECT_TRUE(pod->containers[2].started);
}

TEST(PodTest, InitContainerRestartPolicyOfTheWrongTypeIsNamed) {
  auto pod = Pod::FromJson(
      R"({"spec":{"initContainers":[{"name":"s","restartPolicy":1}]}})");
  EXPECT_THAT(pod, StatusIs(Code::kInternal,
                            "pod spec.initContainers[0].restartPolicy: "
                            "expected string"));
}

TEST(PodTest, RunningPod) {
  auto pod = Pod::FromJson(Golden("pod_running.json"));
  ASSERT_THAT(pod, IsOk());
  EXPECT_EQ(pod->name, "w0");
  EXPECT_EQ(pod->ns, "default");
  EXPECT_EQ(pod->uid, "6f1c3f2e-0000-4000-8000-000000000001");
  EXPECT_EQ(pod->resource_version, "1234");
  EXPECT_THAT(pod->labels,
              ElementsAre(Pair("app", "mpi"), Pair("role", "worker")));
  EXPECT_EQ(pod->hostname, "w0");
  EXPECT_EQ(pod->subdomain, "job");
  EXPECT_FALSE(pod->deleting);
  EXPECT_EQ(pod->phase, "Running");
  EXPECT_EQ(pod->pod_ip, "10.233.0.10");
  EXPECT_THAT(pod->pod_ips, ElementsAre("10.233.0.10", "fd00::10"));
  EXPECT_TRUE(pod->ready);
  EXPECT_EQ(pod->unschedulable_reason, "");
  ASSERT_EQ(pod->containers.size(), 2u);
  EXPECT_TRUE(pod->containers[0].init);
  EXPECT_EQ(pod->containers[0].name, "init");
  EXPECT_EQ(pod->containers[0].terminated_reason, "Completed");
  EXPECT_FALSE(pod->containers[1].init);
  EXPECT_TRUE(pod->containers[1].ready);
  EXPECT_EQ(pod->containers[1].restart_count, 2);
  EXPECT_EQ(pod->containers[1].waiting_reason, "");
}

TEST(PodTest, PendingImagePullBackOff) {
  auto pod = Pod::FromJson(Golden("pod_pending_imagepull.json"));
  ASSERT_THAT(pod, IsOk());
  EXPECT_EQ(pod->phase, "Pending");
  EXPECT_FALSE(pod->ready);
  EXPECT_TRUE(pod->pod_ip.empty());
  EXPECT_TRUE(pod->pod_ips.empty());
  ASSERT_EQ(pod->containers.size(), 1u);
  EXPECT_EQ(pod->containers[0].waiting_reason, "ImagePullBackOff");
  EXPECT_EQ(pod->containers[0].waiting_message,
            "Back-off pulling image \"nosuch:1\"");
}

TEST(PodTest, UnschedulableAndDeleting) {
  auto pod = Pod::FromJson(Golden("pod_unschedulable.json"));
  ASSERT_THAT(pod, IsOk());
  EXPECT_EQ(pod->ns, "ns1");
  EXPECT_TRUE(pod->deleting);
  EXPECT_EQ(pod->unschedulable_reason, "Unschedulable");
  EXPECT_EQ(pod->unschedulable_message,
            "0/3 nodes are available: 3 Insufficient cpu.");
}

TEST(PodTest, ControllerIsTheOwnerReferenceWithControllerTrue) {
  // Given a non-controller owner first and a StatefulSet controller second,
  // expect the controller; given none, empty; given a bad entry, an error.
  auto pod = Pod::FromJson(
      R"({"metadata":{"name":"w-0","ownerReferences":[)"
      R"({"apiVersion":"v1","kind":"ConfigMap","name":"cm","uid":"1"},)"
      R"({"apiVersion":"apps/v1","kind":"StatefulSet","name":"workers",)"
      R"("uid":"2","controller":true,"blockOwnerDeletion":true}]}})");
  ASSERT_THAT(pod, IsOk());
  EXPECT_EQ(pod->controller, "StatefulSet/workers");
  pod = Pod::FromJson(
      R"({"metadata":{"name":"w-0","ownerReferences":[)"
      R"({"kind":"ConfigMap","name":"cm","controller":false}]}})");
  ASSERT_THAT(pod, IsOk());
  EXPECT_EQ(pod->controller, "");
  EXPECT_THAT(Pod::FromJson(R"({"metadata":{"ownerReferences":[1]}})"),
              StatusIs(Code::kInternal, "metadata.ownerReferences[0]"));
}

TEST(PodTest, FailedWithCrashLoopLastState) {
  auto pod = Pod::FromJson(Golden("pod_failed.json"));
  ASSERT_THAT(pod, IsOk());
  EXPECT_EQ(pod->phase, "Failed");
  EXPECT_EQ(pod->reason, "Evicted");
  EXPECT_EQ(pod->message, "The node was low on resource: memory.");
  ASSERT_EQ(pod->containers.size(), 1u);
  EXPECT_EQ(pod->containers[0].waiting_reason, "CrashLoopBackOff");
  EXPECT_EQ(pod->containers[0].terminated_reason, "Error");
  EXPECT_EQ(pod->containers[0].terminated_exit_code, 1);
  EXPECT_EQ(pod->containers[0].restart_count, 5);
}

TEST(PodTest, MissingStatusAndNullsAreEmpty) {
  auto pod = Pod::FromJson(Golden("pod_no_status.json"));
  ASSERT_THAT(pod, IsOk());
  EXPECT_EQ(pod->name, "w4");
  EXPECT_EQ(pod->phase, "");
  EXPECT_TRUE(pod->labels.empty());
  EXPECT_TRUE(pod->containers.empty());
}

TEST(PodTest, WrongTypeNamesTheField) {
  EXPECT_THAT(Pod::FromJson(Golden("pod_wrong_types.json")),
              StatusIs(Code::kInternal, "status.podIP: expected string"));
  EXPECT_THAT(Pod::FromJson(R"({"metadata":{"labels":{"a":1}}})"),
              StatusIs(Code::kInternal, "metadata.labels.a"));
  EXPECT_THAT(Pod::FromJson(R"({"status":{"containerStatuses":{}}})"),
              StatusIs(Code::kInternal, "containerStatuses: expected array"));
  EXPECT_THAT(
      Pod::FromJson(R"({"status":{"containerStatuses":[{"ready":"yes"}]}})"),
      StatusIs(Code::kInternal, "containerStatuses[0].ready"));
  EXPECT_THAT(Pod::FromJson("[]"), StatusIs(Code::kInternal));
  EXPECT_THAT(Pod::FromJson("{nope"), StatusIs(Code::kInternal, "malformed"));
}

TEST(PodTest, SpecContainerResources) {
  auto pod = Pod::FromJson(R"({"spec":{
      "initContainers":[{"name":"init","resources":{"limits":{"cpu":"9"}}}],
      "containers":[
        {"name":"a","resources":{"limits":{"nvidia.com/gpu":"2","cpu":"500m"},
                                 "requests":{"cpu":"250m"}}},
        {"name":"b","resources":{"requests":{"nvidia.com/gpu":1}}},
        {"name":"c"}]}})");
  ASSERT_THAT(pod, IsOk());
  ASSERT_EQ(pod->spec_containers.size(), 3u);  // Init containers excluded.
  EXPECT_EQ(pod->spec_containers[0].name, "a");
  EXPECT_THAT(pod->spec_containers[0].limits,
              ElementsAre(Pair("cpu", "500m"), Pair("nvidia.com/gpu", "2")));
  EXPECT_THAT(pod->spec_containers[0].requests,
              ElementsAre(Pair("cpu", "250m")));
  EXPECT_TRUE(pod->spec_containers[1].limits.empty());
  EXPECT_THAT(pod->spec_containers[1].requests,
              ElementsAre(Pair("nvidia.com/gpu", "1")));
  EXPECT_TRUE(pod->spec_containers[2].limits.empty());
  EXPECT_THAT(
      Pod::FromJson(
          R"({"spec":{"containers":[{"resources":{"limits":{"x":[]}}}]}})"),
      StatusIs(Code::kInternal, "spec.containers[0].resources.limits.x"));
  EXPECT_THAT(Pod::FromJson(R"({"spec":{"containers":[3]}})"),
              StatusIs(Code::kInternal, "spec.containers[0]"));
}

TEST(PodListTest, PageWithContinue) {
  auto list = PodList::FromJson(Golden("podlist_page.json"));
  ASSERT_THAT(list, IsOk());
  EXPECT_EQ(list->resource_version, "500");
  EXPECT_EQ(list->continue_token, "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ");
  ASSERT_EQ(list->items.size(), 2u);
  EXPECT_EQ(list->items[0].name, "w0");
  EXPECT_EQ(list->items[1].phase, "Pending");
}

TEST(PodListTest, BadItemNamesIndex) {
  EXPECT_THAT(PodList::FromJson(R"({"items":[{},{"status":{"phase":3}}]})"),
              StatusIs(Code::kInternal, "items[1]"));
  EXPECT_THAT(PodList::FromJson(R"({"items":{}})"), StatusIs(Code::kInternal));
}

}  // namespace
}  // namespace k8s_agent::kube
