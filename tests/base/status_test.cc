// SPDX-License-Identifier: Apache-2.0
// Tests for Status, StatusOr, the macros and the retry policy.

#include "plugin/base/status.h"

#include <cerrno>
#include <iterator>
#include <utility>

#include <gtest/gtest.h>

#include "tests/fakes/status_matchers.h"

namespace k8s_agent {
namespace {

StatusOr<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgumentError("odd");
  return x / 2;
}

StatusOr<int> Quarter(int x) {
  K8S_ASSIGN_OR_RETURN(int h, Half(x));
  K8S_ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

Status CheckEven(int x) {
  K8S_RETURN_IF_ERROR(Half(x).status());
  return OkStatus();
}

TEST(StatusTest, OkByDefault) {
  // Given a default status, expect OK with an empty message.
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.ToString(), "OK");
}

TEST(StatusTest, ContextIsPrepended) {
  Status s = UnavailableError("connection refused").WithContext("ssh 10.0.0.1");
  EXPECT_THAT(s,
              StatusIs(Code::kUnavailable, "ssh 10.0.0.1: connection refused"));
  EXPECT_TRUE(OkStatus().WithContext("x").ok());
}

TEST(StatusTest, MacrosPropagate) {
  EXPECT_EQ(*Quarter(8), 2);
  EXPECT_THAT(Quarter(6), StatusIs(Code::kInvalidArgument, "odd"));
  EXPECT_THAT(CheckEven(3), StatusIs(Code::kInvalidArgument));
  EXPECT_THAT(CheckEven(4), IsOk());
}

TEST(StatusTest, ErrnoMapping) {
  EXPECT_THAT(ErrnoError("connect", ECONNREFUSED),
              StatusIs(Code::kUnavailable, "connect: Connection refused"));
  EXPECT_THAT(ErrnoError("open x", ENOENT), StatusIs(Code::kNotFound));
  EXPECT_THAT(ErrnoError("open x", EACCES), StatusIs(Code::kPermissionDenied));
  EXPECT_THAT(ErrnoError("x", EINVAL), StatusIs(Code::kInternal));
}

TEST(StatusTest, EveryCodeHasOneRetryClass) {
  // The one table every retry loop reads: a new Code must be placed here.
  const std::pair<Code, RetryClass> kTable[] = {
      {Code::kOk, RetryClass::kNone},
      {Code::kInvalidArgument, RetryClass::kFail},
      {Code::kNotFound, RetryClass::kFail},
      {Code::kUnauthenticated, RetryClass::kReauthenticate},
      {Code::kPermissionDenied, RetryClass::kMaybeCatchingUp},
      {Code::kExpired, RetryClass::kRelist},
      {Code::kUnavailable, RetryClass::kBackoff},
      {Code::kDeadlineExceeded, RetryClass::kFail},
      {Code::kFailedPrecondition, RetryClass::kFail},
      {Code::kResourceExhausted, RetryClass::kBackoff},
      {Code::kTooLarge, RetryClass::kFail},
      {Code::kCancelled, RetryClass::kFail},
      {Code::kInternal, RetryClass::kFail},
  };
  static_assert(std::size(kTable) == static_cast<size_t>(Code::kInternal) + 1);
  for (size_t i = 0; i < std::size(kTable); ++i) {
    EXPECT_EQ(static_cast<size_t>(kTable[i].first), i) << "table order";
    EXPECT_EQ(ClassifyForRetry(kTable[i].first), kTable[i].second)
        << CodeName(kTable[i].first);
  }
}

TEST(StatusTest, RetryAfterSurvivesContext) {
  Status s = ResourceExhaustedError("slow down")
                 .WithRetryAfter(std::chrono::milliseconds(2500))
                 .WithContext("watch pods");
  EXPECT_EQ(s.code(), Code::kResourceExhausted);
  EXPECT_EQ(s.message(), "watch pods: slow down");
  EXPECT_EQ(s.retry_after(), std::chrono::milliseconds(2500));
  EXPECT_EQ(UnavailableError("x").retry_after().count(), 0);
}

}  // namespace
}  // namespace k8s_agent
