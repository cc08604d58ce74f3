// SPDX-License-Identifier: Apache-2.0
// Tests for Status, StatusOr, the macros and the retry policy.

#include "plugin/base/status.h"

#include <cerrno>

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

TEST(StatusTest, OnlyTransientCodesAreRetryable) {
  EXPECT_TRUE(IsRetryable(UnavailableError("")));
  EXPECT_TRUE(IsRetryable(ResourceExhaustedError("")));
  EXPECT_TRUE(IsRetryable(ExpiredError("")));
  EXPECT_FALSE(IsRetryable(FailedPreconditionError("")));
  EXPECT_FALSE(IsRetryable(PermissionDeniedError("")));
  EXPECT_FALSE(IsRetryable(DeadlineExceededError("")));
  EXPECT_FALSE(IsRetryable(TooLargeError("")));
  EXPECT_FALSE(IsRetryable(OkStatus()));
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
