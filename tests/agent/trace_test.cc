// SPDX-License-Identifier: Apache-2.0
// Tracer: records land as JSON lines; a file that cannot take them is
// reported once, and the launch goes on.

#include "plugin/agent/trace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "plugin/base/log.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/log_capture.h"
#include "tests/fakes/status_matchers.h"

namespace k8s_agent {
namespace {

using ::testing::HasSubstr;

TEST(TracerTest, FullDeviceIsReportedOnceAndTracingStops) {
  // Given --trace /dev/full (every write fails with ENOSPC), expect one
  // warning naming the file and the cause, then silence.
  if (::access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full";
  FakeClock clock;
  StatusOr<Tracer> t = Tracer::Open("/dev/full", &clock);
  ASSERT_THAT(t, IsOk());
  std::string log = CaptureLog([&] {
    t->Record("w-0", "w-0", "resolved");
    t->Record("w-0", "w-0", "pod_running");
    t->Record("w-0", "w-0", "ssh_ready");
  });
  EXPECT_THAT(log, HasSubstr("--trace /dev/full: cannot write: No space left "
                             "on device; tracing stopped"));
  EXPECT_EQ(log.find("--trace"), log.rfind("--trace")) << log;
  EXPECT_FALSE(t->enabled());
}

TEST(TracerTest, WritableFileGetsOneLinePerRecord) {
  char path[] = "/tmp/k8s-trace-XXXXXX";
  int fd = ::mkstemp(path);
  ::close(fd);
  FakeClock clock;
  StatusOr<Tracer> t = Tracer::Open(path, &clock);
  ASSERT_THAT(t, IsOk());
  std::string log = CaptureLog([&] {
    t->Record("w-0", "w-0", "resolved", "by name");
    t->Record("w-0", "w-0", "exited");
  });
  EXPECT_EQ(log, "");
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  ::unlink(path);
  EXPECT_THAT(text, HasSubstr("\"event\":\"resolved\""));
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2);
}

}  // namespace
}  // namespace k8s_agent
