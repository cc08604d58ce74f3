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

TEST(QuantityTest, ParsesKubernetesQuantitiesInThousandths) {
  // Thousandths, exact, so sums of "500m" add up; below that it floors.
  struct Case {
    const char* text;
    int64_t want_milli;
  } cases[] = {{"2", 2000},        {"0", 0},
               {"500m", 500},      {"1500m", 1500},
               {"1.5", 1500},      {"4Ki", 4096000},
               {"1.5Ki", 1536000}, {"1e3", 1000000},
               {"2k", 2000000},    {"+3", 3000},
               {"0.0", 0},         {"100n", 0},
               {"007", 7000},      {"1G", 1000000000000}};
  for (const Case& c : cases) {
    StatusOr<int64_t> q = QuantityMilli(c.text);
    ASSERT_THAT(q, IsOk()) << c.text;
    EXPECT_EQ(*q, c.want_milli) << c.text;
  }
  for (const char* bad : {"", "abc", "-1", "2x", "1.2.3", "m", "1e", "8Ex"}) {
    EXPECT_THAT(QuantityMilli(bad), StatusIs(Code::kInvalidArgument)) << bad;
  }
  EXPECT_THAT(QuantityMilli("9999999999999999999999"),
              StatusIs(Code::kInvalidArgument, "too large"));
}

TEST(QuantityTest, AcceptsSignedDecimalExponents) {
  // resource.Quantity's grammar: <decimalExponent> ::= "e" <signedNumber>
  // | "E" <signedNumber>, so the exponent may carry either sign.
  struct Case {
    const char* text;
    int64_t want_milli;
  } cases[] = {{"5E-3", 5},    {"2E+1", 20000},   {"1e-3", 1},
               {"15e-4", 1},   {"1E+0", 1000},    {"1e-4", 0},
               {".5e1", 5000}, {"2e03", 2000000}, {"1.5e+2", 150000}};
  for (const Case& c : cases) {
    StatusOr<int64_t> q = QuantityMilli(c.text);
    ASSERT_THAT(q, IsOk()) << c.text;
    EXPECT_EQ(*q, c.want_milli) << c.text;
  }
  for (const char* bad : {"1e-", "1e+", "1e--3", "1e+-3", "1e 3", "1e3.5",
                          "1e101", "5E-3m", "e3", "1e3i"}) {
    EXPECT_THAT(QuantityMilli(bad), StatusIs(Code::kInvalidArgument)) << bad;
  }
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

}  // namespace
}  // namespace k8s_agent::kube
