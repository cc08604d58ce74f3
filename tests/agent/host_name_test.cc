// SPDX-License-Identifier: Apache-2.0
// HOST validation: what may reach a URL and what is rejected first.

#include "plugin/agent/host_name.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "tests/fakes/status_matchers.h"

namespace k8s_agent {
namespace {

TEST(HostNameTest, PodNamesAndClusterDnsNames) {
  StatusOr<HostName> h = ParseHostName("w-1.workers.team-a.svc.cluster.local");
  ASSERT_THAT(h, IsOk());
  EXPECT_EQ(h->kind, HostName::Kind::kPodName);
  EXPECT_EQ(h->pod_name, "w-1");
  EXPECT_EQ(h->subdomain, "workers");
  EXPECT_EQ(h->ns, "team-a");

  h = ParseHostName("Worker-0");
  ASSERT_THAT(h, IsOk());
  EXPECT_EQ(h->pod_name, "worker-0");
  EXPECT_TRUE(h->subdomain.empty());
  EXPECT_TRUE(h->ns.empty());

  h = ParseHostName("w-0.job.");
  ASSERT_THAT(h, IsOk());
  EXPECT_EQ(h->subdomain, "job");
}

TEST(HostNameTest, IpLiterals) {
  StatusOr<HostName> h = ParseHostName("10.233.0.10");
  ASSERT_THAT(h, IsOk());
  EXPECT_EQ(h->kind, HostName::Kind::kIp);
  EXPECT_EQ(h->ip, "10.233.0.10");
  h = ParseHostName("[fd00:0::10]");
  ASSERT_THAT(h, IsOk());
  EXPECT_EQ(h->ip, "fd00::10");
}

TEST(HostNameTest, InetAtonFormsAreAddressesAsInSsh) {
  // Given the IPv4 shorthands getaddrinfo (and so ssh) accepts, expect the
  // same address, never a pod called "127".
  for (auto [in, want] : std::vector<std::pair<const char*, const char*>>{
           {"127.1", "127.0.0.1"},
           {"10.1.2", "10.1.0.2"},
           {"0x7f.0.0.1", "127.0.0.1"},
           {"2130706433", "127.0.0.1"},
           {"010.0.0.1", "8.0.0.1"}}) {
    StatusOr<HostName> h = ParseHostName(in);
    ASSERT_THAT(h, IsOk()) << in;
    EXPECT_EQ(h->kind, HostName::Kind::kIp) << in;
    EXPECT_EQ(h->ip, want) << in;
  }
  // Numeric but no address: a clear error, not a lookup of pod "10".
  EXPECT_THAT(ParseHostName("10.0.0.256"),
              StatusIs(Code::kInvalidArgument, "not a valid IPv4 address"));
  EXPECT_THAT(ParseHostName("1.2.3.4 x"), StatusIs(Code::kInvalidArgument));
  // Names that merely start with a digit stay names.
  StatusOr<HostName> h = ParseHostName("0abc-1");
  ASSERT_THAT(h, IsOk());
  EXPECT_EQ(h->kind, HostName::Kind::kPodName);
}

TEST(HostNameTest, HostileNamesNeverReachAUrl) {
  for (const char* bad : {"", "w/0", "w?0", "w#0", "w%2f", "..", "w..0", "a b",
                          "w\n0", "-w", "w-", "w_0", "w:22", "../../api"}) {
    EXPECT_THAT(ParseHostName(bad), StatusIs(Code::kInvalidArgument)) << bad;
  }
  EXPECT_THAT(ParseHostName(std::string(64, 'a')),
              StatusIs(Code::kInvalidArgument, "63"));
  EXPECT_THAT(ParseHostName(std::string(300, 'a')),
              StatusIs(Code::kInvalidArgument, "253"));
}

}  // namespace
}  // namespace k8s_agent
