// SPDX-License-Identifier: Apache-2.0
// ApiRetryPolicy: the retry/relist/reload/fail table, row by row.

#include "plugin/kube/api_retry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/fakes/fake_clock.h"
#include "tests/fakes/status_matchers.h"

namespace k8s_agent::kube {
namespace {

class ApiRetryPolicyTest : public ::testing::Test {
 protected:
  ApiDecision Decide(const Status& s, bool fresh = false) {
    return policy_.Decide(s, clock_.Now(), fresh);
  }
  FakeClock clock_;
  ApiRetryPolicy policy_{7};
};

TEST_F(ApiRetryPolicyTest, TransientErrorsRetryWithBackoffFloorRetryAfter) {
  // Given 503s, expect growing jittered delays; given a 429 with
  // Retry-After 9 s, expect that floor plus jitter of at most one backoff
  // step (Backoff::NextAfter), so refused agents do not return together.
  ApiDecision d = Decide(UnavailableError("503"));
  EXPECT_EQ(d.action, ApiAction::kRetry);
  EXPECT_GE(d.delay, milliseconds(400));
  EXPECT_LE(d.delay, milliseconds(800));
  d = Decide(ResourceExhaustedError("429").WithRetryAfter(seconds(9)));
  EXPECT_EQ(d.action, ApiAction::kRetry);
  EXPECT_GE(d.delay, seconds(9));
  EXPECT_LE(d.delay, seconds(9) + Backoff::ApiDefaults().max);
}

TEST_F(ApiRetryPolicyTest, ExpiredRelistsAtOnceUnlessRightAfterAList) {
  ApiDecision d = Decide(ExpiredError("too old"));
  EXPECT_EQ(d.action, ApiAction::kRelist);
  EXPECT_EQ(d.delay, Duration::zero());
  EXPECT_FALSE(d.consistent_list);
  // A version from a list just made was refused: wait, then ask etcd.
  d = Decide(ExpiredError("too old"), /*fresh=*/true);
  EXPECT_EQ(d.action, ApiAction::kRelist);
  EXPECT_GT(d.delay, Duration::zero());
  EXPECT_TRUE(d.consistent_list);
}

TEST_F(ApiRetryPolicyTest, UnauthenticatedReloadsTheTokenOncePerSuccess) {
  EXPECT_EQ(Decide(UnauthenticatedError("401")).action,
            ApiAction::kReloadToken);
  ApiDecision d = Decide(UnauthenticatedError("401"));
  EXPECT_EQ(d.action, ApiAction::kFail);
  EXPECT_THAT(d.status,
              StatusIs(Code::kUnauthenticated,
                       "still rejected after reloading the credential"));
  policy_.OnSuccess();
  EXPECT_EQ(Decide(UnauthenticatedError("401")).action,
            ApiAction::kReloadToken);
}

TEST_F(ApiRetryPolicyTest, ForbiddenIsRetriedForABoundedWindowThenFails) {
  // Given 403 after 403, expect short retries that stay inside the window,
  // then the original error once the window has passed.
  TimePoint first = clock_.Now();
  int retries = 0;
  for (;;) {
    ApiDecision d = Decide(PermissionDeniedError("forbidden: x"));
    if (d.action == ApiAction::kFail) {
      EXPECT_THAT(d.status, StatusIs(Code::kPermissionDenied, "forbidden: x"));
      break;
    }
    ASSERT_EQ(d.action, ApiAction::kRetry);
    EXPECT_GT(d.delay, Duration::zero());
    EXPECT_LE(d.delay, seconds(1));
    EXPECT_THAT(d.status.message(), ::testing::HasSubstr("RBAC"));
    ++retries;
    ASSERT_LT(retries, 100);
    clock_.Advance(d.delay);
  }
  EXPECT_GE(retries, 3);
  EXPECT_EQ(clock_.Now() - first, ApiRetryPolicy::kForbiddenWindow);
  // A success in between starts a new window.
  policy_.OnSuccess();
  EXPECT_EQ(Decide(PermissionDeniedError("x")).action, ApiAction::kRetry);
}

TEST_F(ApiRetryPolicyTest, PermanentErrorsFailAtOnce) {
  for (const Status& s :
       {InternalError("malformed event"), TooLargeError("64 MiB"),
        FailedPreconditionError("x509"), InvalidArgumentError("selector"),
        NotFoundError("no such namespace"), DeadlineExceededError("ours")}) {
    ApiDecision d = Decide(s);
    EXPECT_EQ(d.action, ApiAction::kFail) << s.ToString();
    EXPECT_EQ(d.status.code(), s.code());
  }
}

}  // namespace
}  // namespace k8s_agent::kube
