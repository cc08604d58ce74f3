// SPDX-License-Identifier: Apache-2.0
// Tests for NaturalCompare / NaturalLess: the rule, its edges, totality.

#include "plugin/base/natural_order.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace k8s_agent {
namespace {

using ::testing::ElementsAre;

TEST(NaturalOrderTest, EmptyComesFirst) {
  EXPECT_EQ(NaturalCompare("", ""), 0);
  EXPECT_FALSE(NaturalLess("", ""));
  EXPECT_TRUE(NaturalLess("", "a"));
  EXPECT_TRUE(NaturalLess("", "0"));
  EXPECT_FALSE(NaturalLess("a", ""));
  EXPECT_FALSE(NaturalLess("0", ""));
}

TEST(NaturalOrderTest, DigitRunsCompareByValueAnywhereInTheName) {
  EXPECT_TRUE(NaturalLess("w-2", "w-10"));
  EXPECT_FALSE(NaturalLess("w-10", "w-2"));
  EXPECT_TRUE(NaturalLess("trainer-node-0-1", "trainer-node-0-10"));
  EXPECT_TRUE(NaturalLess("trainer-node-0-10", "trainer-node-1-0"));
  EXPECT_TRUE(NaturalLess("trainer-node-2-0", "trainer-node-10-0"));
  EXPECT_TRUE(NaturalLess("job-3-abcde", "job-10-abcde"));
  EXPECT_TRUE(NaturalLess("9", "10"));
}

TEST(NaturalOrderTest, LeadingZerosDecideOnlyWhenAllElseIsEqual) {
  // Same value: the longer, zero-padded run first, so the order is total.
  EXPECT_TRUE(NaturalLess("w-01", "w-1"));
  EXPECT_FALSE(NaturalLess("w-1", "w-01"));
  EXPECT_TRUE(NaturalLess("w-00", "w-0"));
  EXPECT_TRUE(NaturalLess("w-007", "w-7"));
  EXPECT_TRUE(NaturalLess("w-7", "w-08"));  // Value first: 7 < 8.
  EXPECT_NE(NaturalCompare("w-01", "w-1"), 0);
  // A later difference of value outranks an earlier one of padding.
  EXPECT_TRUE(NaturalLess("a1-1", "a01-2"));
  EXPECT_TRUE(NaturalLess("a01-1", "a1-2"));
  // The first run that differs in length decides, not the last.
  EXPECT_TRUE(NaturalLess("a01-1", "a1-01"));
}

TEST(NaturalOrderTest, DigitRunsBeyondUint64) {
  EXPECT_TRUE(NaturalLess("w-99999999999999999999", "w-100000000000000000000"));
  EXPECT_TRUE(NaturalLess("w-18446744073709551615", "w-18446744073709551616"));
  EXPECT_TRUE(NaturalLess("w-000000000000000000000000001", "w-2"));
  EXPECT_TRUE(NaturalLess("w-123456789012345678901234567890x",
                          "w-123456789012345678901234567891"));
  EXPECT_FALSE(
      NaturalLess("w-100000000000000000000", "w-99999999999999999999"));
}

TEST(NaturalOrderTest, MixedDigitsAndOtherBytes) {
  EXPECT_TRUE(NaturalLess("w-1", "w-1a"));  // Ends first.
  EXPECT_TRUE(NaturalLess("w-1a", "w-2"));
  EXPECT_TRUE(NaturalLess("w-1a", "w-1b"));
  EXPECT_TRUE(NaturalLess("w-9", "w-a"));  // '9' < 'a' bytewise.
  EXPECT_TRUE(NaturalLess("w-.", "w-0"));  // '.' < '0' bytewise.
  EXPECT_TRUE(NaturalLess("w", "w-0"));
  EXPECT_TRUE(NaturalLess("W-1", "w-1"));  // Case matters: bytewise.
  EXPECT_TRUE(NaturalLess("a", "b"));
  // Bytes are unsigned: UTF-8 after ASCII.
  EXPECT_TRUE(NaturalLess("wz", "w\xc3\xa9"));
  EXPECT_EQ(NaturalCompare("w-10.svc", "w-10.svc"), 0);
}

TEST(NaturalOrderTest, SortsPodNames) {
  std::vector<std::string> names = {"w-10", "w-2", "x-1",  "w-0",        "w",
                                    "a",    "w-1", "w-01", "job-3-abcde"};
  std::sort(names.begin(), names.end(), NaturalLess);
  EXPECT_THAT(names, ElementsAre("a", "job-3-abcde", "w", "w-0", "w-01", "w-1",
                                 "w-2", "w-10", "x-1"));
}

// A strict total order: for every pair exactly one of a<b, b<a, a==b, and
// NaturalCompare agrees with NaturalLess both ways; transitive over all
// triples. So any input order sorts to the same output.
TEST(NaturalOrderTest, IsATotalOrder) {
  std::vector<std::string> names = {
      "",    "0",     "00",   "000",  "1",   "01",        "001",   "10",   "a",
      "a0",  "a00",   "a01",  "a1",   "a1b", "a01b",      "a-1",   "a.1",  "b",
      "w-9", "w-009", "w-10", "w-1a", "w-a", "w\xc3\xa9", "a1-01", "a01-1"};
  names.push_back("99999999999999999999");
  names.push_back("100000000000000000000");
  for (const std::string& a : names) {
    for (const std::string& b : names) {
      int c = NaturalCompare(a, b);
      EXPECT_EQ(c == 0, a == b) << a << " vs " << b;
      EXPECT_EQ(NaturalLess(a, b), c < 0) << a << " vs " << b;
      EXPECT_EQ(NaturalCompare(b, a), -c) << a << " vs " << b;
      for (const std::string& x : names) {
        if (NaturalLess(a, b) && NaturalLess(b, x)) {
          EXPECT_TRUE(NaturalLess(a, x)) << a << " < " << b << " < " << x;
        }
      }
    }
  }
  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end(), NaturalLess);
  std::mt19937 rng(28);
  for (int round = 0; round < 20; ++round) {
    std::vector<std::string> shuffled = names;
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    std::sort(shuffled.begin(), shuffled.end(), NaturalLess);
    EXPECT_EQ(shuffled, sorted);
  }
}

}  // namespace
}  // namespace k8s_agent
