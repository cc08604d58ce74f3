// SPDX-License-Identifier: Apache-2.0
// ApiRetryPolicy: the retry/relist/fail table in api_retry.h.

#include "plugin/kube/api_retry.h"

#include <algorithm>

#include "plugin/base/strings.h"

namespace k8s_agent::kube {
namespace {

// 403 retries start fast (the cache catches up in milliseconds) and stay
// well inside the window.
Backoff::Params ForbiddenBackoff() {
  return {std::chrono::milliseconds(100), std::chrono::seconds(1),
          std::chrono::minutes(2)};
}

ApiDecision Decision(ApiAction action, Duration delay, const Status& status) {
  ApiDecision d;
  d.action = action;
  d.delay = delay;
  d.status = status;
  return d;
}

}  // namespace

ApiRetryPolicy::ApiRetryPolicy(uint64_t seed)
    : backoff_(Backoff::ApiDefaults(), seed),
      forbidden_backoff_(ForbiddenBackoff(), seed ^ 0x5bd1e995ULL) {}

void ApiRetryPolicy::OnSuccess() {
  token_reloaded_ = false;
  forbidden_since_ = TimePoint::max();
  forbidden_backoff_.Reset();
}

ApiDecision ApiRetryPolicy::Decide(const Status& why, TimePoint now,
                                   bool after_fresh_list) {
  // The classes are the one classifier's (ClassifyForRetry); the actions
  // and their state are what API calls add to them.
  switch (ClassifyForRetry(why.code())) {
    case RetryClass::kRelist: {
      // 410 arrives as an HTTP status or an in-stream ERROR event; both
      // mean the version left the server's history: relist.
      ApiDecision d = Decision(ApiAction::kRelist, Duration::zero(), why);
      if (after_fresh_list) {
        d.delay = backoff_.Next(now);
        d.consistent_list = true;
      }
      return d;
    }
    case RetryClass::kReauthenticate:
      // Projected service-account tokens rotate: re-read once, retry.
      if (token_reloaded_) {
        return Decision(
            ApiAction::kFail, Duration::zero(),
            why.WithContext(
                "still rejected after reloading the credential (the token "
                "file re-read, or the exec plugin run again)"));
      }
      token_reloaded_ = true;
      return Decision(ApiAction::kReloadToken, Duration::zero(), why);
    case RetryClass::kMaybeCatchingUp: {
      if (forbidden_since_ == TimePoint::max()) forbidden_since_ = now;
      TimePoint end = forbidden_since_ + kForbiddenWindow;
      if (now >= end) return Decision(ApiAction::kFail, Duration::zero(), why);
      Duration delay = std::min(forbidden_backoff_.Next(now), end - now);
      return Decision(ApiAction::kRetry, delay,
                      why.WithContext("RBAC may still be catching up; "
                                      "retrying for up to " +
                                      FormatDuration(end - now)));
    }
    case RetryClass::kBackoff: {
      // The server's Retry-After is a floor: never come back sooner, and
      // add jitter (see Backoff::NextAfter) so that agents refused at the
      // same moment do not all return at the same moment.
      Duration delay = backoff_.NextAfter(why.retry_after(), now);
      return Decision(ApiAction::kRetry, delay, why);
    }
    case RetryClass::kNone:
    case RetryClass::kFail:
      return Decision(ApiAction::kFail, Duration::zero(), why);
  }
  return Decision(ApiAction::kFail, Duration::zero(), why);
}

}  // namespace k8s_agent::kube
