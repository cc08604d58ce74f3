// SPDX-License-Identifier: Apache-2.0
// OutputFd never blocks, on every kind of fd the agent may inherit.

#include "plugin/base/output_fd.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <pty.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

namespace k8s_agent {
namespace {

// A write that blocks would hang the test: SIGALRM ends it instead.
class OutputFdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ::signal(SIGPIPE, SIG_IGN);
    ::alarm(20);
  }
  void TearDown() override { ::alarm(0); }

  // Writes until EAGAIN; returns the bytes taken.
  static size_t Fill(OutputFd* out) {
    std::vector<char> chunk(1 << 20, 'x');
    size_t total = 0;
    while (true) {
      ssize_t n = out->Write(chunk.data(), chunk.size());
      if (n > 0) {
        total += static_cast<size_t>(n);
        continue;
      }
      EXPECT_EQ(n, -1);
      EXPECT_EQ(errno, EAGAIN);
      return total;
    }
  }
};

TEST_F(OutputFdTest, PipeFillsWithoutBlockingAndStaysBlocking) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  OutputFd out(p[1]);
  EXPECT_EQ(out.mode(), OutputFd::Mode::kNoWait);
  EXPECT_GT(Fill(&out), 0u);
  // The shared description was never made non-blocking.
  EXPECT_EQ(::fcntl(p[1], F_GETFL) & O_NONBLOCK, 0);
  ::close(p[0]);
  char c = 'y';
  EXPECT_EQ(out.Write(&c, 1), -1);
  EXPECT_EQ(errno, EPIPE);
  ::close(p[1]);
}

TEST_F(OutputFdTest, FifoFallsBackToItsOwnNonBlockingDescription) {
  std::string path = ::testing::TempDir() + "/output_fd_fifo";
  ::unlink(path.c_str());
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  int r = ::open(path.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(r, 0);
  int w = ::open(path.c_str(), O_WRONLY);
  ASSERT_GE(w, 0);
  ::unlink(path.c_str());
  OutputFd out(w);
  EXPECT_GT(Fill(&out), 0u);
  // Linux 6.x refuses RWF_NOWAIT for FIFOs: the /proc reopen took over.
  if (out.mode() == OutputFd::Mode::kReopened) {
    EXPECT_NE(out.fd(), w);
  } else {
    EXPECT_EQ(out.mode(), OutputFd::Mode::kNoWait);
  }
  EXPECT_EQ(::fcntl(w, F_GETFL) & O_NONBLOCK, 0);
  ::close(r);
  ::close(w);
}

TEST_F(OutputFdTest, PtyFillsWithoutBlocking) {
  int master = -1, slave = -1;
  ASSERT_EQ(::openpty(&master, &slave, nullptr, nullptr, nullptr), 0);
  OutputFd out(slave);
  EXPECT_EQ(out.mode(), OutputFd::Mode::kNoWait);
  EXPECT_GT(Fill(&out), 0u);
  EXPECT_EQ(::fcntl(slave, F_GETFL) & O_NONBLOCK, 0);
  ::close(slave);
  ::close(master);
}

TEST_F(OutputFdTest, SocketFillsWithoutBlocking) {
  int s[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
  OutputFd out(s[1]);
  EXPECT_EQ(out.mode(), OutputFd::Mode::kSend);
  EXPECT_GT(Fill(&out), 0u);
  EXPECT_EQ(::fcntl(s[1], F_GETFL) & O_NONBLOCK, 0);
  ::close(s[0]);
  ::close(s[1]);
}

TEST_F(OutputFdTest, RegularFileAndDevNullArePlainWrites) {
  std::string path = ::testing::TempDir() + "/output_fd_file";
  int f = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ASSERT_GE(f, 0);
  ::unlink(path.c_str());
  OutputFd file(f);
  EXPECT_EQ(file.mode(), OutputFd::Mode::kPlain);
  EXPECT_EQ(file.Write("abc", 3), 3);
  ::close(f);
  int n = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  ASSERT_GE(n, 0);
  OutputFd null(n);
  EXPECT_EQ(null.mode(), OutputFd::Mode::kPlain);
  EXPECT_EQ(null.Write("abc", 3), 3);
  ::close(n);
}

TEST_F(OutputFdTest, NoFd) {
  OutputFd out(-1);
  EXPECT_EQ(out.mode(), OutputFd::Mode::kNone);
  EXPECT_EQ(out.Write("a", 1), -1);
}

}  // namespace
}  // namespace k8s_agent
