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

namespace {

// The kind of failure, in the words a person searches for.
std::string FailureKind(const ApiHealth* api) {
  if (api == nullptr || api->last_error().ok()) {
    return "no response (the connection or the request hangs)";
  }
  const std::string& m = api->last_error().message();
  auto has = [&m](const char* s) { return m.find(s) != std::string::npos; };
  std::string kind = "failed";
  if (has("refused")) {
    kind = "connection refused";
  } else if (has("connect to server") || has("Couldn't connect")) {
    // libcurl 8 no longer says "refused": refused or unreachable.
    kind = "could not connect (connection refused or host unreachable)";
  } else if (has("resolve")) {
    kind = "host name not resolved";
  } else if (has("SSL") || has("TLS")) {
    kind = "TLS handshake failed";
  } else if (has("timed out") || has("Timeout") || has("too slow")) {
    kind = "timed out";
  }
  return kind + ": " + m;
}

}  // namespace

Status CheckFirstAnswer(bool answered, TimePoint started, Duration budget,
                        TimePoint now, const std::string& server,
                        const ApiHealth* api) {
  if (answered || now - started < budget) return OkStatus();
  return UnavailableError(
      "the API server " + server + " never answered within " +
      FormatDuration(budget) + " (" + FailureKind(api) +
      "); check --server, KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT or "
      "the kubeconfig's server (a slow server: raise "
      "--api-first-answer-timeout)");
}

}  // namespace k8s_agent::kube
