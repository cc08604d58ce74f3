// SPDX-License-Identifier: Apache-2.0
// Resource quantities and the per-pod slot sums --hostfile derives from them.

#include "plugin/kube/quantity.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <utility>
#include <vector>

#include "tests/fakes/status_matchers.h"

namespace k8s_agent::kube {
namespace {

TEST(QuantityTest, FloorsKubernetesQuantities) {
  struct Case {
    const char* text;
    int64_t want;
  } cases[] = {{"2", 2},     {"0", 0},          {"500m", 0},     {"1500m", 1},
               {"1.5", 1},   {"4Ki", 4096},     {"1.5Ki", 1536}, {"1e3", 1000},
               {"2k", 2000}, {"+3", 3},         {"0.0", 0},      {"100n", 0},
               {"007", 7},   {"1G", 1000000000}};
  for (const Case& c : cases) {
    StatusOr<int64_t> q = QuantityMilli(c.text);
    ASSERT_THAT(q, IsOk()) << c.text;
    EXPECT_EQ(*q / 1000, c.want) << c.text;
  }
  for (const char* bad : {"", "abc", "-1", "2x", "1.2.3", "m", "1e", "8Ex"}) {
    EXPECT_THAT(QuantityMilli(bad), StatusIs(Code::kInvalidArgument)) << bad;
  }
  EXPECT_THAT(QuantityMilli("9999999999999999999999"),
              StatusIs(Code::kInvalidArgument, "too large"));
}

Pod PodWithContainers(std::vector<std::pair<std::map<std::string, std::string>,
                                            std::map<std::string, std::string>>>
                          containers) {
  Pod pod;
  int i = 0;
  for (auto& [limits, requests] : containers) {
    ContainerSpec c;
    c.name = "c" + std::to_string(i++);
    c.limits = limits;
    c.requests = requests;
    pod.spec_containers.push_back(c);
  }
  return pod;
}

TEST(PodResourceSlotsTest, SumsLimitsElseRequests) {
  const std::string gpu = "nvidia.com/gpu";
  Pod pod = PodWithContainers(
      {{{{gpu, "2"}}, {{gpu, "9"}}}, {{}, {{gpu, "1"}}}, {{{"cpu", "4"}}, {}}});
  EXPECT_EQ(*PodResourceSlots(pod, gpu), 3);
  EXPECT_EQ(*PodResourceSlots(pod, "memory"), 0);
  // Milli-units are summed before rounding down.
  Pod halves =
      PodWithContainers({{{{"cpu", "500m"}}, {}}, {{{"cpu", "500m"}}, {}}});
  EXPECT_EQ(*PodResourceSlots(halves, "cpu"), 1);
  Pod bad = PodWithContainers({{{{gpu, "lots"}}, {}}});
  EXPECT_THAT(PodResourceSlots(bad, gpu),
              StatusIs(Code::kInvalidArgument,
                       "container c0 resources.limits[nvidia.com/gpu]"));
}

TEST(QuantityTest, KeepsThousandthsForSums) {
  EXPECT_EQ(*QuantityMilli("500m"), 500);
  EXPECT_EQ(*QuantityMilli("1.5"), 1500);
  EXPECT_EQ(*QuantityMilli("100n"), 0);
  EXPECT_EQ(*QuantityMilli("2k"), 2000000);
}

}  // namespace
}  // namespace k8s_agent::kube
