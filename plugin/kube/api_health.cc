// SPDX-License-Identifier: Apache-2.0
// ApiHealth: failure streaks of API requests, for messages.

#include "plugin/kube/api_health.h"

#include "plugin/base/strings.h"

namespace k8s_agent::kube {

void ApiHealth::Failed(const Status& why, TimePoint now) {
  if (failures_ == 0) since_ = now;
  ++failures_;
  last_error_ = why;
}

void ApiHealth::Answered() {
  failures_ = 0;
  last_error_ = OkStatus();
}

std::string ApiHealth::Describe(TimePoint now) const {
  if (!troubled()) return "the API server is answering";
  // One wording for refused, reset, 5xx, 429, HTML and oversized answers:
  // the last error says which.
  return "no usable answer from the API server for " +
         FormatDuration(now - since_) + " (" + std::to_string(failures_) +
         " failed request" + (failures_ == 1 ? "" : "s") +
         "; last error: " + last_error_.message() + ")";
}

const ApiHealth* ApiHealth::Worst(const ApiHealth* a, const ApiHealth* b) {
  bool ta = a != nullptr && a->troubled();
  bool tb = b != nullptr && b->troubled();
  if (ta && tb) return a->since() <= b->since() ? a : b;
  if (ta) return a;
  if (tb) return b;
  return nullptr;
}

}  // namespace k8s_agent::kube
