// SPDX-License-Identifier: Apache-2.0
// Which HOSTs are looked for by a Job's labels, and with which selector.

#include "plugin/agent/hostname_labels.h"

#include <gtest/gtest.h>

#include "tests/fakes/status_matchers.h"

namespace k8s_agent {
namespace {

std::string SelectorFor(const std::string& host,
                        const std::string& extra = "") {
  StatusOr<HostName> name = ParseHostName(host);
  EXPECT_THAT(name, IsOk());
  return name.ok() ? HostnameLabelSelector(*name, extra) : "?";
}

TEST(HostnameLabelsTest, IndexedJobAndJobSetHostnamesSelectTheirJobsIndex) {
  EXPECT_EQ(SelectorFor("job-0"),
            "batch.kubernetes.io/job-name=job,"
            "batch.kubernetes.io/job-completion-index=0");
  // JobSet / Trainer v2: <jobset>-<replicatedjob>-<jobindex>-<podindex>, a
  // pod of Indexed Job <jobset>-<replicatedjob>-<jobindex>.
  EXPECT_EQ(SelectorFor("pytorch-node-0-12.pytorch.ns.svc.cluster.local"),
            "batch.kubernetes.io/job-name=pytorch-node-0,"
            "batch.kubernetes.io/job-completion-index=12");
}

TEST(HostnameLabelsTest, SelectorIsNarrowedByTheUsersOne) {
  EXPECT_EQ(SelectorFor("job-3", "team=a"),
            "team=a,batch.kubernetes.io/job-name=job,"
            "batch.kubernetes.io/job-completion-index=3");
}

TEST(HostnameLabelsTest, NamesWithoutAnIndexFitNoGrammar) {
  for (const char* host : {"launcher", "job", "job-", "job-01", "job-x1", "0",
                           "-1", "job-1234567890"}) {
    StatusOr<HostName> name = ParseHostName(host);
    if (!name.ok()) continue;  // "job-", "-1" are no host names at all.
    EXPECT_EQ(HostnameLabelSelector(*name, ""), "") << host;
  }
  StatusOr<HostName> ip = ParseHostName("10.0.0.1");
  ASSERT_THAT(ip, IsOk());
  EXPECT_EQ(HostnameLabelSelector(*ip, ""), "");
}

}  // namespace
}  // namespace k8s_agent
