// SPDX-License-Identifier: Apache-2.0
// StreamLiveness: when a watch is dead by its idle limit or by an
// unanswered PING, and when it asks for the socket's counters.

#include "plugin/kube/stream_liveness.h"

#include <gtest/gtest.h>

#include <chrono>
#include <optional>

namespace k8s_agent::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Action = StreamLiveness::Action;

constexpr char kWatch[] = "GET https://api.example:6443/api/v1/pods?watch=1";

const TimePoint kStart = TimePoint() + std::chrono::hours(1);

ReadIdlePing::Reads Reads(Duration idle, uint64_t bytes) {
  ReadIdlePing::Reads reads;
  reads.idle = idle;
  reads.bytes = bytes;
  return reads;
}

TEST(StreamLivenessTest, WithoutLimitsItIsNeverDead) {
  StreamLiveness liveness;
  EXPECT_EQ(liveness.Check(kStart + std::chrono::hours(5), true),
            Action::kNone);
  EXPECT_EQ(liveness.NextCheck(true), TimePoint::max());
  StreamLiveness zero(Duration::zero(), Duration::zero(), seconds(1), kStart);
  EXPECT_EQ(zero.Check(kStart + std::chrono::hours(5), true), Action::kNone);
  EXPECT_EQ(zero.NextCheck(true), TimePoint::max());
}

TEST(StreamLivenessTest, TheIdleLimitCountsFromTheLastByteHeard) {
  StreamLiveness liveness(seconds(90), Duration::zero(), Duration::zero(),
                          kStart);
  EXPECT_EQ(liveness.NextCheck(false), kStart + seconds(90));
  EXPECT_EQ(liveness.Check(kStart + seconds(89), false), Action::kNone);
  liveness.Heard(kStart + seconds(60));
  EXPECT_EQ(liveness.NextCheck(false), kStart + seconds(150));
  EXPECT_EQ(liveness.Check(kStart + seconds(149), true), Action::kNone);
  EXPECT_EQ(liveness.Check(kStart + seconds(150), true), Action::kDead);
  Status dead = liveness.Dead(kWatch);
  EXPECT_EQ(dead.code(), Code::kUnavailable);
  EXPECT_EQ(dead.message(),
            std::string(kWatch) +
                ": no data for 1m30s (idle timeout; connection presumed "
                "dead)");
}

TEST(StreamLivenessTest, ThePingCheckWaitsForTheResponseHeaders) {
  StreamLiveness liveness(Duration::zero(), seconds(30), seconds(15), kStart);
  EXPECT_EQ(liveness.Check(kStart + seconds(60), false), Action::kNone);
  EXPECT_EQ(liveness.NextCheck(false), TimePoint::max());
  EXPECT_EQ(liveness.Check(kStart + seconds(60), true), Action::kReadSocket);
}

TEST(StreamLivenessTest, AConnectionWithoutCountersStopsThePingCheckOnly) {
  StreamLiveness liveness(seconds(300), seconds(30), seconds(15), kStart);
  ASSERT_EQ(liveness.Check(kStart, true), Action::kReadSocket);
  EXPECT_EQ(liveness.CheckReads(std::nullopt, kStart), Action::kNone);
  EXPECT_EQ(liveness.Check(kStart + seconds(100), true), Action::kNone);
  EXPECT_EQ(liveness.NextCheck(true), kStart + seconds(300));
  EXPECT_EQ(liveness.Check(kStart + seconds(300), true), Action::kDead);
}

TEST(StreamLivenessTest, AQuietConnectionIsPingedAndAnAnswerKeepsItAlive) {
  StreamLiveness liveness(seconds(300), seconds(30), seconds(15), kStart);
  TimePoint now = kStart + seconds(10);
  ASSERT_EQ(liveness.Check(now, true), Action::kReadSocket);
  // 10 s quiet: the next check is when 30 s will have passed.
  EXPECT_EQ(liveness.CheckReads(Reads(seconds(10), 500), now), Action::kNone);
  EXPECT_EQ(liveness.NextCheck(true), now + seconds(20));
  EXPECT_EQ(liveness.Check(now + seconds(19), true), Action::kNone);
  now += seconds(20);
  ASSERT_EQ(liveness.Check(now, true), Action::kReadSocket);
  EXPECT_EQ(liveness.CheckReads(Reads(seconds(30), 500), now), Action::kPing);
  liveness.Pinged(Reads(seconds(30), 500), now);
  EXPECT_EQ(liveness.NextCheck(true), now + seconds(15));
  EXPECT_EQ(liveness.Check(now + seconds(14), true), Action::kNone);
  // The PING's ACK was read: 17 more bytes.
  ASSERT_EQ(liveness.Check(now + seconds(15), true), Action::kReadSocket);
  EXPECT_EQ(liveness.CheckReads(Reads(seconds(14), 517), now + seconds(15)),
            Action::kNone);
}

TEST(StreamLivenessTest, AnUnansweredPingIsDeadAndSaysSo) {
  StreamLiveness liveness(seconds(300), seconds(30), seconds(15), kStart);
  TimePoint now = kStart + seconds(30);
  ASSERT_EQ(liveness.Check(now, true), Action::kReadSocket);
  ASSERT_EQ(liveness.CheckReads(Reads(seconds(30), 500), now), Action::kPing);
  liveness.Pinged(Reads(seconds(30), 500), now);
  now += seconds(15);
  ASSERT_EQ(liveness.Check(now, true), Action::kReadSocket);
  EXPECT_EQ(liveness.CheckReads(Reads(seconds(45), 500), now), Action::kDead);
  Status dead = liveness.Dead(kWatch);
  EXPECT_EQ(dead.code(), Code::kUnavailable);
  EXPECT_EQ(dead.message(),
            std::string(kWatch) +
                ": no answer to an HTTP/2 PING within 15.0s after 30.0s with "
                "nothing read (the API server is stopped or the connection "
                "is dead)");
}

TEST(StreamLivenessTest, TheIdleLimitComesBeforeADuePing) {
  StreamLiveness liveness(seconds(40), seconds(30), seconds(15), kStart);
  EXPECT_EQ(liveness.NextCheck(true), TimePoint());  // A PING check is due.
  EXPECT_EQ(liveness.Check(kStart + seconds(40), true), Action::kDead);
  EXPECT_EQ(liveness.Dead(kWatch).message(),
            std::string(kWatch) +
                ": no data for 40.0s (idle timeout; connection presumed dead)");
}

TEST(StreamLivenessTest, ReadsWithoutAPingCheckDecideNothing) {
  StreamLiveness liveness(seconds(40), Duration::zero(), Duration::zero(),
                          kStart);
  EXPECT_EQ(liveness.CheckReads(Reads(milliseconds(0), 1), kStart),
            Action::kNone);
}

}  // namespace
}  // namespace k8s_agent::kube
