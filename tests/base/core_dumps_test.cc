// SPDX-License-Identifier: Apache-2.0
// Tests for DisableCoreDumps, in a child process: it cannot be undone.

#include "plugin/base/core_dumps.h"

#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace k8s_agent {
namespace {

TEST(CoreDumpsTest, NoCoreLimitAndNotDumpable) {
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // Even a raised limit must not survive (the hard limit goes to 0).
    struct rlimit unlimited = {RLIM_INFINITY, RLIM_INFINITY};
    ::setrlimit(RLIMIT_CORE, &unlimited);
    int bits = DisableCoreDumps().ok() ? 0 : 1;
    struct rlimit now = {};
    ::getrlimit(RLIMIT_CORE, &now);
    if (now.rlim_cur != 0 || now.rlim_max != 0) bits |= 2;
    if (::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0) bits |= 4;
    ::_exit(bits);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  int bits = WEXITSTATUS(status);
  EXPECT_EQ(bits & 1, 0) << "DisableCoreDumps failed";
  EXPECT_EQ(bits & 2, 0) << "RLIMIT_CORE is not 0/0";
  EXPECT_EQ(bits & 4, 0) << "still dumpable";
}

}  // namespace
}  // namespace k8s_agent
