// SPDX-License-Identifier: Apache-2.0
// The one retry policy for pods API calls: retry, relist, reload the token
// or fail, as client-go's reflector decides after a failed list or watch.

#ifndef K8S_AGENT_PLUGIN_KUBE_API_RETRY_H_
#define K8S_AGENT_PLUGIN_KUBE_API_RETRY_H_

#include <cstdint>

#include "plugin/base/backoff.h"
#include "plugin/base/clock.h"
#include "plugin/base/status.h"

namespace k8s_agent::kube {

/// What the caller does next after a failed API call.
enum class ApiAction {
  kRetry,        ///< Wait `delay`, then repeat the call (same resourceVersion).
  kRelist,       ///< The resourceVersion is gone: list again after `delay`.
  kReloadToken,  ///< Re-read the token file, then repeat the call at once.
  kFail,         ///< It will not heal: stop with `status`.
};

struct ApiDecision {
  ApiAction action = ApiAction::kFail;
  Duration delay{};
  /// kRelist only: list from etcd (no resourceVersion) rather than from
  /// the watch cache (resourceVersion=0), because a cached list's version
  /// was just refused (client-go's isLastSyncResourceVersionUnavailable).
  bool consistent_list = false;
  /// kFail: the final error. Otherwise the cause, for -v.
  Status status;
};

/// Classifies failures of one consumer's API calls (a pod watch, a host's
/// lookup) and keeps the little state the rules need:
///
///   410 Expired/Gone          kRelist (at once; after backoff when the
///                             version came from a list just made)
///   401                       kReloadToken once, then kFail
///   403                       kRetry for kForbiddenWindow, then kFail
///   429, 5xx, refused, reset  kRetry after backoff or Retry-After
///   anything else             kFail: RBAC, TLS, bad input, malformed or
///                             too-large answers do not heal by retrying
///
/// A 403 right after an API server starts (or a RoleBinding is created)
/// can be RBAC's caches catching up: the same request is allowed
/// milliseconds later. So a 403 is retried with a short backoff, bounded
/// by a window from the first 403 of a run without success.
class ApiRetryPolicy {
 public:
  /// How long 403s are retried before they count as a real RBAC gap.
  /// RBAC's informers see a new binding within about a second; three
  /// seconds covers a loaded server and still reports a missing grant
  /// quickly.
  static constexpr Duration kForbiddenWindow = std::chrono::seconds(3);

  explicit ApiRetryPolicy(uint64_t seed);

  /// `after_fresh_list`: the failed call was a list, or a watch from a
  /// list's version with no event since, so an immediate relist could loop.
  ApiDecision Decide(const Status& why, TimePoint now,
                     bool after_fresh_list = false);
  /// Any successful answer: the credentials and RBAC work again.
  void OnSuccess();

 private:
  Backoff backoff_;
  Backoff forbidden_backoff_;
  bool token_reloaded_ = false;
  TimePoint forbidden_since_ = TimePoint::max();
};

}  // namespace k8s_agent::kube

#endif  // K8S_AGENT_PLUGIN_KUBE_API_RETRY_H_
