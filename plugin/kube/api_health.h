// SPDX-License-Identifier: Apache-2.0
// Whether the API server has been answering: so that waiting for a pod is
// never mistaken for waiting for an API server that is down.

#ifndef K8S_AGENT_PLUGIN_KUBE_API_HEALTH_H_
#define K8S_AGENT_PLUGIN_KUBE_API_HEALTH_H_

#include <string>

#include "plugin/base/clock.h"
#include "plugin/base/status.h"

namespace k8s_agent::kube {

/// Failed requests since the last good answer. While any are counted, what
/// the agent last saw of a pod may be stale, and messages must blame the
/// API server, not the pod.
class ApiHealth {
 public:
  /// A request failed and will be retried (refused, reset, 5xx, 429, a
  /// malformed answer, a timeout).
  void Failed(const Status& why, TimePoint now);
  /// The server gave a usable answer (a list, a watch event, a clean end).
  void Answered();

  bool troubled() const { return failures_ > 0; }
  /// First failure since the last good answer (troubled() only).
  TimePoint since() const { return since_; }
  int failures() const { return failures_; }
  const Status& last_error() const { return last_error_; }

  /// "no usable answer from the API server for 24.9s (3 failed requests;
  /// last error: ...)".
  std::string Describe(TimePoint now) const;

  /// The more telling of two trackers: the troubled one, the longer
  /// troubled if both; nullptr when neither is.
  static const ApiHealth* Worst(const ApiHealth* a, const ApiHealth* b);

 private:
  TimePoint since_{};
  int failures_ = 0;
  Status last_error_;
};

/// The wait is over when the API server has not answered once within
/// `budget` of `started` (kubectl fails in a fraction of a second against
/// a dead server; waiting out --timeout would hide a wrong --server for
/// ten minutes). OK while within the budget or once `answered`; otherwise
/// kUnavailable naming `server`, what failed (from `api`, which may be
/// nullptr while the first request still hangs) and what to check.
Status CheckFirstAnswer(bool answered, TimePoint started, Duration budget,
                        TimePoint now, const std::string& server,
                        const ApiHealth* api);

}  // namespace k8s_agent::kube

#endif  // K8S_AGENT_PLUGIN_KUBE_API_HEALTH_H_
