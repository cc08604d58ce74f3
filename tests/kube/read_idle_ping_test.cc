// SPDX-License-Identifier: Apache-2.0
// ReadIdlePing: client-go's HTTP/2 health check as a decision over the
// socket's read counters.

#include "plugin/kube/read_idle_ping.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

namespace k8s_agent::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Action = ReadIdlePing::Action;

ReadIdlePing::Reads At(Duration idle, uint64_t bytes) {
  ReadIdlePing::Reads r;
  r.idle = idle;
  r.bytes = bytes;
  return r;
}

TEST(ReadIdlePingTest, QuietLessThanAfterSchedulesTheCheckWhenItWouldBeDue) {
  ReadIdlePing ping(seconds(30), seconds(15));
  TimePoint now{seconds(1000)};
  EXPECT_EQ(ping.Check(At(seconds(10), 500), now), Action::kNone);
  EXPECT_EQ(ping.next_check(), now + seconds(20));
}

TEST(ReadIdlePingTest, QuietForAfterAsksForAPing) {
  ReadIdlePing ping(seconds(30), seconds(15));
  TimePoint now{seconds(1000)};
  EXPECT_EQ(ping.Check(At(seconds(30), 500), now), Action::kPing);
  ping.Pinged(At(seconds(30), 500), now);
  EXPECT_EQ(ping.next_check(), now + seconds(15));
}

TEST(ReadIdlePingTest, NothingReadWithinTheTimeoutIsDead) {
  ReadIdlePing ping(seconds(30), seconds(15));
  TimePoint now{seconds(1000)};
  ASSERT_EQ(ping.Check(At(seconds(31), 500), now), Action::kPing);
  ping.Pinged(At(seconds(31), 500), now);
  EXPECT_EQ(ping.Check(At(seconds(40), 500), now + seconds(9)), Action::kNone);
  EXPECT_EQ(ping.next_check(), now + seconds(15));
  EXPECT_EQ(ping.Check(At(seconds(46), 500), now + seconds(15)), Action::kDead);
}

TEST(ReadIdlePingTest, AnAnswerAMicrosecondAfterThePingCounts) {
  // The idle time (ms, from jiffies) cannot tell an instant answer from
  // none; the byte count can.
  ReadIdlePing ping(seconds(30), seconds(15));
  TimePoint now{seconds(1000)};
  ASSERT_EQ(ping.Check(At(seconds(30), 500), now), Action::kPing);
  ping.Pinged(At(seconds(30), 500), now);
  EXPECT_EQ(ping.Check(At(seconds(15), 517), now + seconds(15)), Action::kNone);
  // Answered: the next PING is due 30 s after the answer.
  EXPECT_EQ(ping.next_check(), now + seconds(30));
}

TEST(ReadIdlePingTest, AnsweredThenQuietAgainPingsAgain) {
  ReadIdlePing ping(seconds(30), seconds(15));
  TimePoint now{seconds(1000)};
  ping.Pinged(At(seconds(30), 500), now);
  EXPECT_EQ(ping.Check(At(seconds(30), 517), now + seconds(30)), Action::kPing);
}

TEST(ReadIdlePingTest, SocketReadsCountsBytesOnALoopbackConnection) {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)),
            0);
  ASSERT_EQ(listen(listener, 1), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  int client = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)),
            0);
  int server = accept(listener, nullptr, nullptr);
  ASSERT_GE(server, 0);

  auto before = ReadIdlePing::SocketReads(client);
  ASSERT_TRUE(before.has_value());
  ASSERT_EQ(write(server, "ping", 4), 4);
  char buf[4];
  ASSERT_EQ(read(client, buf, sizeof(buf)), 4);
  auto after = ReadIdlePing::SocketReads(client);
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->bytes, before->bytes + 4);
  EXPECT_LT(after->idle, seconds(5));

  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  EXPECT_FALSE(ReadIdlePing::SocketReads(pipe_fds[0]).has_value());
  for (int fd : {listener, client, server, pipe_fds[0], pipe_fds[1]}) close(fd);
}

}  // namespace
}  // namespace k8s_agent::kube
